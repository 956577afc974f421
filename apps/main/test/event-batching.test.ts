import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Subscription } from '../../service/api.js';
import type { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { RendererBatcher, FRAME_MS } from '../renderer-batcher.js';
import { PUSH, type BuildStreamMessage } from '../ipc-channels.js';
import { SubscriptionHub, type StreamTarget } from '../subscription-hub.js';
import { viewFromRecord } from '../../shared/view-format.js';

const step = (seq: number): BuildEvent => ({ v: 1, buildId: 'b1', seq, t: seq, type: 'phase.step', id: 1, step: seq, stepsDone: seq + 1 });
const log = (seq: number): BuildEvent => ({ v: 1, buildId: 'b1', seq, t: seq, type: 'log', severity: 'info', message: `line ${seq}` });
const finished = (seq: number): BuildEvent => ({ v: 1, buildId: 'b1', seq, t: seq, type: 'build.finished', status: 'succeeded', durationMs: seq });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RendererBatcher', () => {
  it('sends at most once per budget under a continuous stream; only superseded steps are coalesced', () => {
    const sends: Array<{ at: number; events: BuildEvent[] }> = [];
    const b = new RendererBatcher((events) => sends.push({ at: performance.now(), events }));
    let seq = 0;
    const logs: number[] = [];
    // 100k events/s for one simulated second, pushed in 1 ms slices of 100: steps of one phase
    // with a log every tenth event.
    for (let i = 0; i < 1_000; i++) {
      b.push(
        Array.from({ length: 100 }, (_, k) => {
          if (k % 10 !== 0) return step(seq++);
          logs.push(seq);
          return { v: 1, buildId: 'b1', seq: seq++, t: 0, type: 'log', severity: 'info', message: 'x' } as BuildEvent;
        }),
      );
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(50);
    const all = sends.flatMap((s) => s.events);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((x, y) => x - y));
    expect(all.filter((e) => e.type === 'log').map((e) => e.seq)).toEqual(logs);
    expect(all.at(-1)).toMatchObject({ type: 'phase.step', seq: seq - 1 }); // the latest step survives
    expect(b.coalesced).toBe(seq - all.length);
    for (let i = 1; i < sends.length; i++) expect(sends[i].at - sends[i - 1].at).toBeGreaterThanOrEqual(FRAME_MS);
    // About one message per budget, not one per event.
    expect(sends.length).toBeGreaterThan((1000 / FRAME_MS) * 0.8);
    expect(sends.length).toBeLessThanOrEqual(1000 / FRAME_MS + 4);
  });

  it('waits for the next tick even for the first event, so a snapshot sent right after goes first', () => {
    const order: string[] = [];
    const b = new RendererBatcher(() => order.push('events'));
    b.push([step(0)]);
    order.push('snapshot');
    vi.advanceTimersByTime(0);
    expect(order).toEqual(['snapshot', 'events']);
  });

  it('flush sends what is pending at once; close drops it and ignores later pushes', () => {
    const deliver = vi.fn();
    const b = new RendererBatcher(deliver);
    b.push([step(0), step(1)]);
    b.flush();
    expect(deliver).toHaveBeenCalledTimes(1);
    b.push([step(2)]);
    b.close();
    b.push([step(3)]);
    vi.advanceTimersByTime(100);
    expect(deliver).toHaveBeenCalledTimes(1);
  });
});

