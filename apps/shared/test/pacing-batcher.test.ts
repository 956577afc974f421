// The one pacing policy: quiet streams are not delayed, busy ones cost at most one batch per budget,
// and chained hops pay the budget once (the native flusher already paces by it).
import { describe, expect, it } from 'vitest';
import { EVENT_LINE_OBJECT_BYTES, EVENT_OBJECT_BYTES } from '../event-bytes.js';
import { EventLine, encodeEventLines, type WireEvent } from '../event-lines.js';
import { PACING_BUDGET_MS, PacingBatcher, type PacingTimers } from '../pacing-batcher.js';
import type { BuildEvent } from '../protocol.js';

/** A manual clock: timers run in due order when the test advances time. */
function manualTimers() {
  let now = 0;
  let nextId = 0;
  const due = new Map<number, { at: number; fn: () => void }>();
  const timers: PacingTimers = {
    now: () => now,
    setTimeout: (fn, ms) => {
      due.set(++nextId, { at: now + ms, fn });
      return nextId;
    },
    clearTimeout: (h) => void due.delete(h as number),
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const next = [...due.entries()].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next || next[1].at > end) break;
      due.delete(next[0]);
      now = next[1].at;
      next[1].fn();
    }
    now = end;
  };
  return { timers, advance, now: () => now };
}

const log = (seq: number): BuildEvent => ({ v: 1, buildId: 'b', seq, t: seq, type: 'log', severity: 'info', message: String(seq) });
const step = (seq: number, id = 1): BuildEvent => ({ v: 1, buildId: 'b', seq, t: seq, type: 'phase.step', id, step: seq, stepsDone: seq + 1 });

