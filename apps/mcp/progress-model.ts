// What an MCP progress notification needs to know about a running build, folded from the
// protocol's event stream: where the builder is (the phase path), roughly how far along it is, and
// how long TensorRT has been silent. Pure: the caller passes the wall clock in, so tests can replay
// a synthetic stream without timers.
import type { BuildEvent, BuildRecord, BuildStatus, CancelReason } from '../shared/protocol.js';
import { formatPhasePath, phaseNames } from './phase-summary.js';

interface OpenPhase {
  id: number;
  parentId: number | null;
  name: string;
  nbSteps: number;
  stepsDone: number;
  /** Open children in start order; the last one is where the builder is inside this phase. */
  children: number[];
  /** Rises on start, step, and when a child finishes (the parent is "current" again). */
  activity: number;
}

export type ModelState = 'queued' | 'running' | 'cancelling' | 'finished';

export interface CurrentPhase {
  names: string[];
  stepsDone: number;
  nbSteps: number;
}

export class BuildProgressModel {
  state: ModelState = 'queued';
  backend?: string;
  simulated?: boolean;
  cancelReason?: CancelReason;
  status?: BuildStatus;
  /** Wall time (ms) of the first event of the build; undefined while queued. */
  startedAtWall?: number;
  /** Wall time (ms) of the last TensorRT callback we know of (phase event or native heartbeat). */
  lastCallbackWall?: number;
  /** Highest seq applied; events at or below it are replays and ignored. */
  lastSeq = -1;

  // Finished phases are dropped so memory stays flat over builds with millions of callbacks; only
  // open phases and the count of finished top-level phases matter for the path and the estimate.
  private readonly open = new Map<number, OpenPhase>();
  private readonly openRoots: number[] = [];
  private finishedRoots = 0;
  private tick = 0;

  /** Starts from a service snapshot (a build that was already running, or queued). */
  applySnapshot(record: BuildRecord, nowWall: number): void {
    this.lastSeq = record.lastSeq;
    this.backend = record.backend;
    this.simulated = record.simulated;
    if (record.state === 'queued') this.state = 'queued';
    else if (record.state === 'running') this.state = 'running';
    else if (record.state === 'cancelling') this.state = 'cancelling';
    else {
      this.state = 'finished';
      this.status = record.state;
    }
    if (record.startedAt) this.startedAtWall = Date.parse(record.startedAt);
    const sorted = [...record.phases].sort((a, b) => a.startT - b.startT || a.id - b.id);
    for (const p of sorted) {
      if (p.endT === undefined) {
        this.openPhase(p.id, p.parentId, p.name, p.nbSteps);
        this.open.get(p.id)!.stepsDone = p.stepsDone;
      } else if (p.parentId === null) {
        this.finishedRoots += 1;
      }
    }
    if (sorted.length > 0 && this.state !== 'queued') this.lastCallbackWall ??= nowWall;
  }

  apply(ev: BuildEvent, nowWall: number): void {
    if (ev.seq <= this.lastSeq) return;
    this.lastSeq = ev.seq;
    if (this.startedAtWall === undefined) this.startedAtWall = nowWall - ev.t;
    switch (ev.type) {
      case 'build.started':
        if (this.state === 'queued') this.state = 'running';
        this.backend = ev.backend;
        this.simulated = ev.simulated;
        break;
      case 'phase.start':
        this.sawCallback(nowWall);
        this.openPhase(ev.id, ev.parentId, ev.name, ev.nbSteps);
        break;
      case 'phase.step': {
        this.sawCallback(nowWall);
        const p = this.open.get(ev.id);
        if (p) {
          p.stepsDone = Math.max(p.stepsDone, ev.stepsDone);
          p.activity = ++this.tick;
        }
        break;
      }
      case 'phase.finish':
        this.sawCallback(nowWall);
        this.closePhase(ev.id);
        break;
      case 'heartbeat':
        if (this.state === 'queued') this.state = 'running';
        // The native layer sees callbacks that coalescing hid from us; trust its clock when newer.
        this.lastCallbackWall = Math.max(this.lastCallbackWall ?? -Infinity, nowWall - ev.sinceLastCallbackMs);
        break;
      case 'build.cancelling':
        if (this.state !== 'finished') this.state = 'cancelling';
        this.cancelReason = ev.reason;
        break;
      case 'build.finished':
        this.state = 'finished';
        this.status = ev.status;
        break;
      default:
        break;
    }
  }

