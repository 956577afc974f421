// Live build streams from the service to renderer frames. Each subscription gets its own
// batcher; the snapshot is sent first on the same channel as the events so the renderer can never
// see an event before the tree it applies to (two channels would not keep that order). Each
// subscription follows its build through the shared build view (apps/shared/build-view.ts), and
// the snapshot carries that view's complete snapshot: the page can start from the view itself.
// Snapshot-first ordering, seq dedupe and the fold are the shared LiveView's (apps/shared/live-view.ts).
import type { BuildServiceApi } from '../service/api.js';
import { followBuild, type LiveView } from '../shared/live-view.js';
import { RendererBatcher, FRAME_MS, type BatcherTimers } from './renderer-batcher.js';
import { PUSH, type BuildStreamMessage } from './ipc-channels.js';

/** The part of a WebContents the hub needs. */
export interface StreamTarget {
  readonly id: number;
  send(channel: string, message: BuildStreamMessage): void;
  isDestroyed(): boolean;
}

interface Entry {
  target: StreamTarget;
  /** The build as this subscription has it: the service's snapshot plus every event since. */
  live: LiveView | null;
  batcher: RendererBatcher;
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
    const entry: Entry = { target, live: null, batcher: null as unknown as RendererBatcher };
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
    // The live view holds events that arrive before the snapshot and drops any at or below its
    // seq, so the page gets the snapshot first and every later event once.
    try {
      entry.live = followBuild(this.service, buildId, {
        // subscribe() always gives the record with the view.
        onReset: (view, record) => record && target.send(PUSH.buildStream, { subscriptionId, kind: 'snapshot', record, view: view.snapshot() }),
        onEvents: (events) => entry.batcher.push(events),
      });
    } catch (err) {
      entry.batcher.close();
      this.entries.delete(key);
      throw err;
    }
    // A build that had already finished has nothing more to stream.
    if (entry.live.record?.outcome) {
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
    entry.live?.unsubscribe();
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
