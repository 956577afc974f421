// Everything the UI knows about the build being watched: the shared build view (rows, status,
// build clock, last callback, current path, progress — apps/shared/build-view.ts, the same fold
// every surface uses) plus what only this UI needs (the log ring, the Stop button's state, the
// words of the status line). Plain mutable objects outside React: thousands of events per frame
// are applied here, and React is told once per animation frame (see event-pump.ts).
import { isFinalStatus, stateOf, type BuildView, type BuildViewSnapshot } from '../../shared/build-view.js';
import { LiveView } from '../../shared/live-view.js';
import type { BuildEvent, BuildFinished, BuildRecord, BuildState, CacheStats } from '../../shared/protocol.js';
import { LogRing } from './log-ring.js';
import { crashSite, formatCrashSite } from '../../shared/view-format.js';

/** What the status line says. Exactly one of these words appears in it. */
export type UiStatus = 'Idle' | 'Building' | 'Stopping' | 'Succeeded' | 'Cancelled' | 'Failed' | 'Crashed';

const WORDS: Record<BuildState, UiStatus> = {
  queued: 'Building',
  running: 'Building',
  cancelling: 'Stopping',
  succeeded: 'Succeeded',
  cancelled: 'Cancelled',
  failed: 'Failed',
  crashed: 'Crashed',
};

export function statusOfState(state: BuildState): UiStatus {
  return WORDS[state];
}

export function isFinal(s: UiStatus): boolean {
  return s === 'Succeeded' || s === 'Cancelled' || s === 'Failed' || s === 'Crashed';
}

export class LiveBuild {
  /**
   * The build as this page follows it (apps/shared/live-view.ts): snapshot first, each event
   * once, a reset replaces the view. Both hosts' streams (Electron's IPC, the web client's SSE)
   * come through it, so the page folds every event exactly once.
   */
  private readonly live: LiveView;
  readonly logs = new LogRing();
  /** The latest record of the build (a snapshot's): facts the events have not told yet. */
  private record?: BuildRecord;
  private lastLogSeq = -1;
  /** Protocol events applied (after coalescing upstream; seq counts the callbacks behind them). */
  eventsApplied = 0;
  /** Wall clock when Stop was pressed or build.cancelling arrived. */
  stopRequestedWall?: number;
  /** Stop was pressed a second time: the service kills the worker instead of waiting. */
  forceRequested = false;
  /** Stop was pressed here; shown as Stopping before the service confirms. */
  private stopPressed = false;
  /** Nothing known yet (no snapshot, no event, no start): the status line says Idle. */
  private idle = true;
  /** The caller's clock for what is being applied now. */
  private nowWall = 0;

  constructor(readonly id: string) {
    this.live = new LiveView(
      id,
      {
        onReset: (view) => {
          this.takeLogsFrom(view);
          if (view.outcome) this.logCrash(view.outcome);
        },
        onEvents: (events) => this.folded(events),
      },
      { now: () => this.nowWall },
    );
    // The page starts with nothing and takes every event from the first (a fresh build), or
    // starts over from a snapshot's view (a build joined late, a reset).
    this.live.startEmpty();
  }

  /** The build view; replaced as a whole when the stream resets. */
  get view(): BuildView {
    return this.live.view;
  }

  get phases() {
    return this.view.rows;
  }

  get cache(): CacheStats | undefined {
    return this.view.cache;
  }

  get outcome(): BuildFinished | undefined {
    return this.view.outcome;
  }

  get lastSeq(): number {
    return this.view.seq;
  }

  // What the build runs on and writes, from the view (build.started, build.finished) and, before
  // those events, from the record.
  get backend(): 'tensorrt' | 'simulated' | undefined {
    return this.view.started?.backend ?? this.record?.backend;
  }

  get backendVersion(): string | undefined {
    return this.view.started?.backendVersion ?? this.record?.backendVersion;
  }

  get simulated(): boolean | undefined {
    return this.view.started?.simulated ?? this.record?.simulated;
  }

  get gpu(): string | null | undefined {
    return this.view.started?.gpu;
  }

  get outputPath(): string | undefined {
    return this.view.outcome?.outputPath ?? this.view.started?.outputPath ?? this.record?.outputPath;
  }

  /**
   * The engine can be saved: the service's record says so once it knows the end (the file may
   * have been removed since); a build seen ending here wrote one when it succeeded with bytes.
   */
  get engineAvailable(): boolean {
    if (this.engineFromRecord && this.record) return this.record.engineAvailable;
    const o = this.view.outcome;
    return o !== undefined && o.status === 'succeeded' && (o.engineBytes ?? 0) > 0;
  }

