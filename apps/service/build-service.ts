// The build service: validates build requests, queues them (FIFO; by default one at a time,
// because concurrent builds on one GPU distort each other's tactic timings), runs each in its own
// worker process, and keeps this run's history (full details for the most recent finished builds,
// summaries for the rest). Every surface (CLI, HTTP/SSE, MCP, Electron main) sits on this one
// implementation of BuildServiceApi.
import * as crypto from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { BuildView, type BuildViewSnapshot } from '../shared/build-view.js';
import type { BackendChoice, BackendInfo, BuildEvent, BuildFinished, BuildRecord, CancelReason, ModelSummary } from '../shared/protocol.js';
import { backendCapabilities, chosenBackend, trtSince, trtVersionOf } from '../shared/trt-capabilities.js';
import { WorkerToParent, type ParentToWorker } from '../worker/messages.js';
import { ServiceError, type BuildRoutesRead, type BuildServiceApi, type LocalServiceCalls, type StartBuildInput, type SubscribeOpts, type Subscription } from './api.js';
import { BuildEstimator } from './build-estimator.js';
import { BuildProfileStore, buildKind } from './build-profiles.js';
import { BuildSession } from './build-session.js';
import { validateBuild, type ValidatedBuild } from './build-validation.js';
import { EngineReuseStore } from './engine-reuse-store.js';
import { placeStoredEngine, type ReusedEngine } from './engine-reuse.js';
import { claimOutput, realOr, type OutputClaim } from './output-claim.js';
import { deleteEngineFiles, listEngineFiles, type DeleteEnginesResult, type EngineFile } from './engine-store.js';
import { describeExit } from './exit-status.js';
import { isRecordedEngine, recordedEnginePath, type EngineRecord } from './engine-identity.js';
import { inspectModel } from './model/model-reader.js';
import type { PluginPolicy } from './plugin-libraries.js';
import { inhibitWhileWorkersRun, KEEP_AWAKE_ENV, SleepInhibitor } from './sleep-inhibitor.js';
import { childProcessLauncher, type WorkerLauncher } from './worker-host.js';
import { WatchedSession } from './watched/watched-session.js';

export interface BuildServiceOptions {
  launcher?: WorkerLauncher;
  /** Where engines go when a build names no output path. */
  outputDir?: string;
  /** Builds running at once (default 1: one GPU). */
  concurrency?: number;
  /** Kill a worker that has not finished this long after cancel (default 10 000 ms). */
  cancelKillMs?: number;
  /**
   * Events kept per build for replay (default 20 000; steps are coalesced first). A subscriber
   * resuming from before the kept window is reset with the build view instead (never a gap).
   */
  retainEvents?: number;
  /**
   * Where earlier builds' profiles are kept for the predicted end (default: the user's state
   * directory, TBS_STATE_DIR or XDG_STATE_HOME); null turns predictions off.
   */
  profiles?: BuildProfileStore | null;
  /** Folder for the per-build crash records the native layer keeps (default: in the temp folder). */
  crashDir?: string;
  /** Heartbeat cadence asked of the workers, ms (default: the native layer's, 1 s). */
  heartbeatMs?: number;
  /**
   * A build past its memory limit is asked to stop; without a step this long after, its worker
   * is ended (default 10 000 ms, TBS_MEMORY_GRACE_MS).
   */
  memoryGraceMs?: number;
  /** Lines for the server log that do not change a build (a profile that could not be saved). */
  onWarning?: (message: string) => void;
  /** How long the backend list is cached (default 60 s). */
  backendsTtlMs?: number;
  /**
   * Finished builds whose details (event log for replay, phase tree) are kept, most recent first
   * (default 20). Older finished builds keep only their summary: the record without phases. A
   * long-running server would otherwise grow by each build's details forever.
   */
  retainFinishedBuilds?: number;
  /**
   * Where builds with `reuse` look for, and keep, engines by their reuse key (default: the user's
   * store, $XDG_CACHE_HOME/trt-build-studio/engines; the farm: its shared artifact folder).
   */
  reuseStore?: EngineReuseStore;
  /**
   * Hold off system sleep while workers run (systemd-inhibit; see sleep-inhibitor.ts). Default:
   * TBS_KEEP_AWAKE=1 in the environment. The desktop app uses Electron's own blocker instead.
   */
  keepAwake?: boolean;
  /**
   * Which plugin libraries a build may name (plugin-libraries.ts). Default `any`: the caller is
   * the operator. Services that take builds from clients pass their `--plugin-dir` folders.
   */
  pluginPolicy?: PluginPolicy;
}

