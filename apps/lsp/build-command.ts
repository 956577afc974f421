// trtBuildStudio.build: one request = one build, from start to its final state, with work-done
// progress, phase-tree snapshots and the build log while it runs. window/workDoneProgress/cancel
// for its token and $/cancelRequest for the request both cancel the build itself (the worker stops
// at the next step boundary and writes nothing), exactly like the Stop button.
import type { CancellationToken, Diagnostic, ProgressToken } from 'vscode-languageserver';
import type { z } from 'zod';
import type { BuildServiceApi } from '../service/api.js';
import { displayMessage } from '../shared/display-text.js';
import { ServiceError } from '../service/api.js';
import { checkShapes } from '../service/build-validation.js';
import { describeZodError, type BuildEvent, type ModelSummary } from '../shared/protocol.js';
import type { CancelReasons } from '../surface/cancel-reasons.js';
import type { NotifierOptions } from '../surface/progress-notifier.js';
import { progressMessage } from '../surface/progress-message.js';
import { crashSite, formatCurrentPath } from '../shared/view-format.js';
import { buildResult } from '../surface/build-result.js';
import { BuildArgs, parseBuildOptions, type BuildResultOut } from '../surface/schemas.js';
import { farmFields, formatTarget, MatrixTargets, type MatrixResult } from '../surface/farm-builds.js';
import { RunStop, runBuild, StoppedBeforeStart } from '../surface/run-build.js';
import { runMatrix } from '../surface/run-matrix.js';
import { phaseRows, type BuildLogLine, type BuildView } from './build-view-notification.js';
import { BUILD_LOG_NOTIFICATION, BUILD_VIEW_NOTIFICATION, COMMANDS } from './names.js';
import { modelUri, parserDiagnostics, problemDiagnostics, type ProblemKind } from './diagnostics.js';
import { invalidParams, requestCancelled, requestFailed, toResponseError } from './errors.js';
import { fileArg } from './paths.js';
import { WorkDoneBuildProgress, type WorkDoneValue } from './work-done.js';

/** A work-done value with its message text safe to show (names escaped, long values cut: display-text.ts). */
function safeProgress(v: WorkDoneValue): WorkDoneValue {
  return v.message === undefined ? v : { ...v, message: displayMessage(v.message) };
}

export const BUILD_COMMAND = COMMANDS.build;

/** How to give the language server a farm, for messages that refuse target/targets without one. */
const FARM_HINT = 'start the language server with --queue redis://host:port';

/**
 * The command's argument: one build, or (a build farm only) `targets`, a matrix: one build per
 * target, all followed to their ends and reported together (as MCP's build_matrix does).
 */
const LspBuildArgs = BuildArgs.extend({ targets: MatrixTargets.optional() });

/** What the build command needs from the connection; a seam so the wiring stays in server.ts. */
export interface LspPort {
  sendProgress(token: ProgressToken, value: WorkDoneValue): void;
  sendNotification(method: string, params: unknown): void;
  publishDiagnostics(uri: string, diagnostics: Diagnostic[]): void;
  /** A server-created progress token, or undefined when the client cannot show one. */
  createProgressToken(): Promise<ProgressToken | undefined>;
  log(line: string): void;
}

/** Builds this server started and how to stop each; shared with trtBuildStudio.cancel and shutdown. */
export class ActiveBuilds {
  readonly byId = new Map<string, { modelPath: string; cancel: () => boolean }>();
  /** A progress token → the builds it reports on (one, or a matrix's). */
  readonly byToken = new Map<ProgressToken, string[]>();

  cancelByToken(token: ProgressToken): boolean {
    const ids = this.byToken.get(token) ?? [];
    return ids.map((id) => this.byId.get(id)?.cancel() ?? false).some(Boolean);
  }
}

export interface BuildCommandDeps {
  service: BuildServiceApi;
  reasons: CancelReasons;
  active: ActiveBuilds;
  port: LspPort;
  pacing?: Pick<NotifierOptions, 'minIntervalMs' | 'heartbeatMs' | 'silentAfterMs'>;
  /** Minimum gap between two buildView snapshots of one build. */
  viewIntervalMs?: number;
}

