import { describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { EventPump, type FrameScheduler } from '../store/event-pump.js';
import { StreamWriter } from './synthetic-build.js';

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
  it('applies everything that arrived since the last frame in one go, and notifies once', () => {
    const f = manualFrames();
    const applied: number[] = [];
    let notified = 0;
    const pump = new EventPump(f.sched, (b) => applied.push(b.length), () => notified++);
    const evs = events(1000);
    for (let i = 0; i < evs.length; i += 10) pump.push(evs.slice(i, i + 10));
    expect(applied).toEqual([]);
    expect(f.requested).toBe(1); // one frame requested, however many batches came
    f.frame();
    expect(applied.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(notified).toBe(1);
    f.frame();
    expect(notified).toBe(1); // nothing new, no re-render
  });

  it('applies at once when the queue gets huge (no frames, e.g. a background tab)', () => {
    const f = manualFrames();
    const applied: number[] = [];
    const pump = new EventPump(f.sched, (b) => applied.push(b.length), () => undefined);
    const evs = events(60_000);
    for (let i = 0; i < evs.length; i += 1000) pump.push(evs.slice(i, i + 1000));
    expect(applied.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(50_000);
    expect(pump.pendingCount).toBeLessThan(50_000);
  });

  it('reports arrival → painted-frame latency per batch to a probe', () => {
    const f = manualFrames();
    const seen: [number, number][] = [];
    const pump = new EventPump(f.sched, () => undefined, () => undefined);
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
});
