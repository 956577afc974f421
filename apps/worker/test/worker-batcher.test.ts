// The worker's event batching: at most one message per ~16 ms or per 500 events, and the first
// event after a quiet spell goes out at once (a heartbeat after a silent stretch is not delayed).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { BATCH_INTERVAL_MS, BATCH_MAX_EVENTS, EventBatcher } from '../event-batcher.js';

const ev = (seq: number): BuildEvent => ({ v: 1, buildId: 'b', seq, t: seq, type: 'log', severity: 'info', message: String(seq) });

describe('EventBatcher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends the first event at once, then holds the rest for one interval', () => {
    const sent: BuildEvent[][] = [];
    const b = new EventBatcher((x) => sent.push(x));
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
    const b = new EventBatcher((x) => sent.push(x));
    b.push([ev(0)]);
    const many = Array.from({ length: 1234 }, (_, i) => ev(i + 1));
    b.push(many);
    vi.advanceTimersByTime(BATCH_INTERVAL_MS);
    b.flush();
    expect(sent.every((s) => s.length <= BATCH_MAX_EVENTS)).toBe(true);
    expect(sent.flat().map((e) => e.seq)).toEqual(Array.from({ length: 1235 }, (_, i) => i));
  });
});