export type LspBuildResult = BuildResultOut & { modelPath: string; lastPhasePath?: string[] };
export type LspMatrixResult = MatrixResult & { modelPath: string; buildIds: string[] };

function modelProblem(port: LspPort, modelPath: string, kind: ProblemKind, message: string): never {
  port.publishDiagnostics(modelUri(modelPath), problemDiagnostics(kind, message));
  throw requestFailed(BUILD_COMMAND, message);
}

/** Reads the model and checks its shapes before anything is queued; problems become diagnostics. */
async function checkModel(deps: BuildCommandDeps, modelPath: string, shapes: Parameters<typeof checkShapes>[1]): Promise<ModelSummary> {
  let summary: ModelSummary;
  try {
    summary = await deps.service.inspectModel(modelPath);
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'bad_model') modelProblem(deps.port, modelPath, 'bad-model', e.message);
    throw e;
  }
  try {
    checkShapes(summary, shapes);
  } catch (e) {
    if (e instanceof ServiceError) modelProblem(deps.port, modelPath, 'shapes', e.message);
    throw e;
  }
  return summary;
}

export async function runBuildCommand(
  deps: BuildCommandDeps,
  rawArgs: unknown,
  request: { workDoneToken?: ProgressToken; cancel: CancellationToken },
): Promise<LspBuildResult | LspMatrixResult> {
  const { service, port } = deps;
  if (rawArgs === undefined) {
    throw invalidParams(BUILD_COMMAND, 'expects one argument object {"modelPath": "...", "outputPath"?, "options"?, "timeBudgetSeconds"?, "target"? or "targets"?}');
  }
  const parsed = LspBuildArgs.safeParse(rawArgs);
  if (!parsed.success) throw invalidParams(BUILD_COMMAND, `invalid arguments: ${describeZodError(parsed.error)}`);
  const { targets, ...args } = parsed.data;
  if (targets) return runMatrixCommand(deps, { ...args, targets }, request);
  let farm;
  let modelPath: string;
  let outputPath: string | undefined;
  let options;
  try {
    modelPath = fileArg(args.modelPath, 'modelPath');
    outputPath = args.outputPath === undefined ? undefined : fileArg(args.outputPath, 'outputPath');
    options = parseBuildOptions(args.options);
    farm = farmFields(service, args, FARM_HINT);
  } catch (e) {
    throw toResponseError(BUILD_COMMAND, e);
  }

  try {
    await checkModel(deps, modelPath, options.shapes);
  } catch (e) {
    throw toResponseError(BUILD_COMMAND, e);
  }
  // The model is fine now: whatever an earlier attempt marked on it is out of date.
  port.publishDiagnostics(modelUri(modelPath), []);

  const { reasons, active } = deps;
  let id = '';
  let beginProgress: (queued: boolean) => void = () => {};
  let token: ProgressToken | undefined;
  let progress: WorkDoneBuildProgress | undefined;
  let view: ViewPublisher | undefined;
  const stop = new RunStop(reasons, {
    send: (_request, send) => {
      const accepted = send();
      port.log(`build ${id}: cancel ${accepted ? 'sent' : 'not needed (already finished)'}`);
      return accepted;
    },
  });
  // $/cancelRequest: before the build exists the run starts nothing; while startBuild (or the
  // progress token) is on its way, the cancel is sent once the build has its id. A token that is
  // already cancelled calls a new listener too, a moment later: one request is one cancel.
  const onRequestCancelled = () => void (stop.asked('request') || stop.request('user', 'request'));
  if (request.cancel.isCancellationRequested) onRequestCancelled();
  const onCancelRequest = request.cancel.onCancellationRequested(onRequestCancelled);

  let run;
  try {
    run = await runBuild(
      service,
      { modelPath, outputPath, options, timeBudgetSeconds: args.timeBudgetSeconds, ...farm },
      {
        stop,
        onStarted: async (record) => {
          id = record.id;
          // Only a build that exists gets a progress token: a token must see `begin` before anything else.
          token =
            request.workDoneToken ??
            (await port.createProgressToken().catch((e: unknown) => {
              port.log(`window/workDoneProgress/create failed (${(e as Error).message}); building without progress`);
              return undefined;
            }));
          port.log(`build ${id} started for ${modelPath}`);
          const t = token;
          progress = new WorkDoneBuildProgress({
            token: t ?? '',
            buildId: id,
            pacing: deps.pacing,
            // Without a token the model and its percentage still feed the buildView snapshots.
            send: t === undefined ? () => {} : (tk, v) => port.sendProgress(tk, safeProgress(v)),
          });
          const publisher = (view = new ViewPublisher(deps, id, modelPath, progress));
          active.byId.set(id, { modelPath, cancel: () => stop.request('user', 'command') });
          if (t !== undefined) active.byToken.set(t, [id]);
          // The notifier's live view (apps/shared/live-view.ts) follows the build: the snapshot first and
          // each event once, also when events arrive while subscribe() is still returning its snapshot.
          // The work-done "begin" goes out with the snapshot (it says since when a queued build waits)
          // and before any event's report.
          const p = progress;
          const title = `TensorRT build: ${modelPath.split(/[\\/]/).pop()}`;
          const busy = service.listBuilds().some((b) => b.id !== id && (b.state === 'running' || b.state === 'cancelling'));
          let begun = false;
          beginProgress = (queued: boolean) => {
            if (begun) return;
            begun = true;
            p.begin(title, busy && queued);
          };
          p.notifier.followers.push({
            onReset: (_view, rec) => beginProgress(rec?.state === 'queued'),
            onEvents: (events) => publisher.onEvents(events),
          });
        },
        follow: () => {
          const live = progress!.notifier.live.follow(service);
          beginProgress(false);
          return live;
        },
        onFollowError: (e) => {
          port.log(`cannot follow build ${id}: ${(e as Error).message}`);
          beginProgress(false);
        },
      },
    );
  } catch (e) {
    if (e instanceof StoppedBeforeStart) throw requestCancelled(BUILD_COMMAND, 'cancelled before the build started');
    if (!progress) {
      if (e instanceof ServiceError && e.code === 'bad_model') {
        port.publishDiagnostics(modelUri(modelPath), problemDiagnostics('bad-model', e.message));
      }
    } else progress.end(`could not follow the build to its end: ${(e as Error).message}`, false);
    throw toResponseError(BUILD_COMMAND, e);
  } finally {
    onCancelRequest.dispose();
    if (id) active.byId.delete(id);
    if (token !== undefined) active.byToken.delete(token);
  }
  const outcome = run.finished;
  const p = progress!;
  p.notifier.ended(outcome); // done by the run when the view was followed; its outcome all the same when not
  const bv = p.view;
  const pathBefore = p.notifier.pathAtEnd;
  const base = buildResult(service.getBuild(id), outcome, run.reason, args.timeBudgetSeconds, bv);
  const result: LspBuildResult = { ...base, modelPath };
  // Where a crashed build died is the one fact its user needs. The service knows it exactly when
  // the crash record outside the worker survived (lastPhasePath, already in the result's message);
  // otherwise the deepest phase that reached us is the best there is: events still queued in the
  // dead worker never arrive, so it can be an ancestor.
  if (outcome.status === 'crashed' && !crashSite(outcome) && pathBefore.length > 0) {
    result.lastPhasePath = pathBefore.map((l) => l.name);
    result.message += ` (the last phase it reported: ${formatCurrentPath(pathBefore)})`;
  }
  view!.finish(result);
  p.end(result.message, outcome.status === 'succeeded');
  port.log(result.message);

  if (outcome.status === 'failed') {
    const diags = parserDiagnostics(outcome.error);
    if (diags) port.publishDiagnostics(modelUri(modelPath), diags);
  }
  if (stop.asked('request')) throw requestCancelled(BUILD_COMMAND, result.message, result);
  if (outcome.status === 'failed' || outcome.status === 'crashed') throw requestFailed(BUILD_COMMAND, result.message, result);
  return result;
}