export const DEFAULT_RETAIN_FINISHED_BUILDS = 20;

/** Where engines go when neither the build nor the service names a folder. */
export function defaultOutputDir(): string {
  return path.join(os.tmpdir(), 'trt-build-studio', 'engines');
}

/** What is left of a finished build once its details are evicted: its record, no events, no rows. */
class BuildSummary {
  constructor(
    private readonly summary: BuildRecord,
    private readonly engine: EngineRecord | undefined,
  ) {}

  engineRecord(): EngineRecord | undefined {
    return this.engine;
  }

  /** A view of the outcome alone: a client learns how it ended, and that the phases are gone. */
  view(): BuildViewSnapshot {
    const v = new BuildView(this.summary.id);
    if (this.summary.outcome) v.apply(this.summary.outcome);
    return v.snapshot();
  }

  get outcome(): BuildFinished {
    return this.summary.outcome!;
  }

  record(): BuildRecord {
    return { ...this.summary, engineAvailable: this.enginePath() !== undefined };
  }

  /** Looked up live, like a session does: the file may have been deleted or replaced since. */
  enginePath(): string | undefined {
    return this.summary.outcome?.status === 'succeeded' ? recordedEnginePath(this.summary.outputPath, this.engine) : undefined;
  }
}

const BACKENDS_TIMEOUT_MS = 20_000;
/**
 * Reading build routes creates a TensorRT builder (CUDA start-up and the builder kernel library:
 * seconds, by public accounts; not measured here), so it gets longer than a listing.
 */
const BUILD_ROUTES_TIMEOUT_MS = 120_000;

export class BuildService implements BuildServiceApi, LocalServiceCalls {
  private readonly launcher: WorkerLauncher;
  private readonly outputDir: string;
  private readonly outputDirLevels: number;
  private readonly concurrency: number;
  private readonly cancelKillMs: number;
  private readonly retainEvents: number;
  private readonly profiles: BuildProfileStore | null;
  private readonly crashDir: string;
  private readonly heartbeatMs?: number;
  private readonly memoryGraceMs?: number;
  private readonly onWarning?: (message: string) => void;
  private readonly backendsTtlMs: number;
  private readonly retainFinishedBuilds: number;
  private store?: EngineReuseStore;
  /** Every build of this run, oldest first; finished ones beyond the bound as summaries only. */
  private readonly sessions = new Map<string, BuildSession | WatchedSession | BuildSummary>();
  /** Finished sessions still holding their details, in the order their workers were gone. */
  private readonly finishedDetailed: Array<BuildSession | WatchedSession> = [];
  private readonly queue: BuildSession[] = [];
  private readonly running = new Set<BuildSession>();
  private backendsCache?: { at: number; list: Promise<BackendInfo[]> };
  private readonly helperExits = new Set<Promise<void>>();
  private counter = 0;
  private closing = false;
  private readonly pluginPolicy: PluginPolicy;

