// What an MCP progress notification needs to know about a running build, folded from the
// protocol's event stream: where the builder is (the phase path), how much work TensorRT has
// reported, and how long it has been silent. Pure: the caller passes the wall clock in, so tests
// can replay a synthetic stream without timers.
import type { BuildEvent, BuildRecord, BuildStatus, CancelReason, PhaseNode } from '../shared/protocol.js';
import { PATH_SEPARATOR } from './phase-summary.js';

interface OpenPhase {
  id: number;
  parentId: number | null;
  name: string;
  nbSteps: number;
  stepsDone: number;
  /** Rises on start, step, and when a child finishes (the parent is "current" again). */
  activity: number;
}

export type ModelState = 'queued' | 'running' | 'cancelling' | 'finished';

export interface PhaseLevel {
  name: string;
  stepsDone: number;
  nbSteps: number;
}

export interface CurrentPhase {
  names: string[];
  /** Root first; the last one is the current phase. */
  levels: PhaseLevel[];
  stepsDone: number;
  nbSteps: number;
}

export class BuildProgressModel {
  state: ModelState = 'queued';
  backend?: string;
  simulated?: boolean;
  cancelReason?: CancelReason;
  status?: BuildStatus;
  /** Wall time (ms) the build entered the queue (from the service's snapshot). */
  queuedAtWall?: number;
  /** Wall time (ms) of the first event of the build; undefined while queued. */
  startedAtWall?: number;
  /** Wall time (ms) of the last TensorRT callback we know of (phase event or native heartbeat). */
  lastCallbackWall?: number;
  /** Highest seq applied; events at or below it are replays and ignored. */
  lastSeq = -1;
  /** Work TensorRT reported: phases started plus steps completed, over the whole tree. */
  work = 0;

  // Finished phases are dropped so memory stays flat over builds with millions of callbacks; only
  // open phases matter for the path, and `work` keeps what finished ones contributed.
  private readonly open = new Map<number, OpenPhase>();
  private tick = 0;

  /** Starts from a service snapshot (a build that was already running, or queued). */
  applySnapshot(record: BuildRecord, nowWall: number, phases: readonly PhaseNode[] = []): void {
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
    this.queuedAtWall = Date.parse(record.queuedAt);
    if (record.startedAt) this.startedAtWall = Date.parse(record.startedAt);
    const sorted = [...phases].sort((a, b) => a.startT - b.startT || a.id - b.id);
    for (const p of sorted) {
      this.work += 1 + Math.max(0, p.stepsDone);
      if (p.endT === undefined) {
        this.openPhase(p.id, p.parentId, p.name, p.nbSteps);
        this.open.get(p.id)!.stepsDone = Math.max(0, p.stepsDone);
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
        this.work += 1;
        this.openPhase(ev.id, ev.parentId, ev.name, ev.nbSteps);
        break;
      case 'phase.step': {
        this.sawCallback(nowWall);
        const p = this.open.get(ev.id);
        if (p) {
          // stepsDone is absolute, so steps coalesced in transit still count.
          this.advance(p, ev.stepsDone);
          p.activity = ++this.tick;
        }
        break;
      }
      case 'phase.finish': {
        this.sawCallback(nowWall);
        const p = this.open.get(ev.id);
        if (p) this.advance(p, ev.stepsDone);
        this.closePhase(ev.id);
        break;
      }
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
    const levels: PhaseLevel[] = [];
    // Parents are open while their children are; a missing one (tolerated) just ends the chain.
    for (let p: OpenPhase | undefined = best, guard = this.open.size; p && guard >= 0; guard--) {
      levels.unshift({ name: p.name, stepsDone: p.stepsDone, nbSteps: p.nbSteps });
      p = p.parentId === null ? undefined : this.open.get(p.parentId);
    }
    return { names: levels.map((l) => l.name), levels, stepsDone: best.stepsDone, nbSteps: best.nbSteps };
  }

  private advance(p: OpenPhase, stepsDone: number): void {
    if (stepsDone > p.stepsDone) {
      this.work += stepsDone - p.stepsDone;
      p.stepsDone = stepsDone;
    }
  }

  private sawCallback(nowWall: number): void {
    if (this.state === 'queued') this.state = 'running';
    this.lastCallbackWall = Math.max(this.lastCallbackWall ?? -Infinity, nowWall);
  }

  private openPhase(id: number, parentId: number | null, name: string, nbSteps: number): void {
    this.open.set(id, { id, parentId, name, nbSteps, stepsDone: 0, activity: ++this.tick });
  }

  private closePhase(id: number): void {
    const p = this.open.get(id);
    if (!p) return;
    this.open.delete(id);
    const parent = p.parentId === null ? undefined : this.open.get(p.parentId);
    if (parent) parent.activity = ++this.tick;
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

/**
 * "Building engine 2/6 › Building engine from subgraph › … › Timing graph nodes 7/12 › Measuring
 * tactic time 1/4": step counts on every level that has more than one step, because the leaf is
 * often a short-lived phase and the telling count ("node 7 of 12") sits a few levels up.
 */
export function formatCurrentPhase(cur: CurrentPhase): string {
  return cur.levels
    .map((l, i) => (l.nbSteps > 1 || i === cur.levels.length - 1 ? `${l.name} ${Math.min(l.stepsDone, l.nbSteps)}/${l.nbSteps}` : l.name))
    .join(PATH_SEPARATOR);
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
  if (model.state === 'queued') {
    const waited = model.queuedAtWall === undefined || Number.isNaN(model.queuedAtWall) ? '' : ` for ${formatDuration(nowWall - model.queuedAtWall)}`;
    return `queued${waited}: waiting for an earlier build on this GPU to finish`;
  }
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