  /** The view came from a snapshot (the record's engineAvailable goes with it) until an event ends it. */
  private engineFromRecord = false;

  get status(): UiStatus {
    if (this.idle) return 'Idle';
    return WORDS[stateOf(this.view, { stopRequested: this.stopPressed })];
  }

  /** The controller marks a build it just started as Building before any event arrives. */
  set status(s: UiStatus) {
    if (s !== 'Idle') this.idle = false;
    if (s === 'Stopping') this.stopPressed = true;
  }

  /**
   * Applies a snapshot: the build's record, and with it (on subscribing, and whenever the stream
   * was reset because events were no longer kept) the build view's complete snapshot, which
   * replaces everything folded so far: the tree is rebuilt from it, never patched. A record
   * alone (a resume inside the kept window, whose replay fills the gap) updates the facts only.
   */
  applySnapshot(rec: BuildRecord, view: BuildViewSnapshot | undefined, nowWall: number): void {
    this.idle = false;
    this.nowWall = nowWall;
    this.record = rec;
    this.live.snapshot(rec, view);
    if (view || (rec.outcome && this.view.outcome)) this.engineFromRecord = true;
    if (this.view.status === 'cancelling') this.stopRequestedWall ??= nowWall;
  }

  /**
   * The log lines a snapshot carries that this build has not shown yet (a past build picked from
   * the history, a reload, a reset), with a note where the view no longer kept older ones.
   */
  private takeLogsFrom(view: BuildView): void {
    const lines = view.logs.lines().filter((l) => l.seq > this.lastLogSeq);
    if (lines.length === 0) return;
    if (view.logs.dropped > 0) {
      const note = this.lastLogSeq < 0 ? `${view.logs.dropped} earlier lines are not kept for a late viewer` : 'earlier lines may be missing here (the stream was reset)';
      this.logs.push({ seq: lines[0].seq - 0.5, t: lines[0].t, severity: 'info', message: `… ${note}` });
    }
    for (const l of lines) this.logs.push(l);
    this.lastLogSeq = lines[lines.length - 1].seq;
  }

  /** Applies live events in seq order; returns how many were new. */
  applyEvents(events: readonly BuildEvent[], nowWall: number): number {
    for (const ev of events) {
      if (ev.type === 'log' && ev.seq > this.lastLogSeq) {
        this.lastLogSeq = ev.seq;
        this.logs.push({ seq: ev.seq, t: ev.t, severity: ev.severity, message: ev.message });
      }
    }
    this.nowWall = nowWall;
    const before = this.eventsApplied;
    this.live.events(events);
    return this.eventsApplied - before;
  }

  /** Events the live view just folded in. */
  private folded(events: readonly BuildEvent[]): void {
    this.idle = false;
    this.eventsApplied += events.length;
    for (const ev of events) {
      if (ev.type === 'build.cancelling' || (ev.type === 'heartbeat' && ev.cancelRequested)) this.stopRequestedWall ??= this.nowWall;
      if (ev.type === 'build.finished') {
        this.engineFromRecord = false;
        this.logCrash(ev);
      }
    }
  }

  /**
   * A crash leaves no line of TensorRT's in the log (the worker died before it could write one):
   * the log gets the service's full message, once, as its last line, so the log tells the whole
   * story and the status line can keep to the short form.
   */
  private logCrash(o: BuildFinished): void {
    if (o.status !== 'crashed' || this.crashLogged) return;
    this.crashLogged = true;
    const site = crashSite(o);
    const message = o.error ?? (site ? `the build worker ${formatCrashSite(site)}` : 'the build worker crashed');
    this.logs.push({ seq: o.seq + 0.5, t: o.t, severity: 'error', message: `Build crashed: ${message}` });
  }

  private crashLogged = false;

  /** The user pressed Stop; the status says so before the service confirms. */
  markStopRequested(nowWall: number): void {
    if (!isFinalStatus(this.view.status)) this.stopPressed = true;
    this.stopRequestedWall ??= nowWall;
  }

  /** Build time now: elapsed ms since start, frozen once finished (the shared build clock). */
  elapsedMs(nowWall: number): number {
    return this.view.elapsedMs(nowWall);
  }

  sinceLastCallbackMs(nowWall: number): number | undefined {
    return this.view.sinceLastCallbackMs(nowWall);
  }
}
