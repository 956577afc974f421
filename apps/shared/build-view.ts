// The one build view: everything a surface shows about a build, folded from the protocol's
// events by one pure reducer. The service keeps one per build and ships its snapshot; the web
// and desktop UI, the CLI, the MCP and LSP servers and the taskbar are views over it, so they
// give the same answer to "where is it, how far, is it alive, how did it end".
//
// Definitions that used to differ from surface to surface, fixed here once:
// - status: the record's vocabulary (BuildState), queued → running → cancelling → succeeded |
//   cancelled | failed | crashed. "cancelling" starts at build.cancelling (or a heartbeat that says
//   cancel was requested) and never goes back; a final status never changes. A host that knows of
//   a stop before those events (the service that asked, the page whose Stop was pressed) says so
//   through stateOf() below, the one place a status is set ahead of the events. The snapshot
//   spells "cancelling" as "stopping" (build-view-schema.ts: the wire word, kept).
// - the build clock: build time t (ms since the native build start). Between events it advances
//   with the caller's wall clock from the moment the newest event arrived, so "elapsed" never
//   runs ahead of the build by more than the delivery latency, and at the end it is exactly the
//   native duration (it cannot go backwards by the worker's start-up time).
// - the last TensorRT callback: the latest phase event's t, or what a heartbeat reports
//   (t − sinceLastCallbackMs), whichever is later. Steps coalesced in transit are covered by
//   the heartbeat, which the native layer measures on every callback.
// - the current phase: the open phase that was active most recently (started, stepped, or had a
//   child finish), and its ancestors.
// - progress: `work` counts what TensorRT reported (phases started + steps done; rises with every
//   callback, no guess); `fraction` is 0..1 from the outermost phase's steps refined by its
//   active child, recursively, and only ever rises (1 on success). TensorRT gives no total, so
//   the fraction is a shape, not a promise; the predicted end (build-estimate.ts) is separate.
//
// - the log: the last lines (recent-logs.ts), for surfaces that join late; the full log is in the
//   events.
//
// Memory is bounded by distinct name paths (phase-rows.ts), not by the number of phases, and a
// snapshot is complete: BuildView.fromSnapshot(view.snapshot()) answers every question the
// original does, and events after the snapshot's seq continue it.
// The snapshot's schema lives in build-view-schema.ts: validating needs zod at run time, and the
// renderer (which only folds events) must not load it (zod's JIT trips the page's CSP).
import { SHARE_MAX_STEP, stepShareKey } from './build-estimate.js';
import { MemoryTrack, rowsInOrder, type MemorySnapshot } from './memory-track.js';
import { PhaseRows, type Instance, type PhaseRow, type ProgressSegment, type RowsSnapshot } from './phase-rows.js';
import { RecentLogs } from './recent-logs.js';
import type { BuildViewSnapshot, ViewStatus } from './build-view-schema.js';
import type { BuildEvent, BuildFinished, BuildMemory, BuildStarted, BuildState, BuildStatus, CacheStats, CancelReason, Estimate } from './protocol.js';

export type { BuildViewSnapshot, ViewStatus } from './build-view-schema.js';
import { VIEW_VERSION } from './view-version.js';
export { VIEW_VERSION };

export function isFinalStatus(s: BuildState): s is BuildStatus {
  return s === 'succeeded' || s === 'cancelled' || s === 'failed' || s === 'crashed';
}

/** What the host of a build knows before its events say it. */
export interface HostKnows {
  /** Its worker was launched: running, even before build.started arrives. */
  launched?: boolean;
  /** A stop was asked for (and accepted): cancelling, even before build.cancelling arrives. */
  stopRequested?: boolean;
}

/**
 * A build's state: its view's status, moved ahead by what the host knows. The one place
 * "cancelling" (the page's "Stopping") is set before build.cancelling: the service's records,
 * the farm's and the page's status line all come through here.
 */
export function stateOf(view: Pick<BuildView, 'status'>, host: HostKnows = {}): BuildState {
  let s = view.status;
  if (s === 'queued' && host.launched) s = 'running';
  if (host.stopRequested && (s === 'queued' || s === 'running')) s = 'cancelling';
  return s;
}

/** The view snapshot's word for a status (build-view-schema.ts: "stopping" on the wire). */
function toWire(s: BuildState): ViewStatus {
  return s === 'cancelling' ? 'stopping' : s;
}

function fromWire(s: ViewStatus): BuildState {
  return s === 'stopping' ? 'cancelling' : s;
}