describe('PacingBatcher', () => {
  it('coalesces hot events that arrive as text (EventLine) as it does their objects, and sends their text unchanged', () => {
    const clock = manualTimers();
    let release!: () => void;
    const sent: string[][] = [];
    const b = new PacingBatcher<WireEvent>(
      (e) => {
        sent.push(encodeEventLines(e));
        return new Promise<void>((r) => (release = r));
      },
      { timers: clock.timers },
    );
    const line = (type: EventLine['type'], id: number, seq: number) => new EventLine(type, id, `{"seq":${seq},"type":"${type}","id":${id}}`);
    b.push([log(0)]); // out at once; in flight
    b.push([line('phase.start', 7, 1), line('phase.step', 7, 2), line('phase.step', 7, 3), line('phase.step', 8, 4), line('phase.finish', 8, 5), log(6)]);
    // Step 7/2 gave way to 7/3; step 8/4 to its finish.
    expect(b.waiting).toBe(4);
    expect(b.coalesced).toBe(2);
    const lineBytes = (seq: number, type: EventLine['type'], id: number) => EVENT_LINE_OBJECT_BYTES + line(type, id, seq).line.length;
    expect(b.waitingBytes).toBe(lineBytes(1, 'phase.start', 7) + lineBytes(3, 'phase.step', 7) + lineBytes(5, 'phase.finish', 8) + EVENT_OBJECT_BYTES + 2);
    release();
    return Promise.resolve().then(() => {
      clock.advance(PACING_BUDGET_MS);
      expect(sent[1]).toEqual([line('phase.start', 7, 1).line, line('phase.step', 7, 3).line, line('phase.finish', 8, 5).line, JSON.stringify(log(6))]);
    });
  });

  it('waitingBytes follows what waits: text counted, coalesced steps and sent events leave it', () => {
    const clock = manualTimers();
    let release!: () => void;
    const sent: number[][] = [];
    const b = new PacingBatcher(
      (e) => {
        sent.push(e.map((x) => x.seq));
        return new Promise<void>((r) => (release = r)); // a receiver that has not taken it yet
      },
      { timers: clock.timers },
    );
    b.push([log(0)]); // goes out at once; in flight
    expect(b.waitingBytes).toBe(0);
    const long: BuildEvent = { v: 1, buildId: 'b', seq: 1, t: 1, type: 'log', severity: 'verbose', message: 'y'.repeat(500) };
    b.push([long, step(2), step(3), step(4)]);
    // The log with its text, one step (the two older ones coalesced away).
    expect(b.waiting).toBe(2);
    expect(b.waitingBytes).toBe(EVENT_OBJECT_BYTES + 1000 + EVENT_OBJECT_BYTES);
    expect(b.peakPendingBytes).toBeGreaterThanOrEqual(b.waitingBytes);
    release();
    return Promise.resolve().then(() => {
      clock.advance(PACING_BUDGET_MS);
      expect(sent).toEqual([[0], [1, 4]]);
      expect(b.waitingBytes).toBe(0);
    });
  });

  it('sends an event of a quiet stream at once', () => {
    const clock = manualTimers();
    const sent: Array<{ at: number; seqs: number[] }> = [];
    const b = new PacingBatcher((e) => void sent.push({ at: clock.now(), seqs: e.map((x) => x.seq) }), { timers: clock.timers });
    b.push([log(0)]);
    clock.advance(100);
    b.push([log(1)]);
    expect(sent).toEqual([
      { at: 0, seqs: [0] },
      { at: 100, seqs: [1] },
    ]);
  });

  it('under load sends one batch per budget, coalescing steps and losing nothing else', () => {
    const clock = manualTimers();
    const sent: Array<{ at: number; events: BuildEvent[] }> = [];
    const b = new PacingBatcher((e) => void sent.push({ at: clock.now(), events: e }), { timers: clock.timers });
    let seq = 0;
    for (let ms = 0; ms < 200; ms++) {
      b.push([step(seq++), log(seq++), step(seq++, 2)]);
      clock.advance(1);
    }
    clock.advance(PACING_BUDGET_MS);
    for (let i = 1; i < sent.length; i++) expect(sent[i].at - sent[i - 1].at).toBeGreaterThanOrEqual(PACING_BUDGET_MS);
    expect(sent.length).toBeGreaterThanOrEqual(200 / PACING_BUDGET_MS);
    const all = sent.flatMap((s) => s.events);
    expect(all.filter((e) => e.type === 'log')).toHaveLength(200);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((x, y) => x - y));
    const lastSteps = all
      .filter((e) => e.type === 'phase.step')
      .slice(-2)
      .map((e) => e.seq);
    expect(lastSteps).toEqual([seq - 3, seq - 1]); // the latest step of each phase arrives
    expect(b.coalesced).toBe(seq - all.length);
  });

  it('a hop behind a paced source adds no delay: the budget is paid once', () => {
    const clock = manualTimers();
    const arrivals: Array<{ seq: number; at: number }> = [];
    const downstream = new PacingBatcher((e) => void e.forEach((x) => arrivals.push({ seq: x.seq, at: clock.now() })), { timers: clock.timers });
    const upstream = new PacingBatcher((e) => downstream.push(e), { timers: clock.timers });
    const madeAt = new Map<number, number>();
    for (let seq = 0; seq < 300; seq++) {
      madeAt.set(seq, clock.now());
      upstream.push([log(seq)]);
      clock.advance(1);
    }
    clock.advance(2 * PACING_BUDGET_MS);
    expect(arrivals).toHaveLength(300);
    const worst = Math.max(...arrivals.map((a) => a.at - madeAt.get(a.seq)!));
    expect(worst).toBeLessThanOrEqual(PACING_BUDGET_MS);
  });

  it('holds further batches while a send is in flight, then sends what coalesced', async () => {
    const sent: BuildEvent[][] = [];
    let release!: () => void;
    const b = new PacingBatcher((e) => {
      sent.push(e);
      return sent.length === 1 ? new Promise<void>((r) => (release = r)) : undefined;
    });
    b.push([log(0)]);
    for (let i = 1; i <= 100; i++) b.push([step(i)]);
    await new Promise((r) => setTimeout(r, 3 * PACING_BUDGET_MS));
    expect(sent).toHaveLength(1);
    release();
    await new Promise((r) => setTimeout(r, 3 * PACING_BUDGET_MS));
    expect(
      sent
        .slice(1)
        .flat()
        .map((e) => e.seq),
    ).toEqual([100]);
  });

  it("'next-tick' lets a synchronous follower go first; close drops what waits", () => {
    const clock = manualTimers();
    const order: string[] = [];
    const b = new PacingBatcher(() => void order.push('events'), { timers: clock.timers, leadingEdge: 'next-tick' });
    b.push([log(0)]);
    order.push('snapshot');
    clock.advance(0);
    expect(order).toEqual(['snapshot', 'events']);
    b.push([log(1)]);
    b.close();
    b.push([log(2)]);
    clock.advance(100);
    expect(order).toEqual(['snapshot', 'events']);
  });
});
