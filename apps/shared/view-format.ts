// Small pure helpers over the build view (build-view.ts) that several surfaces need in the same
// words: the phase path, the predicted end, whether the builder is working, where a crashed build
// died, and the rows flattened for text. The CLI, the MCP and LSP servers use them; keeping the
// wording here is what makes "crashed in A › B" read the same in a terminal and in an agent.
import { BuildView, type PathLevel } from './build-view.js';
import { displayText } from './display-text.js';
import { formatDuration } from './format.js';
import { formatMemory } from './memory-size.js';
import type { BuildFinished, BuildRecord, CacheStats, Estimate } from './protocol.js';
import type { PhaseRow } from './phase-rows.js';

export const PATH_SEPARATOR = ' › ';
/** A silence longer than this is called out: real builds do go quiet, but rarely for this long. */
export const LONG_SILENCE_MS = 30_000;
/**
 * Below this many cores the worker counts as idle: a builder that waits (on the GPU, or hangs)
 * still shows a little CPU from its own heartbeat thread and the runtime.
 */
export const IDLE_CORES = 0.05;

/** Names from the root down, joined; names come from the model, so control characters are shown, not obeyed. */
export function formatPath(names: readonly string[]): string {
  return names.map(displayText).join(PATH_SEPARATOR);
}

/**
 * "Building engine 2/6 › Building engine from subgraph › … › Timing graph nodes 7/12 › Measuring
 * tactic time 1/4": step counts on every level that has more than one step (and on the leaf),
 * because the leaf is often short-lived and the telling count ("node 7 of 12") sits a few levels up.
 */
export function formatCurrentPath(levels: readonly PathLevel[]): string {
  return levels
    .map((l, i) => (l.nbSteps > 1 || i === levels.length - 1 ? `${displayText(l.name)} ${Math.min(l.stepsDone, l.nbSteps)}/${l.nbSteps}` : displayText(l.name)))
    .join(PATH_SEPARATOR);
}

/**
 * Said beside a percentage (or an estimate drawn from it) whose phase weights are the built-in
 * prior alone (BuildView.phaseSharesSource `prior`): typical TensorRT phases, no build timed here.
 */
export const PRIOR_WEIGHTS_NOTE = 'typical phase weights';

/**
 * "about 12.0 s left (9.0 s–15.0 s)": the best guess and the spread of the builds it rests on.
 * Once the best guess has run out: "past the predicted end", with what the slowest earlier build
 * still allows. A first build's (no earlier build: extrapolated from its own progress) says so,
 * and, when its progress is weighed by the prior alone (`sharesSource` `prior`), that too.
 */
export function formatRemaining(e: Estimate, sharesSource?: BuildView['phaseSharesSource']): string {
  if (e.remainingMs <= 0) return `past the predicted end${e.highMs > 0 ? ` (up to ${formatDuration(e.highMs)} more)` : ''}`;
  const low = formatDuration(e.lowMs);
  const high = formatDuration(e.highMs);
  // A range narrower than the rounding reads as "9.9 s–9.9 s": say the one figure.
  const range = low === high ? '' : ` (${low}–${high})`;
  // A first build's estimate rests on its own pace, not on earlier builds: say so.
  const basis = e.source !== 'progress' ? '' : sharesSource === 'prior' ? ` (estimate from progress so far, ${PRIOR_WEIGHTS_NOTE})` : ' (estimate from progress so far)';
  return `about ${formatDuration(e.remainingMs)} left${range}${basis}`;
}

/**
 * At or above this GPU utilisation the GPU counts as busy. NVML reports whole percents of its
 * sample period, and a GPU that runs nothing reads 0.
 */
export const BUSY_GPU_PERCENT = 5;