  constructor(opts: BuildServiceOptions = {}) {
    const launcher = opts.launcher ?? childProcessLauncher;
    const keepAwake = opts.keepAwake ?? process.env[KEEP_AWAKE_ENV] === '1';
    this.launcher = keepAwake ? inhibitWhileWorkersRun(launcher, new SleepInhibitor({ log: opts.onWarning })) : launcher;
    this.outputDir = path.resolve(opts.outputDir ?? defaultOutputDir());
    // The default sits in the shared temporary folder: its parent is the product's own too.
    this.outputDirLevels = opts.outputDir === undefined ? 2 : 1;
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
    this.cancelKillMs = opts.cancelKillMs ?? 10_000;
    this.retainEvents = Math.max(100, opts.retainEvents ?? 20_000);
    this.profiles = opts.profiles === undefined ? new BuildProfileStore() : opts.profiles;
    this.crashDir = path.resolve(opts.crashDir ?? path.join(os.tmpdir(), 'trt-build-studio', 'crash-records'));
    this.heartbeatMs = opts.heartbeatMs;
    const graceEnv = Number(process.env.TBS_MEMORY_GRACE_MS);
    this.memoryGraceMs = opts.memoryGraceMs ?? (Number.isFinite(graceEnv) && graceEnv > 0 ? graceEnv : undefined);
    this.onWarning = opts.onWarning;
    this.backendsTtlMs = opts.backendsTtlMs ?? 60_000;
    const rfb = opts.retainFinishedBuilds ?? DEFAULT_RETAIN_FINISHED_BUILDS;
    if (!Number.isInteger(rfb) || rfb < 0) {
      throw new RangeError(`retainFinishedBuilds must be a non-negative integer, got ${rfb}`);
    }
    this.retainFinishedBuilds = rfb;
    this.store = opts.reuseStore;
    this.pluginPolicy = opts.pluginPolicy ?? { kind: 'any' };
  }

  /** The engine store of `reuse` builds (made on first use: most services never need it). */
  reuseStore(): EngineReuseStore {
    return (this.store ??= new EngineReuseStore());
  }

  /** Forgets the cached backend list: the next listing asks a worker again (TensorRT moved, say). */
  forgetBackends(): void {
    this.backendsCache = undefined;
  }

  listBackends(): Promise<BackendInfo[]> {
    const c = this.backendsCache;
    if (c && Date.now() - c.at < this.backendsTtlMs) return c.list;
    const list = this.queryBackends();
    this.backendsCache = { at: Date.now(), list };
    // A failure should not stick: the next call asks a fresh worker.
    list.catch(() => {
      if (this.backendsCache?.list === list) this.backendsCache = undefined;
    });
    return list;
  }

  /** The addon is only ever loaded in a worker, so even "which backends exist" asks one. */
  private queryBackends(): Promise<BackendInfo[]> {
    return this.askWorker({ type: 'backends' }, 'list backends', BACKENDS_TIMEOUT_MS, (m) => (m.type === 'backends' ? m.list : undefined));
  }

  /**
   * The knob database (getAllBuildRoutes() JSON) of the backend `choice` resolves to, read when
   * asked: the simulator's comes with its listing; TensorRT's from the on-disk cache when the
   * listing already has it, else from the library, through a worker (the addon creates a builder
   * off the JS thread and keeps the result on disk, so the next listing reports it without one).
   * Throws ServiceError('bad_input') when the backend has no build routes, ('internal') with the
   * library's reason when it could not list them.
   */
  async readBuildRoutes(choice: BackendChoice = 'auto'): Promise<BuildRoutesRead> {
    const backend = chosenBackend(choice, await this.listBackends());
    const version = trtVersionOf(backend);
    if (!backend || !version) throw new ServiceError('bad_input', `no ${choice === 'auto' ? '' : `${choice} `}backend is available to list build routes`);
    if (!backendCapabilities(backend)?.buildRoutes) {
      throw new ServiceError('bad_input', `TensorRT ${version} has no build routes (they need ${trtSince({ feature: 'buildRoutes' })} or newer)`);
    }
    const listed = backend.detail?.buildRoutesJson;
    if (listed !== undefined) return { backend: backend.name, version, json: listed, source: backend.name === 'simulated' ? 'simulated' : 'disk cache' };
    if (backend.name !== 'tensorrt') throw new ServiceError('internal', `the ${backend.name} backend (TensorRT ${version}) listed no build routes`);
    const json = await this.askWorker({ type: 'buildRoutes' }, 'read build routes', BUILD_ROUTES_TIMEOUT_MS, (m) => (m.type === 'buildRoutes' ? m.json : undefined));
    // The addon kept them on disk: the next listing reports them (the form's picker, validation).
    this.backendsCache = undefined;
    return { backend: 'tensorrt', version, json, source: 'library' };
  }

