// The state of one build as the service keeps it, and its delivery: the build view (the one
// fold of the events every surface shows), the events kept for replay, and the fan-out to
// subscribers. Knows nothing of worker processes (worker-run.ts) or of the build's record
// (build-session.ts): events go in, in seq order; snapshots, replays and resets come out. A feed
// may also start from a snapshot taken elsewhere (a farm build mirrored from Redis by serve,
// apps/farm/remote-build.ts): the events up to it were never kept here, so a subscriber resuming
// from before it is reset, as one resuming from before the events dropped for space.
//
// The stream contract (docs/http-api.md, "Event streams"): a subscriber gets a complete view
// snapshot and then every later event, or, resuming after a seq, either the kept events after it
// or, when some of those are no longer kept, an explicit reset (the view snapshot again) and the
// events after the snapshot's seq. Never a silent gap.
import { BuildView, type BuildViewSnapshot } from '../shared/build-view.js';
import { forgetEventJson } from '../shared/event-json.js';
import type { BuildEvent } from '../shared/protocol.js';
import { EventLog } from './event-log.js';
import { SubscriberBacklog } from './subscriber-backlog.js';

/**
 * Events (after step coalescing) a busy subscriber may have waiting before it is dropped. Past
 * this, holding more would let one stuck client grow the service without bound; a dropped
 * subscriber hears of it through onOverflow and resumes through subscribe(afterSeq), which
 * replays what is kept or resets it with the view.
 */
export const MAX_SUBSCRIBER_BACKLOG = 100_000;
/**
 * The same bound in bytes (apps/shared/event-bytes.ts's estimate): 100,000 steps or starts cost
 * about 16 MiB, but a verbose build's log lines are larger, so whichever bound is reached first
 * drops the subscriber. With an SSE stream's own 8 MiB response buffer, one slow client costs the
 * service at most about 40 MiB, however long it stalls, and never holds back the build or the
 * other subscribers (only a subscriber with pacesBuild does that: the CLI's own stdout).
 */
export const MAX_SUBSCRIBER_BACKLOG_BYTES = 32 * 1024 * 1024;

export interface FeedSubscribeOptions {
  /** Resume after this seq (Last-Event-ID): kept events after it are replayed, or a reset is made. */
  afterSeq?: number;
  /** Default MAX_SUBSCRIBER_BACKLOG. */
  maxBacklog?: number;
  /** Default MAX_SUBSCRIBER_BACKLOG_BYTES. */
  maxBacklogBytes?: number;
  /**
   * The subscriber fell too far behind and was dropped; `lastSeq` is the last event it got.
   * Subscribe again with afterSeq = lastSeq to resume (through a reset when needed).
   */
  onOverflow?: (lastSeq: number) => void;
  /**
   * This subscriber paces the build: while its callback's promise is pending, the worker is told
   * to hold its next batch (pacingReady), so what waits for it stays a batch, not a backlog. For
   * local readers whose every event matters (the CLI's --json stdout); a network client that
   * may stall for good keeps the bounded backlog and onOverflow instead.
   */
  pacesBuild?: boolean;
}

export interface FeedSubscription {
  /** The build view at the moment of subscribing (complete: a client can rebuild from it). */
  view: BuildViewSnapshot;
  /**
   * True when `afterSeq` was given but events after it are no longer all kept: the subscriber
   * must replace what it has with `view`. Events delivered then follow `view.seq`.
   */
  reset: boolean;
  unsubscribe(): void;
}

/** Where a feed starts when it does not start with the build (see BuildFeed's constructor). */
export interface FeedStart {
  /** The build view at `seq`; without it the view starts empty. */
  view?: BuildViewSnapshot;
  /** The seq the feed is at: events at or below it were never taken in here. */
  seq: number;
  /** The build already finished: nobody is kept subscribed, there is nothing to stream. */
  ended?: boolean;
}