export interface PathLevel {
  name: string;
  stepsDone: number;
  nbSteps: number;
}

export class BuildView {
  readonly rows = new PhaseRows();
  status: BuildState = 'queued';
  started?: BuildStarted;
  cache?: CacheStats;
  outcome?: BuildFinished;
  cancelling?: { t: number; reason: CancelReason };
  /** Highest seq applied; events at or below it are replays and change nothing. */
  seq = -1;
  /** Build time of the newest event. */
  lastT = 0;
  lastCallbackT?: number;
  /** Phases started plus steps done, over the whole build. */
  work = 0;
  /** The latest predicted end (from a heartbeat) and the build time it was made at. */
  estimate?: Estimate & { t: number };
  /** CPU time of the build worker at the latest two heartbeats that reported it: [t, cpuMs]. */
  cpu: [number, number][] = [];
  /** The GPU's utilisation at the latest heartbeat that reported it (NVML, TensorRT builds). */
  gpu?: { t: number; percent: number };
  /** Why the heartbeats carry no GPU figure, when the worker said. */
  gpuNote?: string;
  /** Host and GPU memory: peaks per phase row and overall, and a timeline (memory-track.ts). */
  memory = new MemoryTrack();
  /** The latest heartbeat's GPU details (NVML), for the liveness line. */
  gpuDetail?: { memoryBytes?: number; clockMhz?: number; temperatureC?: number; memorySource?: 'process' | 'device-delta'; memoryUnknown?: string };
  /** The log's last lines. */
  logs = new RecentLogs();
  private frac = 0;
  /** Scratch space of treeFraction(), kept to spare the allocations on every phase event. */
  private readonly chain: Instance[] = [];
  private readonly chainRows: PhaseRow[] = [];
  /** Caller's wall clock when the newest event arrived: the build clock runs on from there. */
  private anchorWall?: number;

  constructor(readonly buildId: string) {}

  static fromSnapshot(s: BuildViewSnapshot): BuildView {
    const v = new BuildView(s.buildId);
    v.seq = s.seq;
    v.status = fromWire(s.status);
    v.lastT = s.lastT;
    v.lastCallbackT = s.lastCallbackT;
    v.work = s.work;
    v.frac = s.fraction;
    v.started = s.started;
    v.cache = s.cache;
    v.outcome = s.outcome;
    v.cancelling = s.cancelling;
    v.estimate = s.estimate;
    v.cpu = s.cpu ?? [];
    v.gpu = s.gpu;
    v.gpuNote = s.gpuNote;
    v.gpuDetail = s.gpuDetail;
    v.memory = MemoryTrack.fromSnapshot(s.memory as MemorySnapshot | undefined);
    v.logs = RecentLogs.from(s.logs ?? [], s.logsDropped ?? 0);
    v.rows.loadRowsSnapshot(s.rows as RowsSnapshot);
    for (const [id, step, spent, childId, childShare, childV, base, width] of s.progress ?? []) {
      const inst = v.rows.openInstance(id);
      if (inst) inst.seg = { step, spent, childId, childShare, childV, base, width };
    }
    v.markCrashSite();
    return v;
  }

