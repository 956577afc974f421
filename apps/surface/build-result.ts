// A build's result and state as the agent and editor surfaces (MCP tools, the LSP build command)
// report them: the outcome in one sentence (why it was cancelled, where it crashed), the slowest
// phases, the figures; from the build view. The MCP tool-result wrapping is apps/mcp/tool-results.ts.
import type { BuildFinished, BuildRecord, CancelReason } from '../shared/protocol.js';
import type { BuildView } from '../shared/build-view.js';
import { formatDuration } from '../shared/format.js';
import { crashSite, formatCrashSite, formatRemaining, viewFromRecord } from '../shared/view-format.js';
import { summarizePhases } from './phase-summary.js';
import { whereText } from './progress-message.js';
import { buildLayersText } from '../shared/build-layers.js';
import type { BuildResultOut, BuildStateOut } from './schemas.js';

const REASON_TEXT: Record<CancelReason, string> = {
  user: "cancelled at the caller's request",
  timeout: 'time budget exhausted',
  shutdown: 'the server was shutting down',
  memory: 'it passed its memory limit',
};

export function cancelWhy(reason: CancelReason, timeBudgetSeconds?: number): string {
  if (reason === 'timeout' && timeBudgetSeconds !== undefined) return `time budget of ${timeBudgetSeconds}s exhausted`;
  return REASON_TEXT[reason];
}