/** Whether the builder is working, from what the heartbeats measured. */
export interface Liveness {
  /** The worker's CPU use between its last two heartbeats, in cores. */
  cores?: number;
  /** The GPU's utilisation at the latest heartbeat (TensorRT builds where NVML is present). */
  gpuPercent?: number;
  /** Device memory the worker's process holds on the GPU at the latest heartbeat (NVML). */
  gpuMemoryBytes?: number;
  /** How gpuMemoryBytes was measured (heartbeat gpuMemorySource); absent: the process's own. */
  gpuMemorySource?: 'process' | 'device-delta';
  /** Why the process's own GPU memory is unknown (heartbeat gpuMemoryUnknown). */
  gpuMemoryUnknown?: string;
  /** CPU or GPU in use: the builder works, however long TensorRT stays silent. */
  busy: boolean;
}

/**
 * A TensorRT callback this recent is proof enough that the builder works: an idle reading (the
 * simulator's threads, or a builder between short GPU waits) is not called out before this.
 */
export const IDLE_SHOWN_AFTER_MS = 2000;

/**
 * The view's latest GPU details, with the memory's source and why it is unknown where the view
 * keeps them (the heartbeat's gpuMemorySource / gpuMemoryUnknown).
 */
type GpuDetail = NonNullable<BuildView['gpuDetail']> & { memorySource?: 'process' | 'device-delta'; memoryUnknown?: string };

/** Undefined until a heartbeat measured something. */
export function livenessOf(view: BuildView): Liveness | undefined {
  const cores = view.workerCores();
  const gpuPercent = view.gpu?.percent;
  if (cores === undefined && gpuPercent === undefined) return undefined;
  const detail = gpuPercent !== undefined ? (view.gpuDetail as GpuDetail | undefined) : undefined;
  const gpuMemoryBytes = detail?.memoryBytes;
  return {
    cores,
    gpuPercent,
    ...(gpuMemoryBytes !== undefined ? { gpuMemoryBytes } : {}),
    ...(detail?.memorySource !== undefined ? { gpuMemorySource: detail.memorySource } : {}),
    ...(detail?.memoryUnknown !== undefined ? { gpuMemoryUnknown: detail.memoryUnknown } : {}),
    busy: (cores ?? 0) >= IDLE_CORES || (gpuPercent ?? 0) >= BUSY_GPU_PERCENT,
  };
}

/**
 * The liveness a surface shows now: a busy builder always, an idle one only once TensorRT has
 * been quiet for IDLE_SHOWN_AFTER_MS ("no CPU use" beside a callback 5 ms ago would contradict it).
 */
export function shownLiveness(view: BuildView, nowWall: number): Liveness | undefined {
  const l = livenessOf(view);
  if (!l || l.busy) return l;
  const quiet = view.sinceLastCallbackMs(nowWall);
  return quiet !== undefined && quiet >= IDLE_SHOWN_AFTER_MS ? l : undefined;
}

/**
 * From this many cores (or a busy GPU) the builder is called busy; between IDLE_CORES and this it
 * is working lightly ("0.1 cores" beside "busy" read as a contradiction).
 */
export const BUSY_CORES = 0.5;

/** "builder busy" or "builder working lightly": the word that fits the figures beside it. */
export function busyWord(l: Liveness): string {
  const heavy = (l.cores ?? 0) >= BUSY_CORES || (l.gpuPercent ?? 0) >= BUSY_GPU_PERCENT;
  return heavy ? 'builder busy' : 'builder working lightly';
}

/** "1.5 cores", "1.0 core". */
export function formatCores(cores: number): string {
  const text = cores < 10 ? cores.toFixed(1) : String(Math.round(cores));
  return `${text} core${text === '1.0' ? '' : 's'}`;
}

/**
 * "builder busy, 1.5 cores, GPU 87%", "builder busy, CPU idle, GPU 87%", "no CPU use",
 * "no CPU or GPU use"; undefined until a heartbeat measured the worker.
 */