  /**
   * Folds one event in; returns false for a replay (seq already applied). `nowWall` is the
   * caller's clock when the event arrived (only used to run the build clock between events).
   */
  apply(ev: BuildEvent, nowWall?: number): boolean {
    if (ev.seq <= this.seq) return false;
    this.seq = ev.seq;
    if (ev.t >= this.lastT) {
      this.lastT = ev.t;
      if (nowWall !== undefined) this.anchorWall = nowWall;
    }
    switch (ev.type) {
      case 'build.started':
        this.started = ev;
        if (this.status === 'queued') this.status = 'running';
        break;
      case 'phase.start':
        this.running();
        this.sawCallback(ev.t);
        this.work += 1;
        this.rows.start(ev.id, ev.parentId, ev.name, ev.nbSteps, ev.t);
        break;
      case 'phase.step':
        this.running();
        this.sawCallback(ev.t);
        this.work += this.rows.step(ev.id, ev.stepsDone, ev.t);
        break;
      case 'phase.finish': {
        this.sawCallback(ev.t);
        this.work += this.rows.finish(ev.id, ev.stepsDone, ev.early, ev.t);
        break;
      }
      case 'heartbeat':
        this.running();
        this.sawCallback(ev.t - ev.sinceLastCallbackMs);
        if (ev.cancelRequested && this.status === 'running') this.status = 'cancelling';
        if (ev.estimate) this.estimate = { ...ev.estimate, t: ev.t };
        if (ev.workerCpuMs !== undefined) this.cpu = [...this.cpu.slice(-1), [ev.t, ev.workerCpuMs]];
        if (ev.gpuUtilPercent !== undefined) this.gpu = { t: ev.t, percent: ev.gpuUtilPercent };
        if (ev.gpuNote !== undefined) this.gpuNote = ev.gpuNote;
        if (ev.hostMemoryBytes !== undefined) this.memory.sample(ev.t, ev.hostMemoryBytes, ev.gpuMemoryBytes, this.rows.openInstances());
        if (ev.gpuMemoryBytes !== undefined || ev.gpuClockMhz !== undefined || ev.gpuTemperatureC !== undefined || ev.gpuMemoryUnknown !== undefined) {
          this.gpuDetail = {
            memoryBytes: ev.gpuMemoryBytes,
            clockMhz: ev.gpuClockMhz,
            temperatureC: ev.gpuTemperatureC,
            ...(ev.gpuMemorySource ? { memorySource: ev.gpuMemorySource } : {}),
            ...(ev.gpuMemoryUnknown !== undefined ? { memoryUnknown: ev.gpuMemoryUnknown } : {}),
          };
        }
        break;
      case 'cache.stats': {
        const { v: _v, buildId: _b, seq: _s, t: _t, type: _type, ...stats } = ev;
        this.cache = stats;
        break;
      }
      case 'build.cancelling':
        this.cancelling ??= { t: ev.t, reason: ev.reason };
        if (!isFinalStatus(this.status)) this.status = 'cancelling';
        break;
      case 'build.finished':
        this.outcome = ev;
        if (ev.cache) this.cache = ev.cache;
        this.status = ev.status;
        if (ev.t > this.lastT) this.lastT = ev.t;
        this.rows.closeAll(ev.t);
        this.markCrashSite();
        if (ev.status === 'succeeded') this.frac = 1;
        break;
      case 'log':
        this.logs.push({ seq: ev.seq, t: ev.t, severity: ev.severity, message: ev.message });
        break;
    }
    // The high-water mark moves with the events, not with whoever asks, so two views fed the
    // same events (one of them from a snapshot) agree.
    if (ev.type === 'phase.start' || ev.type === 'phase.step' || ev.type === 'phase.finish') {
      const f = this.treeFraction();
      if (f > this.frac) this.frac = f;
    }
    return true;
  }

  /** Build time now: the native duration once finished, else the newest event's t plus the wall time since it arrived. */
  elapsedMs(nowWall?: number): number {
    if (this.outcome) return this.outcome.durationMs;
    if (this.anchorWall === undefined || nowWall === undefined) return this.lastT;
    return this.lastT + Math.max(0, nowWall - this.anchorWall);
  }

  /** How long TensorRT has been silent, on the same clock; undefined before its first callback. */
  sinceLastCallbackMs(nowWall?: number): number | undefined {
    if (this.lastCallbackT === undefined) return undefined;
    return Math.max(0, this.elapsedMs(nowWall) - this.lastCallbackT);
  }

  /**
   * The predicted time left now: the latest estimate, less the build time since it was made.
   * Undefined without an estimate (no earlier build to go by) and once the build has ended.
   */
  remaining(nowWall?: number): Estimate | undefined {
    const e = this.estimate;
    if (!e || isFinalStatus(this.status)) return undefined;
    const since = Math.max(0, this.elapsedMs(nowWall) - e.t);
    const less = (ms: number) => Math.max(0, ms - since);
    return { remainingMs: less(e.remainingMs), lowMs: less(e.lowMs), highMs: less(e.highMs), basis: e.basis, ...(e.source ? { source: e.source } : {}) };
  }

  /**
   * How busy the build worker's CPU was between its last two heartbeats, in cores (1.5 = one and
   * a half cores). Undefined until two heartbeats reported it. A builder in a long silent stretch
   * that still burns CPU is working; one at zero is stalled (or waiting on the GPU).
   */
  workerCores(): number | undefined {
    if (this.cpu.length < 2) return undefined;
    const [[t0, c0], [t1, c1]] = this.cpu;
    return t1 > t0 ? Math.max(0, (c1 - c0) / (t1 - t0)) : undefined;
  }

