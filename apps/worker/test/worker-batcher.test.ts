// The worker's event batching (the shared PacingBatcher): at most one message per budget or per
// 500 events, and the first event after a quiet spell goes out at once (a heartbeat after a
// silent stretch is not delayed).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { BATCH_INTERVAL_MS, BATCH_MAX_EVENTS, IpcBatcher } from '../ipc-batcher.js';

const ev = (seq: number): BuildEvent => ({ v: 1, buildId: 'b', seq, t: seq, type: 'log', severity: 'info', message: String(seq) });

describe('IpcBatcher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends the first event at once, then holds the rest for one interval', () => {
    const sent: BuildEvent[][] = [];
    const b = new IpcBatcher((x) => sent.push(x));
    b.push([ev(1)]);
    expect(sent).toEqual([[ev(1)]]);
    b.push([ev(2)]);
    b.push([ev(3)]);
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(BATCH_INTERVAL_MS);
    expect(sent).toEqual([[ev(1)], [ev(2), ev(3)]]);
    // Quiet for a while: the next event is not delayed.
    vi.advanceTimersByTime(1000);
    b.push([ev(4)]);
    expect(sent[2]).toEqual([ev(4)]);
  });

  it('never sends more than BATCH_MAX_EVENTS per message and loses nothing', () => {
    const sent: BuildEvent[][] = [];
    const b = new IpcBatcher((x) => sent.push(x));
    b.push([ev(0)]);
    const many = Array.from({ length: 1234 }, (_, i) => ev(i + 1));
    b.push(many);
    vi.advanceTimersByTime(BATCH_INTERVAL_MS);
    b.flush();
    expect(sent.every((s) => s.length <= BATCH_MAX_EVENTS)).toBe(true);
    expect(sent.flat().map((e) => e.seq)).toEqual(Array.from({ length: 1235 }, (_, i) => i));
  });

  it('sends nothing more while a batch is in flight, coalescing steps meanwhile; nothing structural lost', async () => {
    vi.useRealTimers();
    const sent: BuildEvent[][] = [];
    let release!: () => void;
    const b = new IpcBatcher((x) => {
      sent.push(x);
      return sent.length === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
    });
    const base = { v: 1 as const, buildId: 'b', t: 0 };
    b.push([{ ...base, seq: 0, type: 'phase.start', id: 1, parentId: null, name: 'A', nbSteps: 9000, instance: 0 }]);
    expect(sent).toHaveLength(1);
    let seq = 1;
    for (let i = 0; i < 5000; i++) {
      b.push([{ ...base, seq: seq++, type: 'phase.step', id: 1, step: i, stepsDone: i + 1 }]);
      if (i % 10 === 0) b.push([{ ...base, seq: seq++, type: 'log', severity: 'info', message: String(i) }]);
    }
    await new Promise((r) => setTimeout(r, 3 * BATCH_INTERVAL_MS));
    expect(sent).toHaveLength(1); // held back: the first message has not left yet
    expect(b.coalesced).toBe(4999);
    release();
    await new Promise((r) => setTimeout(r, 50));
    const all = sent.flat();
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((x, y) => x - y));
    expect(all.filter((e) => e.type === 'log')).toHaveLength(500);
    expect(all.filter((e) => e.type === 'phase.step')).toEqual([expect.objectContaining({ stepsDone: 5000 })]);
    expect(sent.every((m) => m.length <= BATCH_MAX_EVENTS)).toBe(true);
  });
});
