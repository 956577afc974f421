// Live build streams from the service to renderer frames. Each subscription gets its own
// batcher; the snapshot is sent first on the same channel as the events so the renderer can never
// see an event before the tree it applies to (two channels would not keep that order). Each
// subscription follows its build through the shared build view (apps/shared/build-view.ts), and
// the snapshot carries that view's complete snapshot: the page can start from the view itself.
// Snapshot-first ordering, seq dedupe and the fold are the shared LiveView's (apps/shared/live-view.ts).
//
// Bounded like an SSE subscriber, by the same model (the service's SubscriberBacklog): the page
// acknowledges each events message (INVOKE.ackStream, sent by the preload once its handler ran).
// Until it does, the batcher sends nothing more and the hub's subscription tells the service it is
// busy (a pending back-pressure promise): later events wait in the service's backlog for this
// subscriber, steps coalesced, and past its byte bound the service drops the subscription. A
// dropped subscription is followed again, from a fresh snapshot (a reset for the page), once the
// page acknowledges what it was sent. So a page that stalls costs main at most the backlog's
// bound, what the batcher holds from one delivery, and the one message it has not acknowledged,
// however long it stalls; a page that never answers again costs no more than that.
import type { BuildServiceApi } from '../service/api.js';
import { MAX_SUBSCRIBER_BACKLOG_BYTES } from '../service/build-feed.js';
import { followBuild, type LiveView } from '../shared/live-view.js';
import type { BuildEvent } from '../shared/protocol.js';
import { RendererBatcher, FRAME_MS, type BatcherTimers } from './renderer-batcher.js';
import { PUSH, type BuildStreamMessage } from './ipc-channels.js';

/** The part of a WebContents the hub needs. */
export interface StreamTarget {
  readonly id: number;
  send(channel: string, message: BuildStreamMessage): void;
  isDestroyed(): boolean;
}

export interface SubscriptionHubOptions {
  intervalMs?: number;
  timers?: BatcherTimers;
  /** The service-side backlog's bound for one page subscription (default: the SSE subscribers'). */
  maxBacklogBytes?: number;
}

interface Entry {
  readonly key: string;
  readonly target: StreamTarget;
  readonly subscriptionId: string;
  readonly buildId: string;
  /** The build as this subscription has it: the service's snapshot plus every event since. */
  live: LiveView | null;
  batcher: RendererBatcher;
  /** Events messages sent so far (each carries its number, the page acknowledges it). */
  sent: number;
  /** Sent and not yet acknowledged: message number → what settles the batcher's send. */
  readonly unacked: Map<number, () => void>;
  /** The service dropped the subscription (the page fell behind): follow again once it acks. */
  dropped: boolean;
  /** Settles the service's delivery once the page has everything handed to the hub. */
  idle: { promise: Promise<void>; resolve: () => void } | null;
  closed: boolean;
}

export class SubscriptionHub {
  private readonly entries = new Map<string, Entry>();
  private readonly intervalMs: number;
  private readonly timers?: BatcherTimers;
  private readonly maxBacklogBytes: number;

  constructor(
    private readonly service: Pick<BuildServiceApi, 'subscribe'>,
    opts: SubscriptionHubOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? FRAME_MS;
    this.timers = opts.timers;
    this.maxBacklogBytes = opts.maxBacklogBytes ?? MAX_SUBSCRIBER_BACKLOG_BYTES;
  }

  /** Throws the service's error (e.g. unknown build) without registering anything. */
  open(target: StreamTarget, subscriptionId: string, buildId: string): void {
    const key = keyOf(target.id, subscriptionId);
    this.close(target.id, subscriptionId); // a reloaded page restarts its counter: replace, don't leak
    const entry: Entry = {
      key,
      target,
      subscriptionId,
      buildId,
      live: null,
      batcher: null as unknown as RendererBatcher,
      sent: 0,
      unacked: new Map(),
      dropped: false,
      idle: null,
      closed: false,
    };
    this.entries.set(key, entry);
    try {
      this.follow(entry);
    } catch (err) {
      entry.batcher.close();
      entry.closed = true;
      this.entries.delete(key);
      throw err;
    }
  }

