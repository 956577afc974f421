// Everything the UI knows about the build being watched, updated by applying protocol events.
// Plain mutable objects outside React: thousands of events per frame are applied here, and React
// is told once per animation frame (see event-pump.ts).
import type { BuildEvent, BuildFinished, BuildRecord, BuildState, CacheStats } from '../../shared/protocol.js';
import { LogRing } from './log-ring.js';
import { PhaseRows } from './phase-rows.js';

/** What the status line says. Exactly one of these words appears in it. */
export type UiStatus = 'Idle' | 'Building' | 'Stopping' | 'Succeeded' | 'Cancelled' | 'Failed' | 'Crashed';

export function statusOfState(state: BuildState): UiStatus {
  switch (state) {
    case 'queued':
    case 'running':
      return 'Building';
    case 'cancelling':
      return 'Stopping';
    case 'succeeded':
      return 'Succeeded';
    case 'cancelled':
      return 'Cancelled';
    case 'failed':
      return 'Failed';
    case 'crashed':
      return 'Crashed';
  }
}

export function isFinal(s: UiStatus): boolean {
  return s === 'Succeeded' || s === 'Cancelled' || s === 'Failed' || s === 'Crashed';
}

export class LiveBuild {
  readonly phases = new PhaseRows();
  readonly logs = new LogRing();
  status: UiStatus = 'Idle';
  backend?: 'tensorrt' | 'simulated';
  backendVersion?: string;
  simulated?: boolean;
  gpu?: string | null;
  outputPath?: string;
  cache?: CacheStats;
  outcome?: BuildFinished;
  engineAvailable = false;
  /** Highest seq applied; anything at or below it is a replay and is skipped. */
  lastSeq = -1;
  private lastLogSeq = -1;
  /** Protocol events applied (after coalescing upstream; seq counts the callbacks behind them). */
  eventsApplied = 0;
  /** Build time (ms since build start) of the newest event. */
  lastT = 0;
  /** Wall clock (ms) that corresponds to build time 0; set from the first event seen. */
  wallAtT0?: number;
  /** Wall clock of the last TensorRT callback (a phase event, or as a heartbeat reports it). */
  lastCallbackWall?: number;
  /** Wall clock when Stop was pressed or build.cancelling arrived. */
  stopRequestedWall?: number;
  /** Stop was pressed a second time: the service kills the worker instead of waiting. */
  forceRequested = false;
  /** Wall clock of build.finished, to freeze the elapsed time. */
  finishedWall?: number;

  constructor(readonly id: string) {}

  /** Applies a snapshot (the state of the build when we subscribed, or after a reconnect). */
  applySnapshot(rec: BuildRecord, nowWall: number): void {
    // A reconnect sends a snapshot again. Our rows have counted every instance we saw, while a
    // snapshot holds only the phases the service still keeps, so the tree stays ours and the
    // replayed events fill the gap; only a finished outcome is taken from it.
    if (this.lastSeq >= 0) {
      if (rec.outcome && !this.outcome) {
        this.outcome = rec.outcome;
        this.status = statusOfState(rec.state);
        this.engineAvailable = rec.engineAvailable;
        this.cache = rec.cache ?? rec.outcome.cache ?? this.cache;
        this.finishedWall = nowWall;
        this.phases.closeAll(rec.outcome.t);
      }
      return;
    }
    this.phases.loadSnapshot(rec.phases);
    this.lastSeq = rec.lastSeq;
    this.backend = rec.backend;
    this.backendVersion = rec.backendVersion;
    this.simulated = rec.simulated;
    this.outputPath = rec.outputPath;
    this.cache = rec.cache ?? rec.outcome?.cache;
    this.outcome = rec.outcome;
    this.engineAvailable = rec.engineAvailable;
    this.status = statusOfState(rec.state);
    if (rec.startedAt) this.wallAtT0 = Date.parse(rec.startedAt);
    if (rec.finishedAt) this.finishedWall = Date.parse(rec.finishedAt);
    if (this.status === 'Stopping') this.stopRequestedWall ??= nowWall;
    this.lastT = Math.max(this.lastT, this.phases.lastT);
  }