interface Subscriber {
  /** A returned promise means "busy until it settles": later events wait, coalesced, in `backlog`. */
  cb: (events: BuildEvent[]) => unknown;
  ready: boolean;
  closed: boolean;
  buffered: BuildEvent[];
  busy: boolean;
  backlog: SubscriberBacklog;
  maxBacklog: number;
  maxBacklogBytes: number;
  /** Highest seq handed to cb. */
  lastSeq: number;
  onOverflow?: (lastSeq: number) => void;
  pacesBuild: boolean;
}

export class BuildFeed {
  private _view: BuildView;
  private log: EventLog;
  private readonly subs = new Set<Subscriber>();
  /** Set once build.finished went in (or the feed started or was reset finished): nothing follows. */
  private ended = false;
  /** Events at or below this seq were never taken in (the feed started from a snapshot): -1 if none. */
  private notKeptThrough = -1;
  /** Resolvers of pacingReady() promises, settled when no pacing subscriber is busy any more. */
  private pacingWaiters: Array<() => void> = [];

  /** `from`: start from a snapshot taken elsewhere instead of from the build's first event. */
  constructor(
    readonly buildId: string,
    private readonly retainEvents: number,
    from?: FeedStart,
  ) {
    this._view = new BuildView(buildId);
    this.log = new EventLog(retainEvents);
    if (from) this.restart(from);
  }

  /** The build view (replaced, not mutated, by reset()). */
  get view(): BuildView {
    return this._view;
  }

  /** Highest seq taken in; -1 before the first event (the native layer numbers from 0). */
  get lastSeq(): number {
    return this._view.seq;
  }

  /** True once nothing more can follow (build.finished went in, or end()). */
  get isEnded(): boolean {
    return this.ended;
  }

  /**
   * Takes events in seq order: each goes into the view and the log and out to subscribers.
   * Stale ones (seq at or below lastSeq) and anything after build.finished are dropped; the
   * events actually taken are returned. `nowWall`: the caller's clock as they arrived (runs the
   * view's build clock between events, for a feed fed from afar).
   */
  push(events: readonly BuildEvent[], nowWall?: number): BuildEvent[] {
    const fresh: BuildEvent[] = [];
    for (const ev of events) {
      if (this.ended || ev.seq <= this._view.seq) continue;
      this._view.apply(ev, nowWall);
      this.log.append(ev);
      fresh.push(ev);
      if (ev.type === 'build.finished') this.ended = true;
    }
    this.broadcast(fresh);
    // Subscribers had the worker's JSON text of each event (SSE, --json) in broadcast; the log
    // keeps the events without it (a subscriber still waiting on a slow socket stringifies).
    for (const ev of fresh) forgetEventJson(ev);
    return fresh;
  }

  /** Subscribers still waiting for events (finished builds have none). */
  get subscriberCount(): number {
    return this.subs.size;
  }

  snapshot(): BuildViewSnapshot {
    return this._view.snapshot();
  }

  /** True when every event after `afterSeq` is still kept (a replay from it has no gap). */
  canReplayAfter(afterSeq: number): boolean {
    return afterSeq >= Math.max(this.log.droppedThrough, this.notKeptThrough);
  }

  /**
   * Jumps to a newer snapshot taken elsewhere (the events between were lost to this feed). Kept
   * events are forgotten: later subscribers resuming from before `from.seq` are reset. Current
   * subscribers that can resume (they gave onOverflow) are dropped through it, so they come back
   * with subscribe(afterSeq) and get the new view as a reset instead of a silent gap; the others
   * stay and get the events after it. Ignored unless it is newer than lastSeq.
   */
  reset(from: FeedStart): void {
    if (from.seq <= Math.max(this._view.seq, this.notKeptThrough)) return;
    this.restart(from);
    for (const sub of [...this.subs]) if (sub.onOverflow) this.overflow(sub);
  }

  /** The build ended without an event this feed saw (known from a record): release subscribers. */
  end(): void {
    this.ended = true;
    for (const sub of this.subs) if (sub.ready) this.subs.delete(sub);
    this.settlePacing();
  }

  private restart(from: FeedStart): void {
    this._view = from.view ? BuildView.fromSnapshot(from.view) : new BuildView(this.buildId);
    this.log = new EventLog(this.retainEvents);
    this.notKeptThrough = from.seq;
    if (from.ended) this.end();
  }