/** "0.31 ms", "12 ms": cancel latencies are often below a millisecond, and "0 ms" reads as a bug. */
function formatLatency(ms: number): string {
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${Math.round(ms)} ms`;
}

/** Wall time from worker start to the end, the clock the time budget runs on. */
function wallMs(record: BuildRecord | undefined): number | undefined {
  if (!record?.startedAt || !record.finishedAt) return undefined;
  const ms = Date.parse(record.finishedAt) - Date.parse(record.startedAt);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** The headline of a finished build, e.g. "succeeded in 3.2 s: 1234 bytes written to /out.engine". */
export function outcomeSentence(outcome: BuildFinished, reason: CancelReason | undefined, timeBudgetSeconds?: number, record?: BuildRecord): string {
  const took = formatDuration(outcome.durationMs);
  switch (outcome.status) {
    case 'succeeded':
      if (outcome.reused)
        return `reused the engine of build ${outcome.reused.fromBuildId} (nothing built): ${outcome.engineBytes ?? 0} bytes written to ${outcome.outputPath ?? '(no path)'}`;
      return `succeeded in ${took}: ${outcome.engineBytes ?? 0} bytes written to ${outcome.outputPath ?? '(no path)'}`;
    case 'cancelled': {
      const latency = outcome.cancelLatencyMs === undefined ? '' : `, stopped ${formatLatency(outcome.cancelLatencyMs)} after the request`;
      const why = reason ? ` (${cancelWhy(reason, timeBudgetSeconds)})` : '';
      // The budget counts from the worker's start (model parsing included); the builder's own
      // duration is shorter, and "after 1.9 s (budget of 2.5 s exhausted)" would read as a bug.
      const wall = reason === 'timeout' ? wallMs(record) : undefined;
      const after = wall === undefined ? took : `${formatDuration(wall)}, ${took} of it in the builder`;
      // A memory stop says which limit and where (memory-text.ts), in the same words everywhere.
      const stop = outcome.memoryStop && outcome.error ? `: ${outcome.error}` : '';
      return `cancelled after ${after}${why}${stop}${latency}; no engine was written`;
    }
    case 'failed':
      return `failed after ${took}: ${outcome.error ?? 'no reason given'}`;
    case 'crashed': {
      const site = crashSite(outcome);
      return `crashed after ${took}${site ? ` (${formatCrashSite(site)})` : ''}, its worker process died (${outcome.error ?? 'no reason given'}); the server is still running and the next build starts in a fresh worker`;
    }
  }
}

/**
 * The result of a finished build. `view` is the build as the caller followed it; without one the
 * service's record stands in (a build this server did not follow from the start).
 */
export function buildResult(
  record: BuildRecord | undefined,
  outcome: BuildFinished,
  reason: CancelReason | undefined,
  timeBudgetSeconds?: number,
  view?: BuildView,
): BuildResultOut {
  const v = view ?? (record ? viewFromRecord(record) : undefined);
  const out: BuildResultOut = {
    buildId: outcome.buildId,
    status: outcome.status,
    message: `Build ${outcome.buildId} ${outcomeSentence(outcome, reason, timeBudgetSeconds, record)}`,
    durationMs: outcome.durationMs,
    phases: v ? summarizePhases(v, outcome.durationMs) : { phaseCount: 0, maxDepth: 0, slowest: [] },
  };
  const site = crashSite(outcome);
  if (site) out.lastPhasePath = site;
  if (outcome.status === 'cancelled' && reason) out.cancelReason = reason;
  if (record?.backend) out.backend = record.backend;
  if (record?.simulated !== undefined) out.simulated = record.simulated;
  if (outcome.cancelLatencyMs !== undefined) out.cancelLatencyMs = outcome.cancelLatencyMs;
  if (outcome.stopToFinishMs !== undefined) out.stopToFinishMs = outcome.stopToFinishMs;
  if (outcome.engineBytes !== undefined) out.engineBytes = outcome.engineBytes;
  if (outcome.status === 'succeeded') {
    const outputPath = outcome.outputPath ?? record?.outputPath;
    if (outputPath) out.outputPath = outputPath;
  }
  if (outcome.error) out.error = outcome.error;
  if (outcome.memory) out.memory = outcome.memory;
  if (outcome.memoryStop) out.memoryStop = outcome.memoryStop;
  if (outcome.oomKill) out.oomKill = outcome.oomKill;
  // The precision check (issue 36): "Layers: 31 of 36 compute layers run FP16; 5 run FP32: …".
  if (outcome.layers) {
    out.layers = outcome.layers;
    out.message += `. ${buildLayersText(outcome.layers)}`;
  }
  const cache = outcome.cache ?? record?.cache;
  if (cache) out.timingCache = cache;
  // A cache that could not be used costs the next build its speed-up: worth a line of its own.
  if (cache?.warning) out.message += `. Timing cache: ${cache.warning}`;
  return out;
}

/**
 * get_build: the state of a build now. `view` is the build view when the caller has one;
 * otherwise it is rebuilt from the service's record (its phase snapshot).
 */
export function buildState(record: BuildRecord, reason: CancelReason | undefined, nowWall: number, view: BuildView = viewFromRecord(record)): BuildStateOut {
  const outcome = record.outcome;
  const startedWall = record.startedAt ? Date.parse(record.startedAt) : undefined;
  // A record carries no build clock; from its start time when the view has none running.
  const nowT = outcome ? outcome.durationMs : Math.max(view.elapsedMs(nowWall), startedWall !== undefined ? nowWall - startedWall : 0);
  const out: BuildStateOut = {
    buildId: record.id,
    state: record.state,
    message: '',
    modelPath: record.modelPath,
    queuedAt: record.queuedAt,
    engineAvailable: record.engineAvailable,
    phases: summarizePhases(view, nowT),
  };
  if (record.outputPath) out.outputPath = record.outputPath;
  if (record.startedAt) out.startedAt = record.startedAt;
  if (record.finishedAt) out.finishedAt = record.finishedAt;
  if (record.backend) out.backend = record.backend;
  if (record.simulated !== undefined) out.simulated = record.simulated;
  if (record.watched) out.watched = { program: record.watched.program, pid: record.watched.pid, argv: record.watched.argv, probe: record.watched.probe };
  if (reason && (record.state === 'cancelling' || record.state === 'cancelled')) out.cancelReason = reason;
  if (record.cache ?? outcome?.cache) out.timingCache = record.cache ?? outcome?.cache;
  if (outcome) {
    out.outcome = { status: outcome.status, durationMs: outcome.durationMs };
    if (outcome.cancelLatencyMs !== undefined) out.outcome.cancelLatencyMs = outcome.cancelLatencyMs;
    if (outcome.stopToFinishMs !== undefined) out.outcome.stopToFinishMs = outcome.stopToFinishMs;
    if (outcome.engineBytes !== undefined) out.outcome.engineBytes = outcome.engineBytes;
    if (outcome.error) out.outcome.error = outcome.error;
    const site = crashSite(outcome);
    if (site) out.outcome.lastPhasePath = site;
    if (outcome.memory) out.outcome.memory = outcome.memory;
    if (outcome.memoryStop) out.outcome.memoryStop = outcome.memoryStop;
    if (outcome.oomKill) out.outcome.oomKill = outcome.oomKill;
    out.message = `Build ${record.id} ${outcomeSentence(outcome, reason, undefined, record)}`;
  } else {
    const hasPath = view.currentPath().length > 0;
    if (hasPath) out.currentPhase = whereText(view);
    const left = view.remaining(nowWall);
    if (left) out.remaining = left;
    const where = hasPath ? `, at ${out.currentPhase}` : '';
    out.message =
      record.state === 'queued'
        ? `Build ${record.id} is queued behind an earlier build`
        : `Build ${record.id} is ${record.state} (${formatDuration(nowT)} so far${where}${left ? `; ${formatRemaining(left, view.phaseSharesSource)}` : ''})`;
  }
  return out;
}

/**
 * One build of a server's list, as MCP `list_builds` and the LSP's listBuilds answer it. A build
 * `watch` or a drop-in monitor reported (docs/watch.md) carries `watched`; its modelPath is a label.
 */
export function buildListEntry(b: BuildRecord) {
  return {
    buildId: b.id,
    state: b.state,
    modelPath: b.modelPath,
    ...(b.outputPath ? { outputPath: b.outputPath } : {}),
    queuedAt: b.queuedAt,
    ...(b.watched ? { watched: { program: b.watched.program, pid: b.watched.pid, argv: b.watched.argv, probe: b.watched.probe } } : {}),
  };
}