  /**
   * One question to a fresh worker (it exits once released): `pick` takes the answer from the
   * worker's messages; an `error` message, an early exit or `timeoutMs` reject with what happened.
   */
  private askWorker<T>(question: ParentToWorker, what: string, timeoutMs: number, pick: (msg: WorkerToParent) => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      let ch;
      try {
        ch = this.launcher();
      } catch (e) {
        reject(new ServiceError('internal', `could not start a worker: ${(e as Error).message}`));
        return;
      }
      const channel = ch;
      let done = false;
      const finish = (err: Error | undefined, answer?: T) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) {
          channel.kill();
          reject(err);
        } else resolve(answer as T);
      };
      const timer = setTimeout(() => finish(new ServiceError('internal', `the worker did not ${what} in time`)), timeoutMs);
      const exited = new Promise<void>((r) =>
        channel.onExit((code, signal) => {
          const tail = channel.stderrTail?.();
          const last = tail ? `: ${tail.split('\n').slice(-3).join(' | ')}` : '';
          finish(new ServiceError('internal', `the worker exited before it could ${what} (${describeExit({ code, signal })})${last}`));
          r();
        }),
      );
      this.helperExits.add(exited);
      void exited.then(() => this.helperExits.delete(exited));
      channel.onMessage((raw) => {
        const msg = WorkerToParent.safeParse(raw);
        if (!msg.success) return finish(new ServiceError('internal', `the worker sent an invalid answer (asked to ${what})`));
        if (msg.data.type === 'error') return finish(new ServiceError('internal', msg.data.message));
        const answer = pick(msg.data);
        if (answer !== undefined) {
          channel.send({ type: 'release' });
          finish(undefined, answer);
        }
      });
      channel.send(question);
    });
  }

  inspectModel(modelPath: string): Promise<ModelSummary> {
    if (typeof modelPath !== 'string' || !modelPath) return Promise.reject(new ServiceError('bad_input', 'modelPath is required'));
    return inspectModel(modelPath);
  }

  async startBuild(input: StartBuildInput): Promise<BuildRecord> {
    if (this.closing) throw new ServiceError('conflict', 'the build service is shutting down');
    const id = `b${++this.counter}-${crypto.randomBytes(3).toString('hex')}`;
    const shownName = displayName(input.modelDisplayName);
    // The default output path is decided once, in validateBuild; the name it picks is claimed at
    // once, so two builds of one model validated side by side cannot both pick the same free name.
    const claimed: string[] = [];
    const validated = await validateBuild(input, {
      id,
      outputDir: this.outputDir,
      outputDirLevels: this.outputDirLevels,
      backends: () => this.listBackends(),
      taken: (p) => this.outputTaken(p) || this.claimedOutputs.has(p),
      claim: (p) => {
        this.claimedOutputs.add(p);
        claimed.push(p);
      },
      pluginPolicy: this.pluginPolicy,
    }).catch((e: unknown) => {
      for (const p of claimed) this.claimedOutputs.delete(p);
      throw e;
    });
    // The claim holds the name until a session is registered (the reuse lookup awaits); from
    // then on the session holds it (outputTaken).
    const release = () => {
      for (const p of claimed) this.claimedOutputs.delete(p);
    };
    const build = shownName === undefined ? validated : { ...validated, summary: { ...validated.summary, fileName: shownName } };
    if (this.closing) {
      release();
      throw new ServiceError('conflict', 'the build service is shutting down');
    }
    if (build.options.reuse) {
      const reused = await this.reuseStored(id, build).finally(release);
      if (reused) return reused;
    }
    release();
    const session = new BuildSession(id, build, {
      cancelKillMs: this.cancelKillMs,
      retainEvents: this.retainEvents,
      crashDir: this.crashDir,
      heartbeatMs: this.heartbeatMs,
      memoryGraceMs: this.memoryGraceMs,
      estimator: this.estimatorFor(build),
      onSlotFree: (s) => this.onSlotFree(s),
      onWarning: this.onWarning,
      ...(build.options.reuse ? { reuseStore: this.reuseStore() } : {}),
    });
    this.sessions.set(id, session);
    this.queue.push(session);
    this.pump();
    return session.record();
  }

  /**
   * `reuse`: when the store holds an engine under this build's key, its bytes go to the output
   * path with a manifest of their own, and the build ends at once (no worker, no queue). A store
   * that cannot be read is no reason to fail a build: it builds instead, and says why in the log.
   */
  private async reuseStored(id: string, build: ValidatedBuild): Promise<BuildRecord | undefined> {
    let reused: ReusedEngine | undefined;
    // Placing a stored engine writes the output as a build would, so it takes the same claim on
    // it: a build of another process writing there now is left alone (this one then builds, and
    // its launch refuses it naming the holder). A claim folder that cannot be used is no reason
    // not to reuse: the in-process check still holds.
    let claim: OutputClaim | undefined;
    try {
      const r = claimOutput(realOr(build.outputPath), id);
      if (!r.ok) return undefined;
      claim = r.claim;
    } catch {
      claim = undefined;
    }
    try {
      reused = await placeStoredEngine(this.reuseStore(), id, build);
    } catch (e) {
      this.onWarning?.(`build ${id}: the engine store could not be used (${(e as Error).message}); building instead`);
      return undefined;
    } finally {
      claim?.release();
    }
    if (!reused) return undefined;
    const session = new BuildSession(id, build, {
      cancelKillMs: this.cancelKillMs,
      retainEvents: this.retainEvents,
      crashDir: this.crashDir,
      // A reused build says nothing about how long a build takes: no profile, no prediction.
      onSlotFree: (s) => this.onSlotFree(s),
      onWarning: this.onWarning,
    });
    this.sessions.set(id, session);
    session.finishReused(reused);
    return session.record();
  }

  /**
   * A build running inside the user's own program, reported by a probe (docs/watch.md,
   * watched/probe-sink.ts): registered under a fresh id like any build, so every surface lists
   * and follows it, and Stop reaches its probe. It takes no slot: it is not ours to queue.
   */
  addWatchedBuild(make: (id: string) => WatchedSession): WatchedSession {
    const id = `w${++this.counter}-${crypto.randomBytes(3).toString('hex')}`;
    const s = make(id);
    this.sessions.set(id, s);
    void s.waitForResult().then(() => this.retainDetails(s));
    return s;
  }

  /** Default output paths picked by builds still being validated (see startBuild). */
  private readonly claimedOutputs = new Set<string>();

  /** True when a build that has not finished will write `p` (two builds of one model at once). */
  private outputTaken(p: string): boolean {
    for (const s of this.sessions.values()) if (s instanceof BuildSession && !s.finished && s.build.outputPath === p) return true;
    return false;
  }

  /** The predicted end of a build: from the profiles of earlier builds of its kind. */
  private estimatorFor(build: ValidatedBuild): BuildEstimator | undefined {
    if (!this.profiles) return undefined;
    const kind = () =>
      buildKind({
        backend: build.backend,
        backendVersion: build.backendInfo.version ?? '',
        model: build.summary,
        options: build.options,
      });
    return new BuildEstimator(this.profiles, kind);
  }

  private pump(): void {
    while (!this.closing && this.running.size < this.concurrency && this.queue.length > 0) {
      const next = this.queue.shift()!;
      if (next.finished) continue; // cancelled while queued
      this.running.add(next);
      next.launch(this.launcher);
    }
  }

  private onSlotFree(s: BuildSession): void {
    const i = this.queue.indexOf(s);
    if (i >= 0) this.queue.splice(i, 1);
    if (this.running.delete(s)) this.pump();
    // Called once per build, after its worker is gone: nothing of the session is needed any more
    // but its record and (for replay) its details, which are kept for the most recent few only.
    if (s.finished) this.retainDetails(s);
  }

  private retainDetails(s: BuildSession | WatchedSession): void {
    this.finishedDetailed.push(s);
    while (this.finishedDetailed.length > this.retainFinishedBuilds) {
      const old = this.finishedDetailed.shift()!;
      // Subscribers still replaying hold their own copy; dropping our reference frees the rest.
      if (this.sessions.get(old.id) === old) this.sessions.set(old.id, new BuildSummary(old.record(), old.engineRecord()));
    }
  }

  /** True when the build finished long enough ago that only its summary is kept. */
  detailsEvicted(id: string): boolean {
    return this.sessions.get(id) instanceof BuildSummary;
  }

  getBuild(id: string): BuildRecord | undefined {
    return this.sessions.get(id)?.record();
  }

  listBuilds(): BuildRecord[] {
    return [...this.sessions.values()].map((s) => s.record());
  }

  cancelBuild(id: string, reason: CancelReason = 'user'): boolean {
    const s = this.sessions.get(id);
    return s instanceof BuildSession || s instanceof WatchedSession ? s.cancel(reason) : false;
  }

  subscribe(id: string, onEvents: (events: BuildEvent[]) => unknown, opts: SubscribeOpts = {}): Subscription {
    const s = this.sessions.get(id);
    if (!s) throw new ServiceError('not_found', `unknown build ${id}`);
    // Evicted: the summary is the whole answer (it carries the outcome); nothing is replayed, and
    // a resume is told to start over from the outcome-only view.
    if (s instanceof BuildSummary) {
      const view = s.view();
      return { snapshot: s.record(), view, reset: opts.afterSeq !== undefined && opts.afterSeq < view.seq, unsubscribe: () => {} };
    }
    const { afterSeq, ...rest } = opts;
    return s.subscribe(onEvents, afterSeq, rest);
  }

  getView(id: string): BuildViewSnapshot | undefined {
    return this.sessions.get(id)?.view();
  }

  waitForResult(id: string): Promise<BuildFinished> {
    const s = this.sessions.get(id);
    if (!s) return Promise.reject(new ServiceError('not_found', `unknown build ${id}`));
    return s instanceof BuildSummary ? Promise.resolve(s.outcome) : s.waitForResult();
  }

  enginePath(id: string): string | undefined {
    return this.sessions.get(id)?.enginePath();
  }

  engineRecord(id: string): EngineRecord | undefined {
    return this.sessions.get(id)?.engineRecord();
  }

  listEngines(): EngineFile[] {
    const writers = new Map<string, { id: string; engine: EngineRecord | undefined }>();
    // Oldest first, so the latest build to write a path names it.
    for (const s of this.sessions.values()) {
      const r = s.record();
      if (r.state === 'succeeded' && r.outputPath) writers.set(r.outputPath, { id: r.id, engine: s.engineRecord() });
    }
    // A file is the build's only while it is the file the build wrote.
    return listEngineFiles(this.outputDir, (f, st) => {
      const w = writers.get(f);
      return w && isRecordedEngine(st, w.engine) ? w.id : undefined;
    });
  }

  engineFolder(): string {
    return this.outputDir;
  }

  deleteEngines(names: string[]): DeleteEnginesResult {
    return deleteEngineFiles(this.outputDir, names, (f) => this.outputTaken(f));
  }

  async shutdown(): Promise<void> {
    this.closing = true;
    for (const s of this.queue.splice(0)) s.cancel('shutdown');
    const all = [...this.sessions.values()].filter((s): s is BuildSession => s instanceof BuildSession);
    for (const s of all) if (!s.finished) s.cancel('shutdown');
    // Each running session kills its worker after cancelKillMs at the latest.
    await Promise.all([...all.map((s) => s.waitForExit()), ...this.helperExits]);
  }
}

/** A display name as given, checked: one file name, no control or bidi characters. */
function displayName(name: unknown): string | undefined {
  if (name === undefined) return undefined;
  if (typeof name !== 'string' || name === '' || name.length > 255 || /[\\/\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(name)) {
    throw new ServiceError('bad_input', 'modelDisplayName must be a file name (no path, no control characters, at most 255 characters)');
  }
  return name;
}

export function createBuildService(opts?: BuildServiceOptions): BuildService {
  return new BuildService(opts);
}
