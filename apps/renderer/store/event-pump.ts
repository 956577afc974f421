// Takes events as they arrive and tells the UI at most once per animation frame. A fast build
// delivers 100k+ callbacks per second; touching React per event would freeze the page, so an
// arrival only folds its events into the view (the `apply` callback, within a time budget), and
// each frame that follows applied events tells the UI once, or less often when the scheduler sets
// notifyEveryMs or frames come late (a page short of CPU: see SLOW_FRAME_MS).
//
// Why fold on arrival and not in the frame: the frame's own work is then React and Chromium's
// rendering only. Folding a frame's worth of events inside requestAnimationFrame made every frame
// longer by that much, and on a busy machine a longer frame is one more likely to miss its vsync:
// bench:ui, alternating with the code before it, showed the event-to-paint tail and the share of
// events painted later than two frames both falling (docs/benchmarks.md). What a burst leaves over
// the budget waits in the queue and is applied, oldest first, by the next arrivals and frames.
import type { BuildEvent } from '../../shared/protocol.js';

export interface FrameScheduler {
  request(cb: (frameTime: number) => void): void;
  now(): number;
  /** True when frames are not being produced (background tab): flush on a timer instead. */
  hidden(): boolean;
  /**
   * Least time (ms, by frame timestamps) between two notifications; 0 or absent: every frame
   * that applied events. Events are still applied every frame, so the queue stays short.
   */
  notifyEveryMs?: number;
}

/** Optional measurement hook for bench/ui.ts: event arrival → the frame that painted it. */
export interface PumpProbe {
  /** Called at the start of the frame after the one that applied a batch (it has been painted). */
  painted(arrivals: readonly number[], counts: readonly number[], paintedAt: number): void;
}

/** A queue this long is applied at once even without a frame, to bound memory. */
const MAX_PENDING = 50_000;
/**
 * Time (ms) an arrival or a frame may spend applying events; what is left waits for the next, so
 * a burst (a stall, a replay after reconnect) costs a few frames of lag instead of one long frozen
 * one. Applying one of the stream worker's pieces takes far less than this (docs/benchmarks.md), so
 * this only binds on bursts well beyond the steady stream, and MAX_PENDING still forces
 * everything through if the backlog ever keeps growing.
 */
export const FRAME_BUDGET_MS = 6;
/**
 * Events that have already waited this long (ms) when a frame starts are applied in that frame
 * even past FRAME_BUDGET_MS (up to LATE_CAP_MS): a fixed budget alone let a steady stream that
 * needs slightly more than the budget fall behind frame after frame, and the queue's age (the
 * event-to-paint tail in bench:ui) grew to hundreds of ms. Only a real burst (a replay, a
 * stall) is still spread over frames.
 */
export const LATE_MS = 12;
export const LATE_CAP_MS = 24;
/**
 * A frame that starts this long (ms) after the pump asked for it is late. SLOW_FRAMES late frames
 * within SLOW_WINDOW_MS mean the page is short of CPU (a busy machine: the build, other
 * programs); for SLOW_HOLD_MS after that the UI is told at most every BUSY_NOTIFY_MS:
 * re-rendering every frame is what keeps the event-to-paint tail within two frames when the page
 * keeps up, and only adds to its lateness when it does not. One late frame (a GC pause, one
 * preemption) is no such sign: holding back every render for a second after each one made that
 * second's events late by several frames, and that second set bench:ui's event-to-paint tail even
 * on a quiet machine (docs/benchmarks.md).
 */
export const SLOW_FRAME_MS = 25;
export const SLOW_FRAMES = 4;
export const SLOW_WINDOW_MS = 1000;
export const BUSY_NOTIFY_MS = 50;
export const SLOW_HOLD_MS = 1000;
/** Events applied between two looks at the clock while a frame's budget runs. */
const SLICE = 2048;

export class EventPump {
  // Batches as they came, not copied event by event: the copy showed up in profiles.
  private pending: (readonly BuildEvent[])[] = [];
  /** When each pending batch arrived (sched.now()). */
  private pendingAt: number[] = [];
  /** Events of pending[0] already applied by a frame that ran out of budget. */
  private headOffset = 0;
  private pendingEvents = 0;
  private arrivals: number[] = [];
  private counts: number[] = [];
  private scheduled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private awaitingPaint: { arrivals: number[]; counts: number[] } | null = null;
  /** Events were applied since the last notify (the UI has not been told yet). */
  private unnotified = false;
  /** Probe data of what was applied since the last notify. */
  private appliedArrivals: number[] = [];
  private appliedCounts: number[] = [];
  private lastNotifyAt = -Infinity;
  /** When the pending frame was asked for (sched.now()). */
  private requestedAt = NaN;
  /** Until this time the UI is told at most every BUSY_NOTIFY_MS (a late frame was seen). */
  private busyUntil = -Infinity;
  /** When the late frames of the last SLOW_WINDOW_MS started (oldest first). */
  private lateFrames: number[] = [];
  probe: PumpProbe | null = null;

  constructor(
    private readonly sched: FrameScheduler,
    private readonly apply: (events: readonly BuildEvent[]) => void,
    private readonly notify: () => void,
  ) {}