  /** Where the builder is now: the most recently active open phase and its ancestors. */
  current(): CurrentPhase | undefined {
    let best: OpenPhase | undefined;
    for (const p of this.open.values()) if (!best || p.activity > best.activity) best = p;
    if (!best) return undefined;
    return { names: phaseNames(this.open, best.id), stepsDone: best.stepsDone, nbSteps: best.nbSteps };
  }

  /**
   * Estimated fraction done, 0..1, from the open phases: a phase counts its finished steps plus the
   * estimate of its newest open child for the running step. It can dip (a new child starts at 0
   * before the parent steps), so callers must clamp it; see MonotonicProgress.
   */
  fraction(): number {
    if (this.state === 'finished') return this.status === 'succeeded' ? 1 : this.estimate();
    return this.estimate();
  }

  private estimate(): number {
    const root = this.openRoots.length ? this.open.get(this.openRoots[this.openRoots.length - 1]) : undefined;
    if (!root) return this.finishedRoots > 0 ? 1 : 0;
    // TensorRT 10 has one root ("Building engine"); further roots are treated as one more unit each.
    return (this.finishedRoots + this.phaseFraction(root, 0)) / (this.finishedRoots + 1);
  }

  private phaseFraction(p: OpenPhase, depth: number): number {
    if (p.nbSteps <= 0 || depth > 64) return 0;
    const childId = p.children[p.children.length - 1];
    const child = childId === undefined ? undefined : this.open.get(childId);
    const inStep = child ? this.phaseFraction(child, depth + 1) : 0;
    return Math.min(1, (Math.min(p.stepsDone, p.nbSteps) + inStep) / p.nbSteps);
  }

  private sawCallback(nowWall: number): void {
    if (this.state === 'queued') this.state = 'running';
    this.lastCallbackWall = Math.max(this.lastCallbackWall ?? -Infinity, nowWall);
  }

  private openPhase(id: number, parentId: number | null, name: string, nbSteps: number): void {
    this.open.set(id, { id, parentId, name, nbSteps, stepsDone: 0, children: [], activity: ++this.tick });
    const parent = parentId === null ? undefined : this.open.get(parentId);
    if (parent) parent.children.push(id);
    else if (parentId === null) this.openRoots.push(id);
  }

  private closePhase(id: number): void {
    const p = this.open.get(id);
    if (!p) return;
    this.open.delete(id);
    if (p.parentId === null) {
      this.openRoots.splice(this.openRoots.indexOf(id), 1);
      this.finishedRoots += 1;
      return;
    }
    const parent = this.open.get(p.parentId);
    if (parent) {
      parent.children.splice(parent.children.indexOf(id), 1);
      parent.activity = ++this.tick;
    }
  }
}

/** "0.4 s", "3.2 s", "12 s", "4 min 05 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.floor(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** "Building engine › Timing graph nodes 7/12". */
export function formatCurrentPhase(cur: CurrentPhase): string {
  return `${formatPhasePath(cur.names)} ${Math.min(cur.stepsDone, cur.nbSteps)}/${cur.nbSteps}`;
}

const REASON_WORDS: Record<CancelReason, string> = {
  user: 'cancel requested',
  timeout: 'time budget exhausted',
  shutdown: 'server shutting down',
};

export interface MessageOptions {
  /** Silence longer than this is called out as "still building". */
  silentAfterMs?: number;
}

/** The human line of a progress notification: phase path plus time since the last callback. */
export function progressMessage(model: BuildProgressModel, nowWall: number, opts: MessageOptions = {}): string {
  const silentAfterMs = opts.silentAfterMs ?? 2000;
  if (model.state === 'queued') return 'queued: waiting for an earlier build on this GPU to finish';
  const cur = model.current();
  const where = cur ? formatCurrentPhase(cur) : 'preparing the build (parsing the model)';
  const since =
    model.lastCallbackWall === undefined
      ? `no TensorRT callback yet, ${formatDuration(nowWall - (model.startedAtWall ?? nowWall))} since start`
      : `last TensorRT callback ${formatDuration(nowWall - model.lastCallbackWall)} ago`;
  if (model.state === 'cancelling') {
    return `stopping (${REASON_WORDS[model.cancelReason ?? 'user']}), waiting for the next step boundary: ${where} · ${since}`;
  }
  if (model.state === 'finished') return `build ${model.status ?? 'finished'}: ${where}`;
  const silent = model.lastCallbackWall !== undefined && nowWall - model.lastCallbackWall >= silentAfterMs;
  return `${silent ? 'still building: ' : ''}${where} · ${since}`;
}
