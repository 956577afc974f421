// One way to follow a build: a stream cursor (stream-cursor.ts: snapshot first, each event once,
// resets) that owns the build view it feeds (build-view.ts). Every surface that shows a build as
// it runs follows it through this class: the Electron hub and taskbar feedback, the page (both
// hosts), MCP, LSP and the CLI. Before it, each surface paired its own cursor with its own view,
// and the order of those two steps (fold, then show) was repeated six times.
//
// What a follower is told, after the view has changed:
// - onReset(view, record): the view was started (first snapshot) or replaced (a reset); `view`
//   is a new object, drop whatever was derived from the old one;
// - onEvents(events, view): these events were folded into the view, in seq order, each once; a
//   batch comes in parts where the status changes, so every status is seen;
// - onRecord(record, view): a newer record of the build while the view stands (facts only).
// Folding happens here, once, with the follower's clock (the build clock runs between events).
//
// `followBuild` subscribes an in-process follower to a build service (BuildServiceApi.subscribe,
// described structurally here: apps/shared imports no service code). Pure otherwise: no I/O,
// no timers, no zod; the web page runs it.
import { BuildView, type BuildViewSnapshot, type PathLevel } from './build-view.js';
import { isFinalStatus } from './build-view.js';
import type { BuildEvent, BuildFinished, BuildRecord } from './protocol.js';
import type { SubscribeOpts, Subscription } from './build-service-api.js';
import { StreamCursor } from './stream-cursor.js';
import { viewFromRecord } from './view-format.js';

export interface LiveViewHandlers {
  /** The view started over (a first snapshot, or a reset): derived state goes with the old one. */
  onReset?(view: BuildView, record: BuildRecord | undefined, live: LiveView): void;
  /**
   * One event, right after it was folded (the view is as it stood then): for a follower that
   * tells each event as it happens (the CLI's plain log). Before onEvents for the batch.
   */
  onEvent?(event: BuildEvent, view: BuildView, live: LiveView): void;
  /** These events are in the view now: seq order, each once, none before the first snapshot. */
  onEvents?(events: BuildEvent[], view: BuildView, live: LiveView): void;
  /** A newer record while the view stands (a resume inside the kept window). */
  onRecord?(record: BuildRecord, view: BuildView, live: LiveView): void;
}

export interface LiveViewOptions {
  /** The follower's wall clock when events arrive; runs the build clock between events. */
  now?: () => number;
  /**
   * False for a follower that reads the events and never the view (the CLI's --json writes them
   * out as they are): events are handed on, each once and in seq order, without being folded,
   * and the view keeps only their seq (a reset still brings the whole view; end() its outcome).
   * In a CLI build the service's session folds every event already: a second fold of the same
   * events was a quarter of the CLI's CPU under a fast build (bench:worker-cpu's hostCpuS).
   */
  fold?: boolean;
}

export class LiveView {
  /** The build as the follower has it. Replaced (not patched) by a reset: hold the LiveView, not the view. */
  view: BuildView;
  /**
   * The current path just before build.finished closed every phase: for a crash without a crash
   * record, the deepest place the builder was seen at.
   */
  pathAtEnd: PathLevel[] = [];
  private readonly cursor: StreamCursor;
  private readonly now: () => number;
  private readonly folds: boolean;
  private release?: () => void;
  private released = false;

  constructor(
    readonly buildId: string,
    private readonly handlers: LiveViewHandlers = {},
    opts: LiveViewOptions = {},
  ) {
    this.view = new BuildView(buildId);
    this.now = opts.now ?? Date.now;
    this.folds = opts.fold !== false;
    this.cursor = new StreamCursor({
      applySnapshot: (record, snapshot) => this.start(record, snapshot),
      applyEvents: (events) => this.fold(events),
      applyRecord: (record) => this.noteLaterRecord(record),
    });
  }

  /** The latest record seen. */
  get record(): BuildRecord | undefined {
    return this.cursor.record;
  }

  /** build.finished is in the view (or a snapshot of a finished build was). */
  get finished(): boolean {
    return this.cursor.finished;
  }

  /** True once the view stands (a snapshot, or startEmpty): events are folded from then on. */
  get hasState(): boolean {
    return this.cursor.hasState;
  }

  /** Where to resume a dropped stream (SSE Last-Event-ID, subscribe's afterSeq). */
  get resumeAfter(): number | undefined {
    return this.cursor.resumeAfter;
  }

  // What arrives, in any order (the cursor sorts it out): the stream contract's four messages.

  /** An in-process subscription's snapshot: the record plus, when the host has one, the view. */
  snapshot(record: BuildRecord, view?: BuildViewSnapshot): void {
    this.cursor.snapshot(record, view);
  }

  /** A complete view to start over from (SSE `event: reset`). */
  reset(view: BuildViewSnapshot, record?: BuildRecord): void {
    this.cursor.reset(view, record);
  }

  /** The build's record (SSE `event: snapshot`): facts only once the view stands. */
  noteRecord(record: BuildRecord): void {
    this.cursor.noteRecord(record);
  }

  /** The follower starts from nothing and is sent every event from the first (afterSeq -1). */
  startEmpty(): void {
    this.cursor.startEmpty();
  }

  events(events: readonly BuildEvent[]): void {
    this.cursor.events(events);
  }

  /**
   * The build ended (its result can come before its event: waitForResult): the view ends with it
   * too, so what is shown and the result agree. Nothing when the view already has an outcome.
   */
  end(outcome: BuildFinished): void {
    if (this.view.outcome) return;
    this.pathAtEnd = this.view.currentPath();
    this.view.apply({ ...outcome, seq: Math.max(outcome.seq, this.view.seq + 1) }, this.now());
  }