describe('SubscriptionHub', () => {
  const snapshot = (extra: Partial<BuildRecord> = {}): BuildRecord => ({
    id: 'b1',
    state: 'running',
    modelPath: '/m.onnx',
    options: { backend: 'simulated' },
    queuedAt: '1970-01-01T00:00:00.000Z',
    lastSeq: 4,
    phases: [],
    engineAvailable: false,
    ...extra,
  });

  /** `early`: delivered before subscribe() returns, as an in-process host may. */
  function fakeService(record = snapshot(), early: BuildEvent[] = []) {
    let emit: ((e: BuildEvent[]) => void) | null = null;
    const unsubscribe = vi.fn();
    return {
      unsubscribe,
      emit: (e: BuildEvent[]) => emit?.(e),
      subscribe: vi.fn((id: string, onEvents: (e: BuildEvent[]) => void): Subscription => {
        if (id !== 'b1') throw new Error(`unknown build ${id}`);
        emit = onEvents;
        if (early.length > 0) onEvents(early);
        return { snapshot: record, view: viewFromRecord(record).snapshot(), reset: false, unsubscribe };
      }),
    };
  }

  /** A page: records what it is sent and, once given its hub, acknowledges each events message at once. */
  function target(id = 1) {
    const sent: BuildStreamMessage[] = [];
    const t: StreamTarget & { sent: BuildStreamMessage[]; destroyed: boolean; hub?: SubscriptionHub } = {
      id,
      sent,
      destroyed: false,
      send: (channel, msg) => {
        expect(channel).toBe(PUSH.buildStream);
        sent.push(msg);
        if (msg.kind === 'events') t.hub?.ack(id, msg.subscriptionId, msg.batch);
      },
      isDestroyed: () => t.destroyed,
    };
    return t;
  }

  it('sends the snapshot first, then batches, and lets go after build.finished', async () => {
    const svc = fakeService();
    const hub = new SubscriptionHub(svc);
    const t = target();
    t.hub = hub;
    hub.open(t, 's1', 'b1');
    svc.emit([step(5), step(6)]);
    svc.emit([step(7)]);
    await vi.advanceTimersByTimeAsync(16);
    svc.emit([finished(8)]);
    await vi.advanceTimersByTimeAsync(16);
    expect(t.sent.map((m) => m.kind)).toEqual(['snapshot', 'events', 'events']);
    // Steps of one phase that waited together arrive as the latest one.
    expect(t.sent[1]).toEqual({ subscriptionId: 's1', kind: 'events', batch: 1, events: [step(7)] });
    expect(svc.unsubscribe).toHaveBeenCalledTimes(1);
    expect(hub.size).toBe(0);
  });

  it('keeps the snapshot first and every event once when delivery overlaps the snapshot', () => {
    // The snapshot is at seq 4: 3 and 4 are in it, 5 came early, then a replay repeats 5.
    const svc = fakeService(snapshot(), [log(3), log(4), log(5)]);
    const hub = new SubscriptionHub(svc);
    const t = target();
    hub.open(t, 's1', 'b1');
    svc.emit([log(5), log(6)]);
    svc.emit([log(6), finished(7)]);
    vi.advanceTimersByTime(16);
    expect(t.sent.map((m) => m.kind)).toEqual(['snapshot', 'events']);
    expect(t.sent[1].kind === 'events' && t.sent[1].events.map((e) => e.seq)).toEqual([5, 6, 7]);
    expect(hub.size).toBe(0);
  });

  it('streams nothing more for a build that had already finished', () => {
    const svc = fakeService(snapshot({ state: 'succeeded', outcome: { v: 1, buildId: 'b1', seq: 9, t: 9, type: 'build.finished', status: 'succeeded', durationMs: 9 } }));
    const hub = new SubscriptionHub(svc);
    const t = target();
    hub.open(t, 's1', 'b1');
    expect(t.sent.map((m) => m.kind)).toEqual(['snapshot']);
    expect(svc.unsubscribe).toHaveBeenCalled();
    expect(hub.size).toBe(0);
  });

  it('registers nothing when the service refuses the subscription', () => {
    const hub = new SubscriptionHub(fakeService());
    const t = target();
    expect(() => hub.open(t, 's1', 'nope')).toThrow('unknown build nope');
    expect(hub.size).toBe(0);
    expect(t.sent).toEqual([]);
  });

  it("releases a window's subscriptions when it goes away, and stops sending to a destroyed one", () => {
    const svc = fakeService();
    const hub = new SubscriptionHub(svc);
    const a = target(1);
    const b = target(2);
    hub.open(a, 's1', 'b1');
    hub.open(a, 's2', 'b1');
    hub.open(b, 's1', 'b1');
    hub.closeAllFor(1);
    expect(hub.size).toBe(1);
    expect(svc.unsubscribe).toHaveBeenCalledTimes(2);
    b.destroyed = true;
    svc.emit([step(5)]);
    vi.advanceTimersByTime(16);
    expect(b.sent.map((m) => m.kind)).toEqual(['snapshot']);
    expect(hub.size).toBe(0);
  });

  it('replaces a subscription id reused by a reloaded page instead of leaking it', () => {
    const svc = fakeService();
    const hub = new SubscriptionHub(svc);
    const t = target();
    hub.open(t, 's1', 'b1');
    hub.open(t, 's1', 'b1');
    expect(hub.size).toBe(1);
    expect(svc.unsubscribe).toHaveBeenCalledTimes(1);
  });
});
