// Everything the UI knows about the build being watched: the shared build view (rows, status,
// build clock, last callback, current path, progress — apps/shared/build-view.ts, the same fold
// every surface uses) plus what only this UI needs (the log ring, the Stop button's state, the
// words of the status line). Plain mutable objects outside React: thousands of events per frame
// are applied here, and React is told once per animation frame (see event-pump.ts).
import { BuildView, isFinalStatus, type BuildViewSnapshot, type ViewStatus } from '../../shared/build-view.js';
import type { BuildEvent, BuildFinished, BuildRecord, BuildState, CacheStats } from '../../shared/protocol.js';
import { LogRing } from './log-ring.js';
import { crashSite, formatCrashSite } from '../../shared/view-format.js';

/** What the status line says. Exactly one of these words appears in it. */
export type UiStatus = 'Idle' | 'Building' | 'Stopping' | 'Succeeded' | 'Cancelled' | 'Failed' | 'Crashed';

const WORDS: Record<ViewStatus, UiStatus> = {
  queued: 'Building',
  running: 'Building',
  stopping: 'Stopping',
  succeeded: 'Succeeded',
  cancelled: 'Cancelled',
  failed: 'Failed',
  crashed: 'Crashed',
};

function viewStatusOf(state: BuildState): ViewStatus {
  return state === 'cancelling' ? 'stopping' : state;
}

export function statusOfState(state: BuildState): UiStatus {
  return WORDS[viewStatusOf(state)];
}

export function isFinal(s: UiStatus): boolean {
  return s === 'Succeeded' || s === 'Cancelled' || s === 'Failed' || s === 'Crashed';
}

export class LiveBuild {
  /** Replaced as a whole when the stream resets (applySnapshot with a view). */
  view: BuildView;
  readonly logs = new LogRing();
  backend?: 'tensorrt' | 'simulated';
  backendVersion?: string;
  simulated?: boolean;
  gpu?: string | null;
  outputPath?: string;
  engineAvailable = false;
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

  constructor(readonly id: string) {
    this.view = new BuildView(id);
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

  get status(): UiStatus {
    if (this.idle) return 'Idle';
    const s = this.view.status;
    if (this.stopPressed && (s === 'queued' || s === 'running')) return 'Stopping';
    return WORDS[s];
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
    this.backend = rec.backend ?? this.backend;
    this.backendVersion = rec.backendVersion ?? this.backendVersion;
    this.simulated = rec.simulated ?? this.simulated;
    this.outputPath = rec.outputPath ?? this.outputPath;
    if (view) {
      if (view.seq < this.view.seq) return;
      this.view = BuildView.fromSnapshot(view);
      this.takeLogsFrom(this.view);
      if (this.view.outcome) this.logCrash(this.view.outcome);
      if (view.started) this.gpu = view.started.gpu;
      this.engineAvailable = rec.engineAvailable;
    } else if (this.view.seq < 0 && this.view.status === 'queued') {
      // Nothing folded yet: the record says at least whether it is still waiting or stopping.
      const s = viewStatusOf(rec.state);
      if (!isFinalStatus(s)) this.view.status = s;
    }
    if (rec.outcome && this.view.outcome) this.engineAvailable = rec.engineAvailable;
    if (this.view.status === 'stopping') this.stopRequestedWall ??= nowWall;
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
    let applied = 0;
    for (const ev of events) {
      if (ev.type === 'log' && ev.seq > this.lastLogSeq) {
        this.lastLogSeq = ev.seq;
        this.logs.push({ seq: ev.seq, t: ev.t, severity: ev.severity, message: ev.message });
      }
      if (!this.view.apply(ev, nowWall)) continue;
      applied++;
      this.idle = false;
      switch (ev.type) {
        case 'build.started':
          this.backend = ev.backend;
          this.backendVersion = ev.backendVersion;
          this.simulated = ev.simulated;
          this.gpu = ev.gpu;
          this.outputPath = ev.outputPath;
          break;
        case 'heartbeat':
          if (ev.cancelRequested) this.stopRequestedWall ??= nowWall;
          break;
        case 'build.cancelling':
          this.stopRequestedWall ??= nowWall;
          break;
        case 'build.finished':
          if (ev.outputPath) this.outputPath = ev.outputPath;
          this.engineAvailable = ev.status === 'succeeded' && (ev.engineBytes ?? 0) > 0;
          this.logCrash(ev);
          break;
        default:
          break;
      }
    }
    this.eventsApplied += applied;
    return applied;
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