  /** Applies live events in seq order; returns how many were new. */
  applyEvents(events: readonly BuildEvent[], nowWall: number): number {
    let applied = 0;
    for (const ev of events) {
      if (ev.seq <= this.lastSeq) {
        // Logs are not in the snapshot; the replay that follows it brings them.
        if (ev.type === 'log' && ev.seq > this.lastLogSeq) {
          this.lastLogSeq = ev.seq;
          this.logs.push({ seq: ev.seq, t: ev.t, severity: ev.severity, message: ev.message });
        }
        continue;
      }
      this.lastSeq = ev.seq;
      applied++;
      this.apply(ev, nowWall);
    }
    this.eventsApplied += applied;
    return applied;
  }

  private apply(ev: BuildEvent, nowWall: number): void {
    if (ev.t > this.lastT) this.lastT = ev.t;
    this.wallAtT0 ??= nowWall - ev.t;
    switch (ev.type) {
      case 'build.started':
        this.backend = ev.backend;
        this.backendVersion = ev.backendVersion;
        this.simulated = ev.simulated;
        this.gpu = ev.gpu;
        this.outputPath = ev.outputPath;
        if (this.status === 'Idle') this.status = 'Building';
        break;
      case 'phase.start':
        this.phases.start(ev.id, ev.parentId, ev.name, ev.nbSteps, ev.t);
        this.lastCallbackWall = nowWall;
        break;
      case 'phase.step':
        this.phases.step(ev.id, ev.stepsDone, ev.t);
        this.lastCallbackWall = nowWall;
        break;
      case 'phase.finish':
        this.phases.finish(ev.id, ev.stepsDone, ev.early, ev.t);
        this.lastCallbackWall = nowWall;
        break;
      case 'log':
        if (ev.seq > this.lastLogSeq) {
          this.lastLogSeq = ev.seq;
          this.logs.push({ seq: ev.seq, t: ev.t, severity: ev.severity, message: ev.message });
        }
        break;
      case 'cache.stats': {
        const { v: _v, buildId: _b, seq: _s, t: _t, type: _type, ...stats } = ev;
        this.cache = stats;
        break;
      }
      case 'heartbeat': {
        // The heartbeat says how long the builder has been silent, measured natively.
        const wall = nowWall - ev.sinceLastCallbackMs;
        if (this.lastCallbackWall === undefined || wall > this.lastCallbackWall) this.lastCallbackWall = wall;
        if (ev.cancelRequested && this.status === 'Building') {
          this.status = 'Stopping';
          this.stopRequestedWall ??= nowWall;
        }
        break;
      }
      case 'build.cancelling':
        if (!isFinal(this.status)) this.status = 'Stopping';
        this.stopRequestedWall ??= nowWall;
        break;
      case 'build.finished':
        this.outcome = ev;
        if (ev.cache) this.cache = ev.cache;
        if (ev.outputPath) this.outputPath = ev.outputPath;
        this.engineAvailable = ev.status === 'succeeded' && (ev.engineBytes ?? 0) > 0;
        this.status = statusOfState(ev.status);
        this.finishedWall = nowWall;
        this.phases.closeAll(ev.t);
        break;
    }
  }

  /** The user pressed Stop; the status says so before the service confirms. */
  markStopRequested(nowWall: number): void {
    if (this.status === 'Building') this.status = 'Stopping';
    this.stopRequestedWall ??= nowWall;
  }

  /** Build time now: elapsed ms since start, frozen once finished. */
  elapsedMs(nowWall: number): number {
    if (this.outcome) return this.outcome.durationMs;
    if (this.wallAtT0 === undefined) return 0;
    return Math.max(this.lastT, (this.finishedWall ?? nowWall) - this.wallAtT0);
  }

  sinceLastCallbackMs(nowWall: number): number | undefined {
    if (this.lastCallbackWall === undefined) return undefined;
    return Math.max(0, nowWall - this.lastCallbackWall);
  }
}