/**
 * A matrix: the model is checked once (problems become diagnostics, as for one build), the farm
 * queues one build per target, and one work-done progress follows them all: a report as each
 * ends ("2 of 3 ended: gpu=NVIDIA_L4 succeeded"), the percentage the share ended. Cancelling the
 * request or its progress stops every build of it; trtBuildStudio.cancel takes each build's id.
 * The result reports every build as the single build command does, with its target; it fails
 * (RequestFailed, the result as data) when one of them failed or crashed.
 */
async function runMatrixCommand(
  deps: BuildCommandDeps,
  args: Omit<z.infer<typeof LspBuildArgs>, 'targets'> & { targets: Array<Record<string, string>> },
  request: { workDoneToken?: ProgressToken; cancel: CancellationToken },
): Promise<LspMatrixResult> {
  const { service, port, active } = deps;
  if (args.target !== undefined) throw invalidParams(BUILD_COMMAND, 'give either target or targets, not both');
  if (args.outputPath !== undefined) {
    throw invalidParams(BUILD_COMMAND, 'outputPath: a matrix writes one engine per target; leave outputPath out (engines go to the artifact folder)');
  }
  if (!service.startMatrix) throw invalidParams(BUILD_COMMAND, `targets: only a build farm routes builds (${FARM_HINT})`);
  let modelPath: string;
  let options;
  try {
    modelPath = fileArg(args.modelPath, 'modelPath');
    options = parseBuildOptions(args.options);
    await checkModel(deps, modelPath, options.shapes);
  } catch (e) {
    throw toResponseError(BUILD_COMMAND, e);
  }
  port.publishDiagnostics(modelUri(modelPath), []);
  // Cancelling the request stops every build of the matrix, also while the farm is queueing them.
  const stop = new RunStop(deps.reasons);
  const onRequestCancelled = () => void (stop.asked('request') || stop.request('user', 'request'));
  if (request.cancel.isCancellationRequested) onRequestCancelled();
  const onCancel = request.cancel.onCancellationRequested(onRequestCancelled);
  let ids: readonly string[] = [];
  let token: ProgressToken | undefined;
  const send = (v: WorkDoneValue) => token !== undefined && port.sendProgress(token, safeProgress(v));
  let out: MatrixResult;
  try {
    ({ result: out } = await runMatrix(
      service,
      {
        modelPath,
        options,
        timeBudgetSeconds: args.timeBudgetSeconds,
        targets: args.targets,
        ...(args.retries !== undefined ? { retries: args.retries } : {}),
      },
      {
        stop,
        onStarted: async (started) => {
          ids = started;
          port.log(`matrix of ${ids.length} builds started for ${modelPath}: ${ids.map((id, i) => `${id} (${formatTarget(args.targets[i])})`).join(', ')}`);
          token = request.workDoneToken ?? (await port.createProgressToken().catch(() => undefined));
          send({
            kind: 'begin',
            title: `TensorRT matrix: ${modelPath.split(/[\\/]/).pop()} (${ids.length} targets)`,
            cancellable: true,
            message: `${ids.length} builds queued: ${args.targets.map(formatTarget).join('; ')}`,
            percentage: 0,
          });
          for (const id of ids) active.byId.set(id, { modelPath, cancel: () => deps.reasons.request(service, id, 'user', 'command') });
          if (token !== undefined) active.byToken.set(token, [...ids]);
        },
        onEnded: (e) => {
          const message = `${e.ended} of ${e.total} ended: ${formatTarget(e.target)} ${e.finished.status}`;
          port.log(`build ${e.id}: ${message}`);
          send({ kind: 'report', cancellable: true, message, percentage: Math.round((100 * e.ended) / e.total) });
        },
      },
    ));
  } catch (e) {
    if (e instanceof StoppedBeforeStart) throw requestCancelled(BUILD_COMMAND, 'cancelled before the builds started');
    if (ids.length > 0) send({ kind: 'end', message: `could not follow the builds to their end: ${(e as Error).message}` });
    throw toResponseError(BUILD_COMMAND, e);
  } finally {
    onCancel.dispose();
    for (const id of ids) active.byId.delete(id);
    if (token !== undefined) active.byToken.delete(token);
  }
  send({ kind: 'end', message: out.message });
  port.log(out.message);
  const result: LspMatrixResult = { ...out, modelPath, buildIds: [...ids] };
  if (stop.asked('request')) throw requestCancelled(BUILD_COMMAND, out.message, result);
  if (out.builds.some((b) => b.status === 'failed' || b.status === 'crashed')) throw requestFailed(BUILD_COMMAND, out.message, result);
  return result;
}

