// The renderer hop's byte bound: the hub sends a page one events message at a time, each
// acknowledged, and tells the service it is busy meanwhile, so a page that stalls makes the
// service's own subscriber backlog (steps coalesced, bounded in bytes) hold what waits, and drop
// the subscription past its bound; the hub follows the build again, from a snapshot, once the page
// answers. Real service feed (BuildFeed, SubscriberBacklog), a fake webContents (no Electron binary
// here) whose acknowledgements the test controls.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BuildFeed } from '../../service/build-feed.js';
import type { Subscription } from '../../service/api.js';
import { LiveView } from '../../shared/live-view.js';
import type { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { PUSH, type BuildStreamMessage } from '../ipc-channels.js';
import { SubscriptionHub, type StreamTarget } from '../subscription-hub.js';

const B = 'b-page';
const record: BuildRecord = {
  id: B,
  state: 'running',
  modelPath: '/m.onnx',
  options: { backend: 'simulated' },
  queuedAt: '1970-01-01T00:00:00.000Z',
  lastSeq: -1,
  phases: [],
  engineAvailable: false,
};

/** The service's subscribe() over a real feed (what BuildService.subscribe does for a local build). */
function serviceOver(feed: BuildFeed) {
  return {
    subscribe(id: string, onEvents: (events: BuildEvent[]) => unknown, opts?: Parameters<BuildFeed['subscribe']>[1]): Subscription {
      if (id !== B) throw new Error(`unknown build ${id}`);
      const sub = feed.subscribe(onEvents, opts);
      return { snapshot: { ...record, lastSeq: sub.view.seq }, view: sub.view, reset: sub.reset, unsubscribe: sub.unsubscribe };
    },
  };
}

/** A page that folds what it is sent into its own view, and acknowledges only while `acking`. */
function page(hub: () => SubscriptionHub) {
  const sent: BuildStreamMessage[] = [];
  const view = new LiveView(B);
  const unacked: Array<{ subscriptionId: string; batch: number }> = [];
  const p = {
    sent,
    view,
    acking: true,
    unacked,
    target: {
      id: 7,
      send: (channel: string, msg: BuildStreamMessage) => {
        expect(channel).toBe(PUSH.buildStream);
        sent.push(msg);
        if (msg.kind === 'snapshot') view.snapshot(msg.record, msg.view);
        else if (msg.kind === 'events') {
          view.events(msg.events);
          if (p.acking) queueMicrotask(() => hub().ack(7, msg.subscriptionId, msg.batch));
          else unacked.push({ subscriptionId: msg.subscriptionId, batch: msg.batch });
        }
      },
      isDestroyed: () => false,
    } satisfies StreamTarget,
    /** The page answers again: acknowledges what it held back. */
    resume() {
      p.acking = true;
      for (const u of unacked.splice(0)) hub().ack(7, u.subscriptionId, u.batch);
    },
  };
  return p;
}

/** A view snapshot less the counters of events seen (steps coalesced on the way are not seen). */
function shown(v: ReturnType<BuildFeed['snapshot']>) {
  return { ...v, rows: { ...v.rows, phaseEvents: 0, tick: 0 } };
}

let seq = 0;
const ev = (e: Record<string, unknown>): BuildEvent => ({ v: 1, buildId: B, seq: seq++, t: seq, ...e }) as BuildEvent;
/** A log line of about `bytes` characters: never coalesced, so it is what a stall really costs. */
const logLine = (bytes: number) => ev({ type: 'log', severity: 'info', message: 'x'.repeat(bytes) });

beforeEach(() => {
  vi.useFakeTimers();
  seq = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the renderer hop: acknowledged messages, bounded by the service backlog', () => {
  it('sends the next message only once the page acknowledged the previous one; steps wait coalesced in the service', async () => {
    const feed = new BuildFeed(B, 10_000);
    const hub = new SubscriptionHub(serviceOver(feed));
    const p = page(() => hub);
    p.acking = false;
    hub.open(p.target, 's1', B);
    feed.push([ev({ type: 'phase.start', id: 1, parentId: null, name: 'Building engine' })]);
    await vi.advanceTimersByTimeAsync(20);
    expect(p.sent.map((m) => m.kind)).toEqual(['snapshot', 'events']);
    // 500 steps of the phase while the page has not answered: nothing is sent, and the service
    // holds them as one (the latest), not 500.
    for (let i = 0; i < 500; i++) feed.push([ev({ type: 'phase.step', id: 1, step: i, stepsDone: i + 1 })]);
    await vi.advanceTimersByTimeAsync(200);
    expect(p.sent.filter((m) => m.kind === 'events')).toHaveLength(1);
    expect(hub.pending(7, 's1')).toEqual({ waitingBytes: 0, unacked: 1 });
    p.resume();
    await vi.advanceTimersByTimeAsync(50);
    const second = p.sent[2];
    expect(second.kind === 'events' && second.events.map((e) => [e.type, e.seq])).toEqual([['phase.step', 500]]);
    feed.push([ev({ type: 'phase.finish', id: 1, stepsDone: 500 }), ev({ type: 'build.finished', status: 'succeeded', durationMs: 1 })]);
    await vi.advanceTimersByTimeAsync(50);
    expect(p.view.finished).toBe(true);
    expect(shown(p.view.view.snapshot())).toEqual(shown(feed.snapshot()));
    expect(hub.size).toBe(0);
  });

  it('a page that stops answering costs main a bounded amount; past the bound the service drops it, and it starts over from a snapshot once it answers', async () => {
    const feed = new BuildFeed(B, 100_000);
    const bound = 256 * 1024;
    const hub = new SubscriptionHub(serviceOver(feed), { maxBacklogBytes: bound });
    const p = page(() => hub);
    hub.open(p.target, 's1', B);
    feed.push([ev({ type: 'phase.start', id: 1, parentId: null, name: 'Building engine' })]);
    await vi.advanceTimersByTimeAsync(20);
    p.acking = false;
    // 8 MiB of log lines (never coalesced) while the page is stalled: 32 times the bound.
    let peakHeld = 0;
    for (let i = 0; i < 8 * 1024; i++) {
      feed.push([logLine(1024)]);
      if (i % 64 === 0) await vi.advanceTimersByTimeAsync(8);
      const held = hub.pending(7, 's1');
      if (held) peakHeld = Math.max(peakHeld, held.waitingBytes);
    }
    await vi.advanceTimersByTimeAsync(100);
    // What main holds for the page: at most one delivery in the batcher (a backlog within the
    // bound) and one message not yet acknowledged; the service dropped the subscription instead
    // of keeping 8 MiB for it.
    expect(peakHeld).toBeLessThanOrEqual(bound + 4096);
    expect(p.unacked.length).toBeLessThanOrEqual(1);
    const eventsMessages = p.sent.filter((m) => m.kind === 'events').length;
    expect(eventsMessages).toBeLessThanOrEqual(3);
    expect(feed.subscriberCount).toBe(0);
    // The page answers again: a snapshot (the build's view now), then live events to the end.
    p.resume();
    await vi.advanceTimersByTimeAsync(50);
    expect(p.sent.filter((m) => m.kind === 'snapshot')).toHaveLength(2);
    expect(feed.subscriberCount).toBe(1);
    feed.push([ev({ type: 'phase.finish', id: 1, stepsDone: 0 }), ev({ type: 'build.finished', status: 'succeeded', durationMs: 1 })]);
    await vi.advanceTimersByTimeAsync(50);
    expect(p.view.finished).toBe(true);
    expect(shown(p.view.view.snapshot())).toEqual(shown(feed.snapshot()));
    expect(hub.size).toBe(0);
  });

  it('a page that never answers is handed one message, however long the build goes on', async () => {
    // Before acknowledgements the hub sent one message per budget whatever the page did, and
    // Electron queued them all for it.
    const feed = new BuildFeed(B, 100_000);
    const hub = new SubscriptionHub(serviceOver(feed), { maxBacklogBytes: 1024 * 1024 });
    const p = page(() => hub);
    p.acking = false;
    hub.open(p.target, 's1', B);
    for (let i = 0; i < 200; i++) {
      feed.push([logLine(100)]);
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(p.sent.filter((m) => m.kind === 'events')).toHaveLength(1);
  });
});