  push(events: readonly BuildEvent[]): void {
    if (events.length === 0) return;
    this.pending.push(events);
    this.pendingAt.push(this.sched.now());
    this.pendingEvents += events.length;
    if (this.probe) {
      this.arrivals.push(this.sched.now());
      this.counts.push(events.length);
    }
    if (this.pendingEvents >= MAX_PENDING) {
      this.drain();
      return;
    }
    this.applyQueued(FRAME_BUDGET_MS, -Infinity);
    this.schedule();
  }

  /** Applies everything queued now (e.g. before switching builds). */
  flushNow(): void {
    if (this.pending.length > 0 || this.unnotified) {
      this.drain();
      this.unnotified = false;
      this.notify();
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.requestedAt = this.sched.now();
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
    if (this.pending.length > 0) this.applyQueued(FRAME_BUDGET_MS, frameTime - LATE_MS);
    if (frameTime - this.requestedAt > SLOW_FRAME_MS) this.noteLateFrame(frameTime);
    const notifyGap = Math.max(this.sched.notifyEveryMs ?? 0, frameTime < this.busyUntil ? BUSY_NOTIFY_MS : 0);
    if (this.unnotified && frameTime - this.lastNotifyAt >= notifyGap) {
      this.unnotified = false;
      this.lastNotifyAt = frameTime;
      this.notify();
      if (this.probe) {
        // The probe measures to the paint of the frame that told the UI, not the one that applied.
        this.awaitingPaint = { arrivals: this.appliedArrivals, counts: this.appliedCounts };
        this.appliedArrivals = [];
        this.appliedCounts = [];
      }
    }
    // Another frame for the rest of the backlog, a notification still due, or (when measuring)
    // to close the measurement.
    if (this.pending.length > 0 || this.unnotified || this.awaitingPaint) {
      this.scheduled = true;
      this.requestedAt = this.sched.now();
      this.sched.request((ts) => this.onFrame(ts));
    }
  }

  /** Applies from the queue (drainFor's rules); the UI is told at the next frame. */
  private applyQueued(budgetMs: number, lateBefore: number): void {
    const done = this.drainFor(budgetMs, lateBefore);
    this.unnotified = true;
    if (this.probe) {
      this.appliedArrivals.push(...done.arrivals);
      this.appliedCounts.push(...done.counts);
    }
  }

  private noteLateFrame(frameTime: number): void {
    const late = this.lateFrames;
    late.push(frameTime);
    while (late.length > 0 && late[0] <= frameTime - SLOW_WINDOW_MS) late.shift();
    if (late.length >= SLOW_FRAMES) this.busyUntil = frameTime + SLOW_HOLD_MS;
  }

  private drain(): void {
    const batches = this.pending;
    const offset = this.headOffset;
    this.pending = [];
    this.pendingAt = [];
    this.headOffset = 0;
    this.pendingEvents = 0;
    this.arrivals = [];
    this.counts = [];
    for (let i = 0; i < batches.length; i++) this.apply(i === 0 && offset > 0 ? batches[0].slice(offset) : batches[i]);
  }

  /**
   * Applies queued events in order until `budgetMs` is spent (always at least one slice, so the
   * queue moves every frame), and beyond it, up to LATE_CAP_MS, while the next batch arrived at
   * or before `lateBefore`. Returns the arrival times and counts of what was applied, for the probe.
   */
  private drainFor(budgetMs: number, lateBefore: number): { arrivals: number[]; counts: number[] } {
    const t0 = this.sched.now();
    const arrivals: number[] = [];
    const counts: number[] = [];
    while (this.pending.length > 0) {
      const b = this.pending[0];
      const from = this.headOffset;
      const to = Math.min(b.length, from + SLICE);
      this.apply(from === 0 && to === b.length ? b : b.slice(from, to));
      this.pendingEvents -= to - from;
      if (this.probe && this.counts.length > 0) {
        arrivals.push(this.arrivals[0]);
        counts.push(to - from);
        this.counts[0] -= to - from;
      }
      if (to === b.length) {
        this.pending.shift();
        this.pendingAt.shift();
        this.headOffset = 0;
        if (this.probe && this.counts.length > 0) {
          this.arrivals.shift();
          this.counts.shift();
        }
      } else this.headOffset = to;
      const spent = this.sched.now() - t0;
      if (spent >= budgetMs && (spent >= LATE_CAP_MS || !(this.pendingAt[0] <= lateBefore))) break;
    }
    return { arrivals, counts };
  }

  get pendingCount(): number {
    return this.pendingEvents;
  }
}

export const browserScheduler: FrameScheduler = {
  request: (cb) => requestAnimationFrame(cb),
  // Every frame after applied events re-renders: what arrived is on screen by the frame after. An
  // earlier ~30 re-renders a second (notifyEveryMs 25) held applied events back a frame and
  // put the event-to-paint tail past two frames; the per-frame render is bounded instead (the
  // tree redoes its flattening only when rows change, rows re-render only when they changed).
  now: () => performance.now(),
  hidden: () => typeof document !== 'undefined' && document.visibilityState === 'hidden',
};
