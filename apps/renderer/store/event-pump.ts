// Collects events as they arrive and applies them at most once per animation frame. A fast build
// delivers 100k+ callbacks per second; touching React per event would freeze the page, so events
// only go into a queue here, and one frame applies the whole queue and notifies once.
import type { BuildEvent } from '../../shared/protocol.js';

export interface FrameScheduler {
  request(cb: (frameTime: number) => void): void;
  now(): number;
  /** True when frames are not being produced (background tab): flush on a timer instead. */
  hidden(): boolean;
}

/** Optional measurement hook for bench/ui.ts: event arrival → the frame that painted it. */
export interface PumpProbe {
  /** Called at the start of the frame after the one that applied a batch (it has been painted). */
  painted(arrivals: readonly number[], counts: readonly number[], paintedAt: number): void;
}

/** A queue this long is applied at once even without a frame, to bound memory. */
const MAX_PENDING = 50_000;

export class EventPump {
  // Batches as they came, not copied event by event: the copy showed up in profiles.
  private pending: (readonly BuildEvent[])[] = [];
  private pendingEvents = 0;
  private arrivals: number[] = [];
  private counts: number[] = [];
  private scheduled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private awaitingPaint: { arrivals: number[]; counts: number[] } | null = null;
  probe: PumpProbe | null = null;

  constructor(
    private readonly sched: FrameScheduler,
    private readonly apply: (events: readonly BuildEvent[]) => void,
    private readonly notify: () => void,
  ) {}

  push(events: readonly BuildEvent[]): void {
    if (events.length === 0) return;
    this.pending.push(events);
    this.pendingEvents += events.length;
    if (this.probe) {
      this.arrivals.push(this.sched.now());
      this.counts.push(events.length);
    }
    if (this.pendingEvents >= MAX_PENDING) {
      this.drain();
      return;
    }
    this.schedule();
  }

  /** Applies everything queued now (e.g. before switching builds). */
  flushNow(): void {
    if (this.pending.length > 0) {
      this.drain();
      this.notify();
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.sched.request((ts) => this.onFrame(ts));
    // rAF stops in background tabs; a slow timer keeps the state (and memory) moving.
    if (this.sched.hidden()) this.timer = setTimeout(() => this.onFrame(this.sched.now()), 500);
  }

  private onFrame(frameTime: number): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.scheduled) return;
    this.scheduled = false;
    if (this.awaitingPaint && this.probe) {
      this.probe.painted(this.awaitingPaint.arrivals, this.awaitingPaint.counts, frameTime);
      this.awaitingPaint = null;
    }
    if (this.pending.length === 0) return;
    const arrivals = this.arrivals;
    const counts = this.counts;
    this.drain();
    this.notify();
    if (this.probe) {
      this.awaitingPaint = { arrivals, counts };
      // Make sure a next frame comes even when no new events do, to close the measurement.
      this.scheduled = true;
      this.sched.request((ts) => this.onFrame(ts));
    }
  }

  private drain(): void {
    const batches = this.pending;
    this.pending = [];
    this.pendingEvents = 0;
    this.arrivals = [];
    this.counts = [];
    for (const b of batches) this.apply(b);
  }

  get pendingCount(): number {
    return this.pendingEvents;
  }
}

export const browserScheduler: FrameScheduler = {
  request: (cb) => requestAnimationFrame(cb),
  now: () => performance.now(),
  hidden: () => typeof document !== 'undefined' && document.visibilityState === 'hidden',
};