  /**
   * The page took events message `batch` (and every one before it) of a subscription. Unknown
   * subscriptions (closed meanwhile) are ignored. False when there is no such subscription.
   */
  ack(targetId: number, subscriptionId: string, batch: number): boolean {
    const entry = this.entries.get(keyOf(targetId, subscriptionId));
    if (!entry) return false;
    for (const [n, settle] of entry.unacked) {
      if (n > batch) break;
      entry.unacked.delete(n);
      settle();
    }
    // After the batcher has taken the settled send (its reaction runs first) and queued what waits.
    queueMicrotask(() => this.settle(entry));
    return true;
  }

  close(targetId: number, subscriptionId: string): boolean {
    const key = keyOf(targetId, subscriptionId);
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.release(entry);
    return true;
  }

  /** A window closed or reloaded: its subscriptions go with it. */
  closeAllFor(targetId: number): void {
    for (const entry of [...this.entries.values()]) if (entry.target.id === targetId) this.release(entry);
  }

  get size(): number {
    return this.entries.size;
  }

  /** What main holds for one subscription now (events waiting in its batcher, messages the page has not acknowledged). */
  pending(targetId: number, subscriptionId: string): { waitingBytes: number; unacked: number } | undefined {
    const entry = this.entries.get(keyOf(targetId, subscriptionId));
    return entry && { waitingBytes: entry.batcher.waitingBytes, unacked: entry.unacked.size };
  }

  /** Subscribes the entry to its build: a snapshot (to the page) first, then live events. */
  private follow(entry: Entry): void {
    const { target, subscriptionId } = entry;
    entry.batcher = new RendererBatcher((events) => this.send(entry, events), this.intervalMs, this.timers);
    entry.dropped = false;
    // The live view holds events that arrive before the snapshot and drops any at or below its
    // seq, so the page gets the snapshot first and every later event once.
    entry.live = followBuild(
      this.service,
      entry.buildId,
      {
        // subscribe() always gives the record with the view.
        onReset: (view, record) => record && target.send(PUSH.buildStream, { subscriptionId, kind: 'snapshot', record, view: view.snapshot() }),
        onEvents: (events) => entry.batcher.push(events),
      },
      { backpressure: () => this.busy(entry), maxBacklogBytes: this.maxBacklogBytes, onOverflow: () => this.overflowed(entry) },
    );
    // A build that had already finished has nothing more to stream.
    if (entry.live.record?.outcome) {
      entry.batcher.flush();
      this.release(entry);
    }
  }

  private send(entry: Entry, events: BuildEvent[]): Promise<void> | void {
    if (entry.closed) return;
    if (entry.target.isDestroyed()) return this.release(entry);
    const batch = ++entry.sent;
    // Registered before sending: an acknowledgement may come back inside send() (a test's page).
    const acked = new Promise<void>((resolve) => entry.unacked.set(batch, resolve));
    entry.target.send(PUSH.buildStream, { subscriptionId: entry.subscriptionId, kind: 'events', batch, events });
    // Nothing follows build.finished; release the service-side subscription right away.
    if (events[events.length - 1]?.type === 'build.finished') return this.release(entry);
    return acked;
  }

  /** Undefined while the page has everything handed to the hub; otherwise when it will have. */
  private busy(entry: Entry): Promise<void> | undefined {
    if (entry.closed || (entry.unacked.size === 0 && entry.batcher.waiting === 0)) return undefined;
    if (!entry.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      entry.idle = { promise, resolve };
    }
    return entry.idle.promise;
  }

  private settle(entry: Entry): void {
    if (entry.closed || entry.unacked.size > 0) return;
    if (entry.dropped) {
      // The page has caught up with what it was sent: start it over from the build's view now.
      try {
        this.follow(entry);
      } catch {
        // The build is gone from the service: nothing more to stream.
        this.release(entry);
      }
      return;
    }
    if (entry.batcher.waiting === 0 && entry.idle) {
      const { resolve } = entry.idle;
      entry.idle = null;
      resolve();
    }
  }

  private overflowed(entry: Entry): void {
    // The service has let go of the subscription; what the batcher holds is superseded by the
    // snapshot the page gets when it is followed again.
    entry.live = null;
    entry.batcher.close();
    entry.dropped = true;
    entry.idle = null;
    if (entry.unacked.size === 0) queueMicrotask(() => this.settle(entry));
  }

  private release(entry: Entry): void {
    if (entry.closed) return;
    entry.closed = true;
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    entry.batcher.close();
    entry.live?.unsubscribe();
    entry.unacked.clear();
    entry.idle = null;
  }
}

function keyOf(targetId: number, subscriptionId: string): string {
  return `${targetId}/${subscriptionId}`;
}