  subscribe(cb: (events: BuildEvent[]) => unknown, opts: FeedSubscribeOptions = {}): FeedSubscription {
    const view = this._view.snapshot();
    const { afterSeq } = opts;
    const reset = afterSeq !== undefined && afterSeq < Math.max(view.seq, this.notKeptThrough) && !this.canReplayAfter(afterSeq);
    const replay = afterSeq !== undefined && !reset ? this.log.after(afterSeq) : [];
    const sub: Subscriber = {
      cb,
      ready: false,
      closed: false,
      buffered: [],
      busy: false,
      backlog: new SubscriberBacklog(),
      maxBacklog: opts.maxBacklog ?? MAX_SUBSCRIBER_BACKLOG,
      maxBacklogBytes: opts.maxBacklogBytes ?? MAX_SUBSCRIBER_BACKLOG_BYTES,
      lastSeq: afterSeq !== undefined && !reset ? afterSeq : view.seq,
      onOverflow: opts.onOverflow,
      pacesBuild: opts.pacesBuild === true,
    };
    if (!this.ended) this.subs.add(sub);
    // Delivered after subscribe() returns, so the caller can send the snapshot first; live events
    // that arrive meanwhile are buffered behind the replay.
    queueMicrotask(() => {
      if (sub.closed) return;
      const first = replay.concat(sub.buffered);
      sub.ready = true;
      if (this.ended) this.subs.delete(sub);
      sub.buffered = [];
      if (first.length) this.deliver(sub, first);
    });
    return {
      view,
      reset,
      unsubscribe: () => {
        sub.closed = true;
        sub.backlog.clear();
        this.subs.delete(sub);
        this.settlePacing();
      },
    };
  }

  private broadcast(events: BuildEvent[]): void {
    if (events.length === 0) return;
    for (const sub of this.subs) {
      if (sub.ready) this.deliver(sub, events);
      else sub.buffered.push(...events);
    }
    if (this.ended) {
      // Nothing follows build.finished; pending replays still complete (they hold their own copy).
      for (const sub of this.subs) if (sub.ready) this.subs.delete(sub);
    }
  }

  private deliver(sub: Subscriber, events: BuildEvent[]): void {
    if (sub.closed || events.length === 0) return;
    if (sub.busy) {
      sub.backlog.push(events);
      if (sub.backlog.size > sub.maxBacklog || sub.backlog.bytes > sub.maxBacklogBytes) this.overflow(sub);
      return;
    }
    sub.lastSeq = events[events.length - 1].seq;
    let r: unknown;
    try {
      r = sub.cb(events);
    } catch {
      // One subscriber's bug must not starve the others (or the build).
      return;
    }
    if (r && typeof (r as PromiseLike<unknown>).then === 'function') {
      sub.busy = true;
      const resume = () => {
        sub.busy = false;
        // Still delivered after the build ended (the subscriber left `subs` then): it gets the
        // rest of the stream, build.finished included.
        if (!sub.closed) this.deliver(sub, sub.backlog.take());
        if (sub.pacesBuild) this.settlePacing();
      };
      (r as PromiseLike<unknown>).then(resume, resume);
    }
  }

  /**
   * Undefined when every subscriber that paces the build has room; otherwise a promise that
   * settles once none of them is busy (the worker's next batch waits for it).
   */
  pacingReady(): Promise<void> | undefined {
    if (!this.pacingBusy()) return undefined;
    return new Promise((resolve) => this.pacingWaiters.push(resolve));
  }

  private pacingBusy(): boolean {
    for (const sub of this.subs) if (sub.pacesBuild && sub.busy && !sub.closed) return true;
    return false;
  }

  private settlePacing(): void {
    if (this.pacingWaiters.length === 0 || this.pacingBusy()) return;
    for (const w of this.pacingWaiters.splice(0)) w();
  }

  private overflow(sub: Subscriber): void {
    sub.closed = true;
    sub.backlog.clear();
    this.subs.delete(sub);
    this.settlePacing();
    try {
      sub.onOverflow?.(sub.lastSeq);
    } catch {
      // As in deliver().
    }
  }
}