  /** The current phase and its ancestors, outermost first; [] when nothing is open. */
  currentPath(): PathLevel[] {
    const out: PathLevel[] = [];
    const active = this.rows.activeInstance();
    if (!active) return out;
    const byId = new Map<number, { inst: { nbSteps: number; stepsDone: number }; row: { name: string }; parentId: number | null }>();
    for (const o of this.rows.openInstances()) byId.set(o.inst.id, o);
    for (let o: typeof active | undefined = active, guard = byId.size; o && guard >= 0; guard--) {
      out.unshift({ name: o.row.name, stepsDone: o.inst.stepsDone, nbSteps: o.inst.nbSteps });
      o = o.parentId === null ? undefined : (byId.get(o.parentId) as typeof active | undefined);
    }
    return out;
  }

  /** Peak memory overall and per phase row so far (build.finished's `memory`); undefined before any sample. */
  memorySummary(): BuildMemory | undefined {
    return this.memory.summary(rowsInOrder(this.rows.root));
  }

  /**
   * Where the fraction's weights came from (build.started's phaseSharesSource): `prior` when no
   * earlier build left any, so the percentage rests on typical TensorRT phase weights alone.
   * Kept in the snapshot with build.started.
   */
  get phaseSharesSource(): BuildStarted['phaseSharesSource'] {
    return this.started?.phaseSharesSource;
  }

  /** 0..1, never falling (see the header); 1 once the build succeeded. */
  fraction(): number {
    return this.status === 'succeeded' ? 1 : this.frac;
  }

  snapshot(): BuildViewSnapshot {
    return {
      v: VIEW_VERSION,
      buildId: this.buildId,
      seq: this.seq,
      status: toWire(this.status),
      lastT: this.lastT,
      lastCallbackT: this.lastCallbackT,
      work: this.work,
      fraction: this.fraction(),
      ...this.progressSnapshot(),
      started: this.started,
      cache: this.cache,
      outcome: this.outcome,
      cancelling: this.cancelling,
      estimate: this.estimate,
      cpu: this.cpu,
      gpu: this.gpu,
      gpuNote: this.gpuNote,
      gpuDetail: this.gpuDetail,
      memory: this.memory.toSnapshot(rowsInOrder(this.rows.root)),
      logs: this.logs.lines(),
      logsDropped: this.logs.dropped,
      rows: this.rows.toSnapshot(),
    };
  }

  /**
   * A crashed build's tree holds the phase it died in: the rows of `lastPhasePath` that no event
   * brought (they were in flight when the worker died) are added, and the path is marked.
   */
  private markCrashSite(): void {
    const o = this.outcome;
    if (o?.status === 'crashed' && o.lastPhasePath?.length) this.rows.markCrashSite(o.lastPhasePath, o.t);
  }

  private running(): void {
    if (this.status === 'queued') this.status = 'running';
  }

  private sawCallback(t: number): void {
    if (this.lastCallbackT === undefined || t > this.lastCallbackT) this.lastCallbackT = t;
  }

  /** Outermost open phase's steps, refined by its most recently active open child, recursively. */
  /** The open phases' progress segments, for the snapshot (fromSnapshot puts them back). */
  private progressSnapshot(): { progress?: Array<[number, number, number, number, number, number, number, number]> } {
    const out: Array<[number, number, number, number, number, number, number, number]> = [];
    for (const o of this.rows.openInstances()) {
      const g = o.inst.seg;
      if (g) out.push([o.inst.id, g.step, g.spent, g.childId, g.childShare, g.childV, g.base, g.width]);
    }
    return out.length ? { progress: out } : {};
  }