const DEFAULT_VIEW_INTERVAL_MS = 500;

/** Throttled buildView snapshots and build-log batches for one build. */
class ViewPublisher {
  private timer: NodeJS.Timeout | undefined;
  private lastSent = -Infinity;
  private logLines: BuildLogLine['lines'] = [];
  private readonly interval: number;

  constructor(
    private readonly deps: BuildCommandDeps,
    private readonly id: string,
    private readonly modelPath: string,
    private readonly progress: WorkDoneBuildProgress,
  ) {
    this.interval = deps.viewIntervalMs ?? DEFAULT_VIEW_INTERVAL_MS;
  }

  onEvents(events: readonly BuildEvent[]): void {
    let changed = false;
    for (const ev of events) {
      if (ev.type === 'log') this.logLines.push({ severity: ev.severity, message: ev.message, t: ev.t });
      if (ev.type !== 'heartbeat') changed = true;
    }
    if (changed) this.schedule();
  }

  finish(result: LspBuildResult): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.send(
      {
        status: result.status,
        message: result.message,
        ...(result.outputPath ? { outputPath: result.outputPath } : {}),
        ...(result.engineBytes !== undefined ? { engineBytes: result.engineBytes } : {}),
        ...(result.lastPhasePath ? { lastPhasePath: result.lastPhasePath } : {}),
      },
      result.timingCache,
    );
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = this.lastSent + this.interval - Date.now();
    if (wait <= 0) this.send();
    else this.timer = setTimeout(() => this.send(), wait);
  }

  private send(outcome?: BuildView['outcome'], finalCache?: BuildView['cache']): void {
    this.timer = undefined;
    this.lastSent = Date.now();
    const { port, service } = this.deps;
    if (this.logLines.length) {
      port.sendNotification(BUILD_LOG_NOTIFICATION, { buildId: this.id, lines: this.logLines } satisfies BuildLogLine);
      this.logLines = [];
    }
    const record = service.getBuild(this.id);
    const v = this.progress.view;
    const now = Date.now();
    const elapsedMs = v.elapsedMs(now);
    const quiet = v.sinceLastCallbackMs(now);
    const cores = v.workerCores();
    const left = v.remaining(now);
    const cache = finalCache ?? v.cache;
    const view: BuildView = {
      buildId: this.id,
      modelPath: this.modelPath,
      state: record?.state ?? 'queued',
      ...(record?.backend ? { backend: record.backend } : {}),
      ...(record?.simulated !== undefined ? { simulated: record.simulated } : {}),
      currentPath: v.currentPath().map((l) => l.name),
      message: outcome?.message ?? progressMessage(v, now),
      percentage: outcome ? this.progress.percentage.final(outcome.status === 'succeeded') : this.progress.percentage.next(v),
      ...(quiet !== undefined ? { sinceLastCallbackMs: quiet } : {}),
      ...(cores !== undefined ? { workerCores: cores } : {}),
      ...(v.gpu ? { gpuUtilPercent: v.gpu.percent } : {}),
      ...(left ? { remaining: left } : {}),
      elapsedMs,
      rows: phaseRows(v, elapsedMs),
      ...(cache ? { cache } : {}),
      ...(outcome ? { outcome } : {}),
    };
    port.sendNotification(BUILD_VIEW_NOTIFICATION, view);
  }
}
