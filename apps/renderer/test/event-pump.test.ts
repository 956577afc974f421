import { describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { BUSY_NOTIFY_MS, EventPump, FRAME_BUDGET_MS, LATE_MS, SLOW_FRAMES, SLOW_HOLD_MS, SLOW_WINDOW_MS, type FrameScheduler } from '../store/event-pump.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';

/** A scheduler whose frames run only when the test says so. */
function manualFrames() {
  let queue: ((t: number) => void)[] = [];
  let now = 0;
  const sched: FrameScheduler = { request: (cb) => queue.push(cb), now: () => now, hidden: () => false };
  return {
    sched,
    advance(ms: number) {
      now += ms;
    },
    frame() {
      const q = queue;
      queue = [];
      for (const cb of q) cb(now);
    },
    get requested() {
      return queue.length;
    },
  };
}

function events(n: number): BuildEvent[] {
  const w = new StreamWriter();
  const id = w.start('A', null, n);
  for (let s = 0; s < n - 1; s++) w.step(id, s);
  return w.events;
}

describe('EventPump', () => {
  it('applies events as they arrive, and tells the UI once, in the next frame', () => {
    const f = manualFrames();
    const applied: number[] = [];
    let notified = 0;
    const pump = new EventPump(
      f.sched,
      (b) => applied.push(b.length),
      () => notified++,
    );
    const evs = events(1000);
    for (let i = 0; i < evs.length; i += 10) pump.push(evs.slice(i, i + 10));
    // The view is current before any frame (the frame's own work is rendering only) ...
    expect(applied.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(notified).toBe(0);
    expect(f.requested).toBe(1); // ... and one frame is requested, however many batches came
    f.frame();
    expect(notified).toBe(1);
    f.frame();
    expect(notified).toBe(1); // nothing new, no re-render
    expect(f.requested).toBe(0);
  });

  it('applies everything at once when the queue gets huge (arrivals too slow to apply, no frames: a background tab)', () => {
    const f = manualFrames();
    const applied: number[] = [];
    // Each slice spends an arrival's whole budget: every push of 10,000 leaves 7,952 queued.
    const pump = new EventPump(
      f.sched,
      (b) => {
        applied.push(b.length);
        f.advance(FRAME_BUDGET_MS);
      },
      () => undefined,
    );
    const evs = events(100_000);
    let most = 0;
    for (let i = 0; i < evs.length; i += 10_000) {
      pump.push(evs.slice(i, i + 10_000));
      most = Math.max(most, pump.pendingCount);
    }
    expect(most).toBeLessThan(50_000);
    expect(applied.reduce((a, b) => a + b, 0) + pump.pendingCount).toBe(100_000);
    expect(applied.reduce((a, b) => a + b, 0)).toBeGreaterThan(50_000);
  });

  it('reports arrival → painted-frame latency per batch to a probe', () => {
    const f = manualFrames();
    const seen: [number, number][] = [];
    const pump = new EventPump(
      f.sched,
      () => undefined,
      () => undefined,
    );
    pump.probe = { painted: (arr, counts, at) => arr.forEach((a, i) => seen.push([at - a, counts[i]])) };
    pump.push(events(5));
    f.advance(4);
    pump.push(events(3));
    f.advance(12);
    f.frame(); // applies both batches
    expect(seen).toEqual([]);
    f.advance(16);
    f.frame(); // the frame after: the applied one has been painted
    expect(seen).toEqual([
      [32, 5],
      [28, 3],
    ]);
  });

  it('spreads a burst over its arrival and the frames after it within the time budget, in order, without losing events', () => {
    const f = manualFrames();
    const seqs: number[] = [];
    let notified = 0;
    // Every apply call costs 1 ms of (manual) clock time.
    const pump = new EventPump(
      f.sched,
      (b) => {
        for (const e of b) seqs.push(e.seq);
        f.advance(1);
      },
      () => notified++,
    );
    // One burst (a replay) of twenty slices of 2,048.
    const evs = events(40_960);
    pump.push(evs);
    // Slices of 2,048 at 1 ms each: the budget stops the arrival after FRAME_BUDGET_MS slices.
    expect(seqs.length).toBe(FRAME_BUDGET_MS * 2048);
    expect(pump.pendingCount).toBe(40_960 - seqs.length);
    expect(notified).toBe(0);
    expect(f.requested).toBe(1); // the rest is due next frame without any new push
    let frames = 0;
    while (f.requested > 0) {
      f.frame();
      frames++;
    }
    expect(seqs).toEqual(evs.map((e) => e.seq)); // all of them, in arrival order, once
    expect(pump.pendingCount).toBe(0);
    // The arrival (t 0 → 6) and frame 1 (t=6, to 12) stop at the budget; by frame 2 (t=12) the
    // events have waited LATE_MS, so it applies past the budget (up to LATE_CAP_MS) and finishes
    // the burst. Each frame tells the UI once.
    expect(LATE_MS).toBe(2 * FRAME_BUDGET_MS);
    expect(notified).toBe(2);
    expect(frames).toBe(2);
  });

  it('does not let a steady stream that needs more than the budget fall behind frame after frame', () => {
    const f = manualFrames();
    let applied = 0;
    // Each slice of 2,048 events costs 1 ms; every 16 ms frame brings 10 slices (10 ms of work,
    // more than FRAME_BUDGET_MS, well under LATE_CAP_MS).
    const pump = new EventPump(
      f.sched,
      (b) => {
        applied += b.length;
        f.advance(b.length / 2048);
      },
      () => undefined,
    );
    const perFrame = 10 * 2048;
    let pushed = 0;
    let worstBacklog = 0;
    for (let frame = 0; frame < 60; frame++) {
      pump.push(events(perFrame));
      pushed += perFrame;
      f.frame();
      worstBacklog = Math.max(worstBacklog, pump.pendingCount);
      f.advance(16);
    }
    // With only the fixed budget the backlog grew by 4 slices a frame until MAX_PENDING forced a
    // drain (one long frame); now it never exceeds one frame's arrivals.
    expect(worstBacklog).toBeLessThanOrEqual(perFrame);
    expect(applied + pump.pendingCount).toBe(pushed);
  });

  it('applies the rest of a partly applied batch on flushNow', () => {
    const f = manualFrames();
    const seqs: number[] = [];
    const pump = new EventPump(
      f.sched,
      (b) => {
        for (const e of b) seqs.push(e.seq);
        f.advance(FRAME_BUDGET_MS); // one slice spends the whole budget
      },
      () => undefined,
    );
    const evs = events(5000);
    pump.push(evs); // the arrival applies one slice, and its budget is spent
    expect(seqs.length).toBe(2048);
    pump.flushNow();
    expect(seqs).toEqual(evs.map((e) => e.seq));
    expect(pump.pendingCount).toBe(0);
  });

  it('reports to the probe what was applied, split batches included, at the paint of the frame that showed it', () => {
    const f = manualFrames();
    const seen: [number, number][] = [];
    const pump = new EventPump(
      f.sched,
      () => f.advance(FRAME_BUDGET_MS),
      () => undefined,
    );
    pump.probe = { painted: (arr, counts, at) => arr.forEach((a, i) => seen.push([at - a, counts[i]])) };
    pump.push(events(3000)); // arrives at t=0, applies 2,048 (t 0 → 6)
    f.frame(); // t=6: applies the other 952 (t 6 → 12) and tells the UI of both parts
    expect(seen).toEqual([]);
    f.frame(); // t=12: both parts have been painted
    expect(seen).toEqual([
      [2 * FRAME_BUDGET_MS, 2048],
      [2 * FRAME_BUDGET_MS, 952],
    ]);
  });

  it('applies every frame but notifies at most once per notifyEveryMs, and never leaves a change untold', () => {
    const f = manualFrames();
    f.sched.notifyEveryMs = 25;
    let applied = 0;
    let notified = 0;
    const pump = new EventPump(
      f.sched,
      (b) => (applied += b.length),
      () => notified++,
    );
    pump.push(events(10));
    f.frame(); // t=0
    expect([applied, notified]).toEqual([10, 1]);
    f.advance(16);
    pump.push(events(10));
    f.frame(); // t=16: applied, but too soon to re-render
    expect([applied, notified]).toEqual([20, 1]);
    expect(f.requested).toBe(1); // the notification is still owed, with no further events
    f.advance(16);
    f.frame(); // t=32
    expect([applied, notified]).toEqual([20, 2]);
    f.advance(16);
    f.frame();
    expect(notified).toBe(2); // nothing new: no re-render
    expect(f.requested).toBe(0);
  });

  it('re-renders every frame while frames come on time, and less often for a while once frames keep coming late', () => {
    const f = manualFrames();
    let notified = 0;
    const pump = new EventPump(
      f.sched,
      () => undefined,
      () => notified++,
    );
    // Events arrive, the pump asks for a frame, and the frame comes `gap` ms later.
    const frameWithEvents = (gap: number) => {
      pump.push(events(5));
      f.advance(gap);
      f.frame();
    };
    pump.push(events(5));
    f.frame();
    for (let i = 0; i < 10; i++) frameWithEvents(16);
    expect(notified).toBe(11); // every frame
    // One late frame (a GC pause) is no sign of a page short of CPU: every frame still re-renders.
    frameWithEvents(40);
    let before = notified;
    // Past the window, so that the scattered late frames below start from none.
    const quiet = Math.ceil(SLOW_WINDOW_MS / 16);
    for (let i = 0; i < quiet; i++) frameWithEvents(16);
    expect(notified - before).toBe(quiet);
    // Late frames scattered wider than the window do not add up either.
    const spacing = Math.ceil(SLOW_WINDOW_MS / (SLOW_FRAMES - 1) / 16) + 1; // frames between two late ones
    before = notified;
    for (let k = 0; k < SLOW_FRAMES; k++) {
      frameWithEvents(40);
      for (let i = 0; i < spacing; i++) frameWithEvents(16);
    }
    expect(notified - before).toBe(SLOW_FRAMES * (spacing + 1));
    // SLOW_FRAMES late frames close together: the page is short of CPU.
    for (let k = 0; k < SLOW_FRAMES; k++) frameWithEvents(40);
    const afterLate = notified;
    for (let i = 0; i < 30; i++) frameWithEvents(16); // 480 ms, inside the hold
    // At most one re-render per BUSY_NOTIFY_MS (every fourth 16 ms frame) while held.
    expect(notified - afterLate).toBeLessThanOrEqual(Math.ceil((30 * 16) / BUSY_NOTIFY_MS));
    expect(notified - afterLate).toBeGreaterThan(0);
    for (let i = 0; i < Math.ceil(SLOW_HOLD_MS / 16); i++) frameWithEvents(16); // the hold runs out
    const settled = notified;
    for (let i = 0; i < 10; i++) frameWithEvents(16);
    expect(notified - settled).toBe(10); // every frame again
  });

  it('flushNow tells the UI about events applied but not yet notified', () => {
    const f = manualFrames();
    f.sched.notifyEveryMs = 25;
    let notified = 0;
    const pump = new EventPump(
      f.sched,
      () => undefined,
      () => notified++,
    );
    pump.push(events(5));
    f.frame();
    f.advance(5);
    pump.push(events(5));
    f.frame();
    expect(notified).toBe(1);
    pump.flushNow();
    expect(notified).toBe(2);
  });
});