export function formatLiveness(l: Liveness | undefined): string | undefined {
  if (!l) return undefined;
  const gpu = l.gpuPercent === undefined ? undefined : `GPU ${Math.round(l.gpuPercent)}%${gpuMemoryText(l)}`;
  if (!l.busy) return gpu ? 'no CPU or GPU use' : 'no CPU use';
  const cpu = l.cores === undefined ? undefined : l.cores < IDLE_CORES ? 'CPU idle' : formatCores(l.cores);
  return `${busyWord(l)}, ${[cpu, gpu].filter((p) => p !== undefined).join(', ')}`;
}

/** Host memory worth a mention in a progress line (MCP, LSP) even without a limit near. */
export const LARGE_HOST_MEMORY_BYTES = 8 * 2 ** 30;
/** Share of a build's own memory limit from which progress lines mention the memory. */
export const NEAR_LIMIT_SHARE = 0.75;

/**
 * "host memory 21.5 GiB of the 24 GiB limit" when the worker's latest sample is large
 * (LARGE_HOST_MEMORY_BYTES) or near the build's limit; undefined otherwise, so ordinary builds'
 * progress lines stay short.
 */
export function memoryProgressNote(view: BuildView): string | undefined {
  const last = view.memory.timeline[view.memory.timeline.length - 1];
  if (!last) return undefined;
  const [, host, gpu] = last;
  const o = view.started?.options;
  const hostLimit = typeof o?.maxHostMemory === 'number' ? o.maxHostMemory : undefined;
  const parts: string[] = [];
  if (host >= LARGE_HOST_MEMORY_BYTES || (hostLimit !== undefined && host >= hostLimit * NEAR_LIMIT_SHARE)) {
    parts.push(`host memory ${formatMemory(host)}${hostLimit !== undefined ? ` of the ${formatMemory(hostLimit)} limit` : ''}`);
  }
  const gpuLimit = o?.maxGpuMemory;
  if (gpu !== null && gpuLimit !== undefined && gpu >= gpuLimit * NEAR_LIMIT_SHARE) {
    parts.push(`GPU memory ${formatMemory(gpu)} of the ${formatMemory(gpuLimit)} limit`);
  }
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/**
 * " · 31 GiB": the build's own GPU memory beside the utilisation, when NVML gave it;
 * " · GPU memory (device delta) 31 GiB" where NVML does not list the worker's process (a
 * container) and the figure is the device's growth since the build's first GPU sample, other
 * processes' allocations included; " · GPU memory unknown: …" with neither.
 */
export function gpuMemoryText(l: Liveness): string {
  if (l.gpuMemoryBytes !== undefined) {
    return l.gpuMemorySource === 'device-delta' ? ` · GPU memory (device delta) ${formatMemory(l.gpuMemoryBytes)}` : ` · ${formatMemory(l.gpuMemoryBytes)}`;
  }
  return l.gpuMemoryUnknown !== undefined ? ` · GPU memory unknown: ${l.gpuMemoryUnknown}` : '';
}

/** "last TensorRT callback 3.2 s ago", plus the liveness in silent stretches; undefined before the first callback. */
export function formatCallback(view: BuildView, nowWall: number, simulated = false): string | undefined {
  const quiet = view.sinceLastCallbackMs(nowWall);
  if (quiet === undefined) return undefined;
  const live = formatLiveness(shownLiveness(view, nowWall));
  return `last ${simulated ? '(simulated) ' : ''}TensorRT callback ${formatDuration(quiet)} ago${live ? ` (${live})` : ''}`;
}

/** Within this much of a failed build's end, an early finish is the builder unwinding, not a phase done. */
const UNWIND_MS = 50;

/**
 * From when on an early finish means "cut short": the Stop (or time budget), or the last moments
 * of a build that failed or crashed. Undefined for a build that succeeded or still runs: there,
 * TensorRT finishing a phase before its last step is a detail, not where the build stopped.
 */
export function cutShortFrom(view: Pick<BuildView, 'cancelling' | 'outcome'>): number | undefined {
  if (view.cancelling) return view.cancelling.t;
  const o = view.outcome;
  return o && o.status !== 'succeeded' ? o.durationMs - UNWIND_MS : undefined;
}

/** Where a crashed build died (outermost phase first), when the service knew it. */
export function crashSite(outcome: BuildFinished | undefined): string[] | undefined {
  if (outcome?.status !== 'crashed') return undefined;
  const p = outcome.lastPhasePath;
  return p && p.length > 0 ? p : undefined;
}

/** "crashed in Building engine › … › Timing tactics". */
export function formatCrashSite(path: readonly string[]): string {
  return `crashed in ${formatPath(path)}`;
}

/**
 * A view from a service record alone, for a host that gives no view snapshot: the record's state,
 * cache figures and outcome, no rows. Events after `record.lastSeq` continue it.
 */
export function viewFromRecord(record: BuildRecord): BuildView {
  const view = new BuildView(record.id);
  if (record.outcome) view.apply({ ...record.outcome, seq: 0 });
  view.seq = record.lastSeq;
  view.status = record.state;
  view.cache = record.cache ?? record.outcome?.cache;
  return view;
}

/** One row of the view, flattened for text: a name path and its figures. */
export interface RowLine {
  path: string[];
  /** 1 at the top. */
  depth: number;
  /** Instances started. */
  count: number;
  /** Instances open now. */
  open: number;
  earlyCount: number;
  /** Steps of the instance the row shows (the latest-started open one, else the latest finished). */
  stepsDone: number;
  nbSteps: number;
  /** That instance finished before all its steps were reported. */
  early: boolean;
  firstStartT: number;
  /** Build time during which at least one instance was open, up to `nowT` for open ones. */
  wallMs: number;
}

/** The rows depth first (siblings in first-start order), with open instances counted up to `nowT`. */
export function rowLines(view: BuildView, nowT: number): RowLine[] {
  const out: RowLine[] = [];
  const walk = (r: PhaseRow, path: string[]) => {
    for (const c of r.children) {
      const p = [...path, c.name];
      out.push({
        path: p,
        depth: p.length,
        count: c.count,
        open: c.open.length,
        earlyCount: c.earlyCount,
        stepsDone: c.shown.stepsDone,
        nbSteps: c.shown.nbSteps,
        early: c.shown.endT !== undefined && c.shown.early === true,
        firstStartT: c.firstStartT,
        wallMs: wallOf(c, nowT),
      });
      walk(c, p);
    }
  };
  walk(view.rows.root, []);
  return out;
}

/** Length of the row's spans, plus the stretch its open instances add after the last span. */
export function wallOf(row: PhaseRow, nowT: number): number {
  const s = row.spans;
  let total = 0;
  let lastEnd = -Infinity;
  for (let i = 0; i < s.start.length; i++) {
    total += Math.max(0, s.end[i] - Math.max(s.start[i], lastEnd));
    lastEnd = Math.max(lastEnd, s.end[i]);
  }
  if (row.open.length > 0) {
    const from = Math.max(lastEnd, Math.min(...row.open.map((o) => o.startT)));
    total += Math.max(0, nowT - from);
  }
  return total;
}

/**
 * A stopped build keeps what it measured, but the tactics being timed at the moment it stopped
 * count as misses without an entry: "98 misses, +94 kept" needs this sentence, else it reads as
 * four lost entries. Undefined when there is nothing to explain.
 */
export function stoppedMidTimingNote(c: Pick<CacheStats, 'savedAfterCancel' | 'misses' | 'added'>): string | undefined {
  if (!c.savedAfterCancel || c.misses === undefined || c.misses <= c.added) return undefined;
  const n = c.misses - Math.max(0, c.added);
  return `${n} tactic${n === 1 ? ' was' : 's were'} being timed when the build stopped: counted as misses, not kept`;
}
