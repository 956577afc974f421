// Collects build events for one renderer subscription and hands them over at most once per
// interval. The simulated backend can deliver 100k+ callbacks a second; one IPC message per event
// would saturate the renderer's IPC queue long before React paints, so batches go at frame rate.
import type { BuildEvent } from '../shared/protocol.js';

export interface BatcherTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: BatcherTimers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export const FRAME_MS = 16;

export class EventBatcher {
  private pending: BuildEvent[] = [];
  private timer: unknown = null;
  private lastFlush = -Infinity;
  private closed = false;

  constructor(
    private readonly deliver: (events: BuildEvent[]) => void,
    private readonly intervalMs = FRAME_MS,
    private readonly timers: BatcherTimers = realTimers,
  ) {}

  push(events: readonly BuildEvent[]): void {
    if (this.closed || events.length === 0) return;
    for (const e of events) this.pending.push(e);
    if (this.timer !== null) return;
    // Even the first batch waits for the next tick: events pushed synchronously with a snapshot
    // must reach the renderer after it, and bursts arriving together should share one message.
    const wait = Math.max(0, Math.ceil(this.lastFlush + this.intervalMs - this.timers.now()));
    this.timer = this.timers.setTimeout(() => this.flush(), wait);
  }

  /** Sends whatever is pending now (used before closing so the final event is never lost). */
  flush(): void {
    if (this.timer !== null) {
      this.timers.clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.lastFlush = this.timers.now();
    this.deliver(batch);
  }

  /** Drops pending events; for a receiver that has gone away. */
  close(): void {
    this.closed = true;
    this.pending = [];
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }
}