  /** Stops the subscription followBuild opened (also from inside a handler while it opens). */
  unsubscribe(): void {
    if (this.released) return;
    this.released = true;
    this.release?.();
  }

  /**
   * Subscribes this view to its build (see followBuild) and returns it. Throws what subscribe
   * throws (an unknown build) with nothing left subscribed.
   */
  follow(source: FollowSource, opts: Omit<FollowOptions, 'now'> = {}): this {
    const sub = source.subscribe(
      this.buildId,
      (events) => {
        this.events(events);
        return opts.backpressure?.();
      },
      {
        ...(opts.fromStart ? { afterSeq: -1 } : {}),
        ...(opts.pacesBuild !== undefined ? { pacesBuild: opts.pacesBuild } : {}),
        ...(opts.maxBacklog !== undefined ? { maxBacklog: opts.maxBacklog } : {}),
        ...(opts.maxBacklogBytes !== undefined ? { maxBacklogBytes: opts.maxBacklogBytes } : {}),
        ...(opts.onOverflow ? { onOverflow: opts.onOverflow } : {}),
      },
    );
    // Before the snapshot: a handler may stop following from inside it (a build that ended).
    this.release = () => sub.unsubscribe();
    if (!opts.fromStart) this.snapshot(sub.snapshot, sub.view);
    else if (sub.reset && sub.view) this.reset(sub.view, sub.snapshot);
    else this.startEmpty();
    return this;
  }

  private start(record: BuildRecord | undefined, snapshot: BuildViewSnapshot | undefined): void {
    // Without a view snapshot (a host that has none) the record gives the state and outcome.
    this.view = snapshot ? BuildView.fromSnapshot(snapshot) : record ? viewFromRecord(record) : new BuildView(this.buildId);
    this.pathAtEnd = [];
    this.handlers.onReset?.(this.view, record, this);
  }

  private fold(events: BuildEvent[]): void {
    if (!this.folds) {
      this.handOn(events);
      return;
    }
    const now = this.now();
    const view = this.view;
    let fresh: BuildEvent[] = [];
    for (const ev of events) {
      if (ev.type === 'build.finished' && !view.outcome) this.pathAtEnd = view.currentPath();
      const before = view.status;
      // Only end() can have moved the view past the cursor (an outcome folded ahead of its event).
      if (!view.apply(ev, now)) continue;
      fresh.push(ev);
      this.handlers.onEvent?.(ev, view, this);
      // A batch is handed over in parts where the status changes, so that a follower sees every
      // status the build passes through ("stopping" and the phases it stopped in, even when the
      // cancel and the unwinding arrive together).
      if (view.status !== before && ev !== events[events.length - 1]) {
        this.handlers.onEvents?.(fresh, view, this);
        fresh = [];
      }
    }
    if (fresh.length > 0) this.handlers.onEvents?.(fresh, view, this);
  }

  /** fold: false: the events go on as they are; the view's seq follows them (replays are dropped). */
  private handOn(events: BuildEvent[]): void {
    const view = this.view;
    const fresh = events.filter((ev) => ev.seq > view.seq);
    if (fresh.length === 0) return;
    view.seq = fresh[fresh.length - 1].seq;
    for (const ev of fresh) this.handlers.onEvent?.(ev, view, this);
    this.handlers.onEvents?.(fresh, view, this);
  }

  private noteLaterRecord(record: BuildRecord): void {
    // Nothing folded yet (a follower that started empty): the record says at least whether the
    // build still waits or is being stopped. A final state waits for its events (the replay).
    if (this.view.seq < 0 && this.view.status === 'queued') {
      if (!isFinalStatus(record.state)) this.view.status = record.state;
    }
    this.handlers.onRecord?.(record, this.view, this);
  }
}

/**
 * The part of a build service a follower needs: the service's own subscribe
 * (build-service-api.ts), except that a source without a view (a host that keeps none) may leave
 * `view` and `reset` out; the follower then starts from the record.
 */
export interface FollowSource {
  subscribe(
    id: string,
    onEvents: (events: BuildEvent[]) => unknown,
    opts?: SubscribeOpts,
  ): Pick<Subscription, 'snapshot' | 'unsubscribe'> & Partial<Pick<Subscription, 'view' | 'reset'>>;
}

export interface FollowOptions extends LiveViewOptions {
  /**
   * Follow from the build's first event (afterSeq -1) with an empty view, instead of from the
   * service's snapshot: for a follower that must see every event itself (the CLI's --json).
   * A reset (the first events are no longer kept) still starts it from the snapshot.
   */
  fromStart?: boolean;
  /** Back-pressure: a pending promise holds the next delivery (and, with pacesBuild, the worker). */
  backpressure?: () => unknown;
  pacesBuild?: boolean;
  maxBacklog?: number;
  /** The backlog's bound in bytes (the service drops a subscriber past it; see BuildService.subscribe). */
  maxBacklogBytes?: number;
  /** The service dropped this follower for falling behind (its backlog passed a bound). */
  onOverflow?: (lastSeq: number) => void;
}

/**
 * Subscribes to a build and follows it through a LiveView. Throws what subscribe throws (an
 * unknown build) with nothing left subscribed. Handlers may run before this returns (events the
 * subscription delivers at once, then the snapshot): use the `live` they are given.
 */
export function followBuild(source: FollowSource, id: string, handlers: LiveViewHandlers, opts: FollowOptions = {}): LiveView {
  return new LiveView(id, handlers, opts).follow(source, opts);
}