  private treeFraction(): number {
    // Runs on every phase event: the rows keep the most recently active open child of every
    // phase (phase-rows.ts), so this walks the depth of the tree. The chain of most recently
    // active open phases, outermost first; then folded innermost out. A phase spends its bar
    // step by step, and each step's part child by child, each as a share of what is left:
    // - step k of a phase gets the share earlier builds spent in it (`path@k` in phaseShares) of
    //   what was left of the phase, or an even split of the declared steps where none is known;
    // - within a step, a child phase gets the share earlier builds gave its kind of what was left
    //   of the step, or half of it. What a finished child spent stays spent, so a second child
    //   starting at 0 does not take the bar back (the old even refinement froze there: TensorRT's
    //   "Computing profile costs" starts at 0 after "Optimizing graph", and declares 10 steps of
    //   which it uses 4).
    // The scratch array is overwritten up to `n`, never truncated: setting an array's length
    // is a slow builtin, and it showed in profiles of the fold.
    const chain = this.chain;
    let n = 0;
    for (let node = this.rows.mostActiveChild(null), d = 0; node && node.inst.nbSteps > 0 && d <= 64; node = this.rows.mostActiveChild(node.inst.id), d++) {
      chain[n] = node.inst;
      this.chainRows[n++] = node.row;
      if (node.inst.stepsDone >= node.inst.nbSteps) break;
    }
    const shares = this.started?.phaseShares;
    let v = 0;
    let childId = -1;
    let childPath = '';
    for (let i = n - 1; i >= 0; i--) {
      const node = chain[i];
      const path = this.chainRows[i].path;
      const s = Math.min(node.stepsDone, node.nbSteps);
      if (s >= node.nbSteps) {
        v = 1;
      } else {
        let seg: ProgressSegment | undefined = node.seg;
        if (!seg || seg.step !== s) {
          // Where this step sits on the phase's bar, worked out once per step (not per event).
          const [base, width] = stepSpan(shares, path, s, node.nbSteps);
          seg = { step: s, spent: 0, childId: -1, childShare: 0, childV: 0, base, width };
          node.seg = seg;
        }
        if (childId >= 0 && childId !== seg.childId) {
          // A new child after one that finished: the finished one's share stays spent. A sibling
          // that is still open (TensorRT runs hierarchies side by side) spent nothing yet: the
          // bar follows whichever is the most active.
          if (seg.childId >= 0 && !this.rows.isOpen(seg.childId)) seg.spent += (1 - seg.spent) * seg.childShare;
          seg.childId = childId;
          seg.childShare = shares?.[childPath] ?? DEFAULT_CHILD_SHARE;
        }
        seg.childV = childId >= 0 ? v : 0;
        const sub = childId >= 0 ? seg.spent + (1 - seg.spent) * seg.childShare * v : seg.spent;
        v = Math.min(1, seg.base + seg.width * sub);
      }
      childId = node.id;
      childPath = path;
    }
    return v;
  }
}

/** A child phase whose kind earlier builds have not timed gets half of what is left of its parent's step. */
const DEFAULT_CHILD_SHARE = 0.5;

/**
 * Where step `s` of a phase of `nbSteps` starts on its bar and how wide it is: from the shares
 * earlier builds (or the prior, build-estimate.ts) spent in each step, each of what was left. A
 * step without a share gets an even part of what is left (1 / the steps left), so with no shares
 * at all the steps are even, and a phase whose first steps are known (the prior names only those
 * that matter) splits the rest evenly instead of falling back to even steps from its start: that
 * would put step s at s / nbSteps, below where the known steps had already brought the bar, and
 * hold the percentage (it never falls) until the phase caught up.
 */
function stepSpan(shares: Record<string, number> | undefined, path: string, s: number, nbSteps: number): [number, number] {
  const known = shares && stepSharesOf(shares, path, nbSteps);
  if (!known) return [s / nbSteps, 1 / nbSteps];
  // Past the last known step every step is an even part of what is left: together they leave
  // (n − s) / (n − upto) of what was left at `upto`.
  const upto = Math.min(s, known.length);
  let left = 1;
  for (let k = 0; k < upto; k++) left *= 1 - (known[k] ?? 1 / (nbSteps - k));
  left *= (nbSteps - s) / (nbSteps - upto);
  return [1 - left, left * (known[s] ?? 1 / (nbSteps - s))];
}

/**
 * The step shares of each phase kind (name path and declared steps), by step: indexed once per
 * shares object, so that a new step costs one look-up rather than one string per earlier step (a
 * phase of a storm of tactic timings starts a step on nearly every event).
 */
const stepShareIndex = new WeakMap<Record<string, number>, Map<string, Array<number | undefined>>>();

function stepSharesOf(shares: Record<string, number>, path: string, nbSteps: number): Array<number | undefined> | undefined {
  let index = stepShareIndex.get(shares);
  if (!index) {
    index = new Map();
    for (const [key, w] of Object.entries(shares)) {
      const m = /^(.*)@(\d+)\/(\d+)$/.exec(key);
      if (!m || Number(m[2]) >= SHARE_MAX_STEP || stepShareKey(m[1]!, Number(m[2]), Number(m[3])) !== key) continue;
      const kind = `${m[1]}@${m[3]}`;
      const steps = index.get(kind) ?? [];
      steps[Number(m[2])] = w;
      index.set(kind, steps);
    }
    stepShareIndex.set(shares, index);
  }
  return index.get(`${path}@${nbSteps}`);
}
