// The one pacing policy every hop of a build's event stream follows, native flusher included
// (native/src/core/flush_pacer.h mirrors it): a batch goes out at once when the previous one left
// at least PACING_BUDGET_MS ago (a quiet stream is not delayed at all), otherwise it waits out the
// rest of the budget and carries everything that arrived meanwhile (a busy stream costs at most
// one batch per budget per hop). Since the native layer already sends at most one batch per
// budget, a downstream hop almost never waits: the budget is paid once, not once per hop.
//
// Coalescing while events wait (a budget, or a send that has not completed: back-pressure): a
// newer step of a phase replaces the waiting one, a phase.finish (which carries stepsDone)
// replaces its phase's waiting step, and only the latest heartbeat is kept. Starts, finishes,
// logs, cache stats, cancelling and finished are never dropped, so a slow receiver costs memory
// for those only. Order is kept.
import { eventBytes } from './event-bytes.js';
import type { WireEvent } from './event-lines.js';
import type { BuildEvent } from './protocol.js';

/** Minimum spacing of batches on every hop (native → worker → host → client), in ms. */
export const PACING_BUDGET_MS = 8;
/** Most events per batch: a huge backlog goes out in several messages, not one giant one. */
export const PACING_MAX_EVENTS = 500;

export interface PacingTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: PacingTimers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface PacingOptions {
  budgetMs?: number;
  maxEvents?: number;
  timers?: PacingTimers;
  /**
   * 'immediate' (default): a batch that is due goes out inside push(). 'next-tick': it goes out
   * from a zero-delay timer, so whatever the caller sends synchronously after push() (a
   * snapshot) reaches the receiver first, and events pushed in one tick share a message.
   */
  leadingEdge?: 'immediate' | 'next-tick';
}

/** `send` may return a promise: nothing more is sent until it settles (back-pressure). */
export type SendBatch<E extends WireEvent = BuildEvent> = (events: E[]) => void | Promise<unknown>;

/** E: protocol event objects, or (the build worker's hop) hot events already as text (EventLine). */
export class PacingBatcher<E extends WireEvent = BuildEvent> {
  /** Waiting events in seq order; null marks one coalesced away. */
  private pending: Array<E | null> = [];
  private head = 0;
  private live = 0;
  private liveBytes = 0;
  /** Phase id → index in `pending` of its waiting step. */
  private stepAt = new Map<number, number>();
  private heartbeatAt = -1;
  private timer: unknown = null;
  private lastSend = -Infinity;
  private inFlight = false;
  private closed = false;
  private readonly budgetMs: number;
  private readonly maxEvents: number;
  private readonly timers: PacingTimers;
  private readonly leadingEdge: 'immediate' | 'next-tick';
  /** Steps and heartbeats dropped because a newer one superseded them while they waited. */
  coalesced = 0;
  /** Most events that waited at once. */
  peakPending = 0;
  /** Most bytes (event-bytes.ts's estimate) that waited at once. */
  peakPendingBytes = 0;

  constructor(
    private readonly send: SendBatch<E>,
    options: PacingOptions = {},
  ) {
    this.budgetMs = options.budgetMs ?? PACING_BUDGET_MS;
    this.maxEvents = options.maxEvents ?? PACING_MAX_EVENTS;
    this.timers = options.timers ?? realTimers;
    this.leadingEdge = options.leadingEdge ?? 'immediate';
  }

  /** Events waiting to be sent (after coalescing). */
  get waiting(): number {
    return this.live;
  }

  /** What the waiting events cost in memory (event-bytes.ts's estimate): the hop's byte bound reads this. */
  get waitingBytes(): number {
    return this.liveBytes;
  }

  push(events: readonly E[]): void {
    if (this.closed) return;
    for (const e of events) this.add(e);
    this.schedule();
  }

  /** Sends everything now, in messages of at most maxEvents (end of the build, before closing). */
  flush(): void {
    this.clearTimer();
    while (this.live > 0) this.sendOne();
  }

  /** Drops what waits and ignores later pushes; for a receiver that has gone away. */
  close(): void {
    this.closed = true;
    this.clearTimer();
    this.pending = [];
    this.head = 0;
    this.live = 0;
    this.liveBytes = 0;
    this.stepAt.clear();
    this.heartbeatAt = -1;
  }

  private schedule(): void {
    if (this.live === 0 || this.inFlight || this.closed) return;
    if (this.live >= this.maxEvents && this.leadingEdge === 'immediate') return this.sendSome();
    if (this.timer !== null) return;
    const wait = this.lastSend + this.budgetMs - this.timers.now();
    if (wait <= 0 && this.leadingEdge === 'immediate') return this.sendSome();
    this.timer = this.timers.setTimeout(
      () => {
        this.timer = null;
        this.sendSome();
      },
      Math.max(0, Math.ceil(wait)),
    );
  }

  private add(e: E): void {
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
    this.liveBytes += eventBytes(e);
    if (this.live > this.peakPending) this.peakPending = this.live;
    if (this.liveBytes > this.peakPendingBytes) this.peakPendingBytes = this.liveBytes;
  }

  private drop(i: number): void {
    const e = this.pending[i];
    if (!e) return;
    this.liveBytes -= eventBytes(e);
    this.pending[i] = null;
    this.live--;
    this.coalesced++;
  }

  private clearTimer(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  /** One message, then more only once it has left (back-pressure) or the budget allows. */
  private sendSome(): void {
    this.clearTimer();
    if (this.live === 0 || this.closed) return;
    const sent = this.sendOne();
    if (sent && typeof (sent as Promise<unknown>).then === 'function') {
      this.inFlight = true;
      const resume = () => {
        this.inFlight = false;
        this.schedule();
      };
      (sent as Promise<unknown>).then(resume, resume);
    } else if (this.live >= this.maxEvents) {
      this.sendSome(); // a backlog bigger than one message drains without waiting
    } else {
      this.schedule();
    }
  }

  private sendOne(): void | Promise<unknown> {
    const batch: E[] = [];
    let i = this.head;
    for (; i < this.pending.length && batch.length < this.maxEvents; i++) {
      const e = this.pending[i];
      if (e) {
        batch.push(e);
        this.liveBytes -= eventBytes(e);
      }
    }
    this.live -= batch.length;
    if (i === this.pending.length) {
      this.pending = [];
      this.head = 0;
      this.liveBytes = 0; // exact again: nothing waits
      this.stepAt.clear();
      this.heartbeatAt = -1;
    } else {
      this.head = i;
      // Drop the sent prefix now and then (not at every message: that would be quadratic).
      if (this.head > 4096 && this.head * 2 > this.pending.length) this.compact();
    }
    this.lastSend = this.timers.now();
    return this.send(batch);
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
