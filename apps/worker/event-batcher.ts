// Batches events on their way to the host: one IPC message per ~16 ms (a frame) or per 500
// events, whichever comes first. The first event after a quiet spell goes out at once, so a
// heartbeat or a phase start after a long silent stretch is not held back by the timer.
//
// Back-pressure: when sendBatch returns a promise (the message has not left the process yet),
// nothing more is sent until it settles. Meanwhile events wait here and steps are coalesced: a
// newer step of a phase replaces the waiting one, a phase.finish (which carries stepsDone)
// replaces its phase's waiting step, and only the latest heartbeat is kept. Starts, finishes,
// logs, cache stats, cancelling and finished are never dropped. A host that reads slowly thus
// costs the worker memory for those events only, not for an ever-growing IPC backlog.
import type { BuildEvent } from '../shared/protocol.js';

export const BATCH_INTERVAL_MS = 16;
export const BATCH_MAX_EVENTS = 500;

export class EventBatcher {
  /** Waiting events in seq order; null marks one coalesced away. */
  private pending: Array<BuildEvent | null> = [];
  private head = 0;
  private live = 0;
  /** Phase id → index in `pending` of its waiting step. */
  private stepAt = new Map<number, number>();
  private heartbeatAt = -1;
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = 0;
  private inFlight = false;
  /** Steps and heartbeats dropped because a newer one superseded them while they waited. */
  coalesced = 0;
  /** Most events that waited at once. */
  peakPending = 0;

  constructor(private readonly sendBatch: (events: BuildEvent[]) => void | Promise<unknown>) {}

  push(events: readonly BuildEvent[]): void {
    for (const e of events) this.add(e);
    if (this.live === 0 || this.inFlight) return;
    if (this.live >= BATCH_MAX_EVENTS) {
      this.sendSome();
      return;
    }
    if (this.timer) return;
    const wait = this.lastFlush + BATCH_INTERVAL_MS - Date.now();
    if (wait <= 0) this.sendSome();
    else this.timer = setTimeout(() => this.sendSome(), wait);
  }

  /** Sends everything now, in messages of at most BATCH_MAX_EVENTS (end of the build). */
  flush(): void {
    this.clearTimer();
    while (this.live > 0) this.sendOne();
  }

  private add(e: BuildEvent): void {
    if (e.type === 'phase.step' || e.type === 'phase.finish') {
      const prev = this.stepAt.get(e.id);
      // An index below head points at a step already sent: it cannot be taken back.
      if (prev !== undefined && prev >= this.head) this.drop(prev);
      if (e.type === 'phase.step') this.stepAt.set(e.id, this.pending.length);
      else this.stepAt.delete(e.id);
    } else if (e.type === 'heartbeat') {
      if (this.heartbeatAt >= this.head && this.pending[this.heartbeatAt]) this.drop(this.heartbeatAt);
      this.heartbeatAt = this.pending.length;
    }
    this.pending.push(e);
    this.live++;
    if (this.live > this.peakPending) this.peakPending = this.live;
  }

  private drop(i: number): void {
    this.pending[i] = null;
    this.live--;
    this.coalesced++;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One message, then more only once it has left (back-pressure). */
  private sendSome(): void {
    this.clearTimer();
    if (this.live === 0) return;
    const sent = this.sendOne();
    if (sent && typeof (sent as Promise<unknown>).then === 'function') {
      this.inFlight = true;
      const resume = () => {
        this.inFlight = false;
        if (this.live > 0) this.sendSome();
      };
      (sent as Promise<unknown>).then(resume, resume);
    } else if (this.live >= BATCH_MAX_EVENTS) {
      this.sendSome();
    }
  }

  private sendOne(): void | Promise<unknown> {
    const batch: BuildEvent[] = [];
    let i = this.head;
    for (; i < this.pending.length && batch.length < BATCH_MAX_EVENTS; i++) {
      const e = this.pending[i];
      if (e) batch.push(e);
    }
    this.live -= batch.length;
    if (i === this.pending.length) {
      this.pending = [];
      this.head = 0;
      this.stepAt.clear();
      this.heartbeatAt = -1;
    } else {
      this.head = i;
      // Drop the sent prefix now and then (not at every message: that would be quadratic).
      if (this.head > 4096 && this.head * 2 > this.pending.length) this.compact();
    }
    this.lastFlush = Date.now();
    return this.sendBatch(batch);
  }

  private compact(): void {
    const shift = this.head;
    this.pending = this.pending.slice(shift);
    this.head = 0;
    for (const [id, at] of this.stepAt) {
      if (at < shift) this.stepAt.delete(id);
      else this.stepAt.set(id, at - shift);
    }
    this.heartbeatAt = this.heartbeatAt >= shift ? this.heartbeatAt - shift : -1;
  }
}
