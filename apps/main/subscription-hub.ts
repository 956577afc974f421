// Live build streams from the service to renderer frames. Each subscription gets its own
// batcher; the snapshot is sent first on the same channel as the events so the renderer can never
// see an event before the tree it applies to (two channels would not keep that order). Each
// subscription follows its build through the shared build view (apps/shared/build-view.ts), and
// the snapshot carries that view's complete snapshot: the page can start from the view itself.
// Snapshot-first ordering and seq dedupe are the shared stream cursor's (apps/shared/stream-cursor.ts).
import type { BuildServiceApi, Subscription } from '../service/api.js';
import { StreamCursor } from '../shared/stream-cursor.js';
import { RendererBatcher, FRAME_MS, type BatcherTimers } from './renderer-batcher.js';
import { PUSH, type BuildStreamMessage } from './ipc-channels.js';
import { BuildView } from '../shared/build-view.js';

/** The part of a WebContents the hub needs. */
export interface StreamTarget {
  readonly id: number;
  send(channel: string, message: BuildStreamMessage): void;
  isDestroyed(): boolean;
}

interface Entry {
  target: StreamTarget;
  subscription: Subscription | null;
  batcher: RendererBatcher;
  /** The build as this subscription has it: the service's snapshot plus every event since. */
  view: BuildView | null;
}

export class SubscriptionHub {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly service: Pick<BuildServiceApi, 'subscribe'>,
    private readonly intervalMs = FRAME_MS,
    private readonly timers?: BatcherTimers,
  ) {}

  /** Throws the service's error (e.g. unknown build) without registering anything. */
  open(target: StreamTarget, subscriptionId: string, buildId: string): void {
    const key = keyOf(target.id, subscriptionId);
    this.close(target.id, subscriptionId); // a reloaded page restarts its counter: replace, don't leak
    const entry: Entry = { target, subscription: null, batcher: null as unknown as RendererBatcher, view: null };
    entry.batcher = new RendererBatcher(
      (events) => {
        if (target.isDestroyed()) return this.close(target.id, subscriptionId);
        target.send(PUSH.buildStream, { subscriptionId, kind: 'events', events });
        // Nothing follows build.finished; release the service-side subscription right away.
        if (events[events.length - 1]?.type === 'build.finished') this.close(target.id, subscriptionId);
      },
      this.intervalMs,
      this.timers,
    );
    this.entries.set(key, entry);
    // The cursor holds events that arrive before the snapshot and drops any at or below its seq,
    // so the page gets the snapshot first and every later event once.
    const cursor = new StreamCursor({
      applySnapshot: (record, view) => {
        if (!record || !view) return; // subscribe() always gives both
        entry.view = BuildView.fromSnapshot(view);
        target.send(PUSH.buildStream, { subscriptionId, kind: 'snapshot', record, view: entry.view.snapshot() });
      },
      applyEvents: (events) => {
        const now = Date.now();
        for (const e of events) entry.view?.apply(e, now);
        entry.batcher.push(events);
      },
    });
    try {
      entry.subscription = this.service.subscribe(buildId, (events) => cursor.events(events));
    } catch (err) {
      entry.batcher.close();
      this.entries.delete(key);
      throw err;
    }
    cursor.snapshot(entry.subscription.snapshot, entry.subscription.view);
    // A build that had already finished has nothing more to stream.
    if (entry.subscription.snapshot.outcome) {
      entry.batcher.flush();
      this.close(target.id, subscriptionId);
    }
  }

  close(targetId: number, subscriptionId: string): boolean {
    const key = keyOf(targetId, subscriptionId);
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    entry.batcher.close();
    entry.subscription?.unsubscribe();
    return true;
  }

  /** A window closed or reloaded: its subscriptions go with it. */
  closeAllFor(targetId: number): void {
    for (const [key, entry] of [...this.entries]) {
      if (entry.target.id === targetId) this.close(targetId, key.slice(key.indexOf('/') + 1));
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(targetId: number, subscriptionId: string): string {
  return `${targetId}/${subscriptionId}`;
}
