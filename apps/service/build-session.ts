// One build as the service sees it: its record and state machine, joined to its worker process
// (worker-run.ts: launch, release, kill) and its state and delivery (build-feed.ts: the build
// view, the events kept for replay, the subscribers). The worker is trusted for nothing: its
// messages are validated, and if it dies without a result the session writes the ending itself
// (status "crashed", with where it crashed when the crash record says) and removes anything
// half-written.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stateOf, type BuildViewSnapshot } from '../shared/build-view.js';
import { PROTOCOL_VERSION, type BuildEvent, type BuildFinished, type BuildRecord, type BuildState, type BuildStatus, type CancelReason } from '../shared/protocol.js';
import type { Subscription } from './api.js';
import { BuildFeed, type FeedSubscribeOptions } from './build-feed.js';
import type { BuildEstimator } from './build-estimator.js';
import type { ValidatedBuild } from './build-validation.js';
import { mergeMemory } from '../shared/memory-track.js';
import { isOutOfMemoryLine, memoryStopMessage, oomKillMessage, plainOutOfMemoryError } from '../shared/memory-text.js';
import type { MemoryStop, OomKill } from '../shared/protocol.js';
import { autoHostLimit, availableHostMemory, cgroupDirOf, readCgroupMemory, type CgroupMemory } from './cgroup-memory.js';
import { estimateHostMemory } from './memory-estimate.js';
import { formatCrashSite, readCrashSite, removeCrashRecord } from './crash-site.js';
import {
  makeManifest,
  modelDigest,
  pluginLibraries,
  readBuildLayerFacts,
  readManifest,
  removeManifest,
  sha256FileSync,
  writeLayerInfo,
  writeManifest,
} from './engine-manifest-file.js';
import type { EngineReuseStore } from './engine-reuse-store.js';
import { storeBuiltEngine, type ReusedEngine } from './engine-reuse.js';
import { describeExit } from './exit-status.js';
import { ensurePrivateDir } from './private-dir.js';
import { claimDir, claimOutput, describeHolder, realOr, type OutputClaim } from './output-claim.js';
import { recordEngine, recordedEnginePath, type EngineRecord } from './engine-identity.js';
import { removeOwnFiles, tempPrefix } from './temp-files.js';
import { WorkerRun, type WorkerExit } from './worker-run.js';
import type { WorkerLauncher } from './worker-host.js';

export { MAX_SUBSCRIBER_BACKLOG } from './build-feed.js';

export type SubscribeOptions = Omit<FeedSubscribeOptions, 'afterSeq'>;

export interface SessionOptions {
  cancelKillMs: number;
  retainEvents: number;
  /** Folder for this build's crash record (created on launch). */
  crashDir: string;
  /** Heartbeat cadence asked of the worker (default: the native layer's, 1 s). */
  heartbeatMs?: number;
  /** Predicts the end from earlier builds of the same kind; absent: no predictions. */
  estimator?: BuildEstimator;
  /** Called once, when the worker process is gone (or the build ended without one). */
  onSlotFree: (s: BuildSession) => void;
  /** Problems worth a line in the server log that do not change the build (a profile not saved). */
  onWarning?: (message: string) => void;
  /**
   * After a build passes its memory limit and is asked to stop, how long it has to reach a step
   * before the worker is ended (default MEMORY_GRACE_MS).
   */
  memoryGraceMs?: number;
  /** A `reuse` build keeps its engine here once built (engine-reuse.ts). */
  reuseStore?: EngineReuseStore;
  /** Where claims on output files across processes are kept (output-claim.ts; default: the state folder's). */
  claimDir?: string;
}

/** Default grace period of a memory stop (issue 21): a step within it, or the worker is ended. */
export const MEMORY_GRACE_MS = 10_000;

/** The regular file at `p` itself (a link is not followed): device and inode; undefined for anything else. */
function regularFileId(p: string): string | undefined {
  try {
    const st = fs.lstatSync(p);
    return st.isFile() ? `${st.dev}:${st.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Output files claimed by a build of this process that has not ended (the target, a link
 * resolved): a second build naming the same file is refused, so that the one that ends later can
 * never clean up over the other's engine.
 */
const claimedOutputs = new Map<string, string>();

export class BuildSession {
  private readonly queuedAt = new Date().toISOString();
  private startedAt?: string;
  private finishedAt?: string;
  /**
   * A stop was asked for and sent to the worker: the record says cancelling before the worker's
   * build.cancelling arrives. Everything else about the build's state comes from its view.
   */
  private stopRequested = false;
  private readonly feed: BuildFeed;
  private readonly run: WorkerRun;
  private readonly waiters: Array<(f: BuildFinished) => void> = [];
  private launchedAtMs = 0;
  /**
   * The file the build writes (the output path, a link resolved at launch) and the identity of a
   * regular file already there then, which a failure must not delete.
   */
  private outputTarget?: string;
  private preexistingOutput?: string;
  /** This session holds claimedOutputs[outputTarget]. */
  private claimsOutput = false;
  /** The claim on outputTarget that builds of other processes see (output-claim.ts). */
  private outputClaim?: OutputClaim;
  /**
   * Device:inode of the temp files this build's worker was seen creating beside the output
   * (`<target>.tmp-<pid>-<n>`, watched while it runs): the rename keeps the inode, so a file at
   * the output path with one of these is the one the worker wrote, whatever happened to it since.
   */
  private readonly tempFileIds = new Set<string>();
  private tempWatch?: fs.FSWatcher;
  private crashRecord?: string;
  /** The memory limits this build runs under, bytes (maxHostMemory "auto" resolved at launch). */
  private limits: { host?: number; gpu?: number } = {};
  /** Set when a limit was passed and the build asked to stop. */
  private memoryStop?: MemoryStop;
  /** The worker's cgroup and its OOM-kill counter at launch, to tell an OOM kill from another SIGKILL. */
  private cgroupAtLaunch?: { where: ReturnType<typeof cgroupDirOf>; before: CgroupMemory };
  /** The first log line that said memory ran out (an allocation failure TensorRT words otherwise). */
  private oomLogLine?: string;
  /** The timing cache's sha256 at launch (for the manifest); null: no cache file then. */
  private cacheSha256Before: string | null = null;
  /**
   * The model's digest, read once when the build starts (by descriptor, a regular file only): the
   * manifest uses it, so the model is never reopened by path at the end of a long build.
   */
  private modelAtLaunch?: Promise<{ sha256: string; bytes: number }>;
  private pluginsAtLaunch?: ReturnType<typeof pluginLibraries>;
  /**
   * Set while a succeeded build's manifest is written: the build.finished waits for it, so that
   * whoever sees "succeeded" finds the manifest beside the engine (engine-manifest-file.ts).
   */
  private finishing?: Promise<void>;
  /** The engine file as it was when the build finished (succeeded builds). */
  private engine?: EngineRecord;

  constructor(
    readonly id: string,
    readonly build: ValidatedBuild,
    private readonly opts: SessionOptions,
  ) {
    this.feed = new BuildFeed(id, opts.retainEvents);
    this.run = new WorkerRun(
      { cancelKillMs: opts.cancelKillMs, budgetMs: build.timeBudgetSeconds ? build.timeBudgetSeconds * 1000 : undefined },
      {
        onEvents: (events) => this.ingest(events),
        onResult: (finished) => {
          // The stream normally ends with build.finished already; this covers a lost last batch.
          if (!this.finished && !this.finishing) this.ingest([{ ...finished, seq: Math.max(finished.seq, this.feed.lastSeq + 1 - this.seqShift) }]);
        },
        onError: (message) => {
          if (!this.finished && !this.finishing) this.finishLocally('failed', message);
        },
        onExit: (exit) => {
          const gone = () => {
            this.onWorkerExit(exit);
            this.opts.onSlotFree(this);
          };
          // A worker that exits while the manifest is written has done its part: wait for the end.
          if (this.finishing) void this.finishing.then(gone);
          else gone();
        },
      },
    );
  }

  // State, backend version and outcome are the build view's (the feed's: build-feed.ts), so the
  // record and every surface that follows the build tell the same story.
  private get state(): BuildState {
    return stateOf(this.feed.view, { launched: this.startedAt !== undefined, stopRequested: this.stopRequested });
  }

  private get outcome(): BuildFinished | undefined {
    return this.feed.view.outcome;
  }

  get finished(): boolean {
    return this.outcome !== undefined;
  }

  get isRunning(): boolean {
    return this.run.alive;
  }

  record(): BuildRecord {
    const b = this.build;
    return {
      id: this.id,
      state: this.state,
      modelPath: b.modelPath,
      outputPath: b.outputPath,
      options: b.options,
      queuedAt: this.queuedAt,
      startedAt: this.startedAt,
      finishedAt: this.finishedAt,
      backend: b.backend,
      backendVersion: this.feed.view.started?.backendVersion ?? b.backendInfo.version,
      simulated: b.backend === 'simulated',
      model: b.summary,
      outcome: this.outcome,
      cache: this.feed.view.cache,
      lastSeq: this.feed.lastSeq,
      engineAvailable: this.enginePath() !== undefined,
    };
  }

  /** The build view's complete snapshot: what every surface shows, as of record().lastSeq. */
  view(): BuildViewSnapshot {
    return this.feed.snapshot();
  }

  /** The engine's path while the file there is still the one the build wrote. */
  enginePath(): string | undefined {
    if (this.outcome?.status !== 'succeeded') return undefined;
    return recordedEnginePath(this.build.outputPath, this.engine);
  }

  /** The engine file as the build left it (succeeded builds only). */
  engineRecord(): EngineRecord | undefined {
    return this.engine;
  }

  waitForResult(): Promise<BuildFinished> {
    if (this.outcome) return Promise.resolve(this.outcome);
    return new Promise((r) => this.waiters.push(r));
  }

  /** Resolves when the worker process has exited (immediately if there never was one). */
  waitForExit(): Promise<void> {
    return this.run.whenExited();
  }

  /**
   * The record and view now, then live events; with `afterSeq`, the kept events after it first,
   * or a reset (see build-feed.ts) when they are no longer all kept. A callback that returns a
   * promise gets nothing more until it settles; a subscriber whose backlog passes `maxBacklog`
   * is dropped (onOverflow).
   */
  subscribe(cb: (events: BuildEvent[]) => unknown, afterSeq?: number, opts: SubscribeOptions = {}): Subscription {
    const snapshot = this.record();
    const sub = this.feed.subscribe(cb, { ...opts, afterSeq });
    return { snapshot, view: sub.view, reset: sub.reset, unsubscribe: sub.unsubscribe };
  }

  /** Starts the worker. */
  launch(launcher: WorkerLauncher): void {
    this.startedAt = new Date().toISOString();
    this.launchedAtMs = Date.now();
    this.outputTarget = realOr(this.build.outputPath);
    this.preexistingOutput = regularFileId(this.outputTarget);
    const b = this.build;
    const holder = claimedOutputs.get(this.outputTarget);
    if (holder !== undefined && holder !== this.id) {
      this.finishLocally(
        'failed',
        `another build (${holder}) is writing ${this.outputTarget}: two builds may not write one engine at the same time; wait for it to end or choose another output`,
      );
      return;
    }
    // The same refusal between processes (a CLI build and a serve, two CLIs): the claim is held
    // until the build ends, and one whose process and worker are gone is stale (output-claim.ts).
    try {
      const r = claimOutput(this.outputTarget, this.id, this.opts.claimDir ?? claimDir(), (m) => this.opts.onWarning?.(`build ${this.id}: ${m}`));
      if (!r.ok) {
        this.finishLocally(
          'failed',
          `another build (${describeHolder(r.holder)}) is writing ${this.outputTarget}: two builds may not write one engine at the same time; wait for it to end or choose another output`,
        );
        return;
      }
      this.outputClaim = r.claim;
    } catch (e) {
      // No usable state folder: the build runs, refused only by builds of this process.
      this.opts.onWarning?.(
        `build ${this.id}: ${this.outputTarget} could not be claimed against builds of other processes (${(e as Error).message}); a build of another process naming it is not kept out`,
      );
    }
    claimedOutputs.set(this.outputTarget, this.id);
    this.claimsOutput = true;
    this.modelAtLaunch = modelDigest(b.modelPath, b.summary.externalData.files);
    this.modelAtLaunch.catch(() => undefined); // a failure is reported by the manifest, if one is written
    this.pluginsAtLaunch = pluginLibraries(b.options);
    this.pluginsAtLaunch.catch(() => undefined);
    const cacheFile = b.options.timingCache ?? b.options.pinnedCache;
    if (cacheFile) {
      try {
        this.cacheSha256Before = sha256FileSync(cacheFile);
      } catch {
        this.cacheSha256Before = null; // unreadable: the build reports why; the manifest says none
      }
    }
    try {
      // Private: the service reads crash records back, so nobody else may plant one.
      ensurePrivateDir(this.opts.crashDir, 'crash record');
      this.crashRecord = path.join(this.opts.crashDir, `${this.id}-${crypto.randomBytes(4).toString('hex')}.phases`);
    } catch {
      // Without a place for the record a crash is still reported, only without its site.
      this.crashRecord = undefined;
    }
    this.resolveLimits();
    try {
      this.run.launch(launcher, {
        buildId: this.id,
        backend: b.backend,
        modelPath: b.modelPath,
        outputPath: b.outputPath,
        options: b.options,
        layers: b.layers,
        model: b.summary,
        ...(this.opts.heartbeatMs ? { heartbeatMs: this.opts.heartbeatMs } : {}),
        ...(this.crashRecord ? { crashRecordPath: this.crashRecord } : {}),
      });
      // The watch before the claim names the worker: once it does, a temp file of that worker may
      // appear at any moment, and one created before the watch began would be missed for good
      // (the claim would say "watched, none seen", and a taker would leave the file).
      this.watchTempFiles();
      if (this.run.pid !== undefined) this.outputClaim?.setWorker(this.run.pid);
      this.readCgroupAtLaunch();
    } catch (e) {
      // No worker: finishLocally frees the slot itself.
      this.finishLocally('failed', `could not start a build worker: ${(e as Error).message}`);
    }
  }

  /**
   * Ends a `reuse` build without a worker: the stored engine is already at the output path with
   * its manifest (engine-reuse.ts). The stream says what happened: build.started, a log line
   * naming the build that made the bytes, and build.finished with `reused`.
   */
  finishReused(r: ReusedEngine): void {
    const b = this.build;
    this.startedAt = new Date().toISOString();
    const m = r.manifest;
    const base = { v: PROTOCOL_VERSION, buildId: this.id, t: 0 } as const;
    const events: BuildEvent[] = [
      {
        ...base,
        seq: 0,
        type: 'build.started',
        backend: b.backend,
        backendVersion: m.tensorrt.simulator ?? m.tensorrt.version,
        simulated: b.backend === 'simulated',
        gpu: m.gpu.name,
        ...(m.gpu.computeCapability ? { computeCapability: m.gpu.computeCapability } : {}),
        model: b.summary,
        options: b.options,
        outputPath: b.outputPath,
      },
      { ...base, seq: 1, type: 'log', severity: 'info', message: `Reused the engine build ${r.fromBuildId} made (reuse key ${r.key.slice(0, 16)}…): nothing was built` },
    ];
    const finished: BuildFinished = {
      ...base,
      seq: 2,
      type: 'build.finished',
      status: 'succeeded',
      durationMs: 0,
      engineBytes: m.engine.bytes,
      outputPath: b.outputPath,
      manifestPath: r.manifestPath,
      reused: { fromBuildId: r.fromBuildId, key: r.key },
    };
    events.push(finished);
    this.feed.push(events);
    this.settle(finished);
    this.opts.onSlotFree(this);
  }

  /**
   * First call: ask the worker to stop at the next step. A second call, or no result within
   * cancelKillMs, kills the worker (worker-run.ts). Returns false when there is nothing to cancel.
   */
  cancel(reason: CancelReason = 'user'): boolean {
    // Once the engine is in place and its manifest is being written there is nothing to stop.
    if (this.finished || this.finishing) return false;
    if (!this.run.launched) {
      // Still queued: nothing runs, so it ends right here.
      this.finishLocally('cancelled', undefined, reason);
      return true;
    }
    if (this.run.cancel(reason) === 1) this.stopRequested = true;
    return true;
  }

  private onWorkerExit(exit: WorkerExit): void {
    if (this.finished) {
      if (this.crashRecord) removeCrashRecord(this.crashRecord);
      return;
    }
    if (exit.killedAfterCancel) {
      if (this.crashRecord) removeCrashRecord(this.crashRecord);
      const killed = `the worker was killed ${exit.sinceCancelMs ?? 0} ms after cancel (${exit.killedAfterCancel})`;
      this.finishLocally('cancelled', this.memoryStop ? `${memoryStopMessage(this.memoryStop)}; ${killed}` : killed);
      return;
    }
    const how = describeExit(exit);
    const site = this.crashRecord ? readCrashSite(this.crashRecord) : undefined;
    // The record belongs to this one build: gone once read.
    if (this.crashRecord) removeCrashRecord(this.crashRecord);
    const oom = exit.signal === 'SIGKILL' ? this.oomKilled(site) : undefined;
    if (oom) {
      this.finishLocally('crashed', oomKillMessage(oom), undefined, site?.length ? site : undefined, oom);
      return;
    }
    const where = site && site.length > 0 ? `crashed in ${formatCrashSite(site)}: it ` : '';
    const lastLine = exit.stderrTail ? `; last output: ${exit.stderrTail.split('\n').slice(-3).join(' | ')}` : '';
    this.finishLocally('crashed', `the build worker ${where}exited without a result (${how})${lastLine}`, undefined, site?.length ? site : undefined);
  }

  /** Seqs taken by the service's own warnings (withWarnings): the worker's later events move up by as many. */
  private seqShift = 0;
  private warningsSent = false;

  /**
   * The build's warnings from before it started (ValidatedBuild.warnings: nodes reordered, local
   * functions expanded, default shapes used) as `log` warnings right after build.started, where
   * every surface shows the worker's own warnings; the worker's seqs after them shifted to make room.
   */
  private withWarnings(events: BuildEvent[]): BuildEvent[] {
    const warnings = this.build.warnings;
    if (!warnings?.length) return events;
    const out: BuildEvent[] = [];
    for (const ev of events) {
      out.push(this.seqShift ? { ...ev, seq: ev.seq + this.seqShift } : ev);
      if (this.warningsSent || ev.type !== 'build.started') continue;
      this.warningsSent = true;
      const at = ev.seq;
      for (const message of warnings) {
        this.seqShift++;
        out.push({ v: PROTOCOL_VERSION, buildId: this.id, t: ev.t, seq: at + this.seqShift, type: 'log', severity: 'warning', message });
      }
    }
    return out;
  }

  /** Events from the worker, in seq order; stale, foreign or post-final events are dropped. */
  private ingest(events: BuildEvent[]): void | Promise<void> {
    const est = this.opts.estimator;
    const mine: BuildEvent[] = [];
    for (const ev of this.withWarnings(events)) {
      if (this.finished || this.finishing || ev.seq <= this.feed.lastSeq || ev.buildId !== this.id) continue;
      const annotated = est ? est.annotate(ev, () => this.feed.view.fraction()) : ev;
      mine.push(annotated.type === 'build.started' ? this.withMemoryEstimate(annotated) : annotated);
    }
    const end = mine.findIndex((ev) => ev.type === 'build.finished');
    if (end < 0) {
      this.apply(mine);
      // The worker sends its next batch once the subscribers that pace the build have room.
      return this.feed.pacingReady();
    }
    // build.finished carries the memory peaks per phase, which the view has once every event
    // before it is in: those go first, then the ending with the view's figures merged in.
    this.apply(mine.slice(0, end));
    const finished = this.ending(mine[end] as BuildFinished);
    if (finished.status === 'succeeded') {
      // The manifest is written before build.finished goes out naming it (withManifest).
      this.finishing = this.withManifest(finished).then((f) => this.apply([f]));
      return;
    }
    this.apply([finished]);
    return this.feed.pacingReady();
  }

  /**
   * The engine is in place (the native layer renamed it): hash it and write its manifest, then
   * let build.finished go out naming it. A manifest that cannot be written does not undo the
   * build; build.finished says why, and the engine stays "unknown" to check.
   */
  private async withManifest(finished: BuildFinished): Promise<BuildFinished> {
    try {
      // Order: the engine (renamed by the native layer), its layer information, then the manifest
      // naming both by sha256.
      const layerInfo = await writeLayerInfo(this.build);
      const manifest = await makeManifest({
        buildId: this.id,
        build: this.build,
        view: this.feed.view,
        finished,
        cacheSha256Before: this.cacheSha256Before,
        layerInfo,
        modelAtLaunch: this.modelAtLaunch,
        pluginsAtLaunch: this.pluginsAtLaunch,
      });
      if (process.env.TBS_TEST_EXIT_BEFORE_MANIFEST === '1') {
        // Tests only: the process dies between the engine's rename and the manifest's.
        process.kill(process.pid, 'SIGKILL');
      }
      const manifestPath = await writeManifest(this.build.outputPath, manifest);
      if (this.opts.reuseStore) {
        try {
          await storeBuiltEngine(this.opts.reuseStore, this.build.outputPath, manifest, this.build.options.storeLimitMiB);
        } catch (e) {
          this.opts.onWarning?.(`build ${this.id}: the engine was not kept in the engine store: ${(e as Error).message}`);
        }
      }
      // The precision check (issue 36): read back from the file just written, so it is what `layers` says.
      const layers = layerInfo ? readBuildLayerFacts(this.build) : undefined;
      return { ...finished, manifestPath, ...(layers ? { layers } : {}) };
    } catch (e) {
      return { ...finished, manifestError: `the engine's manifest was not written: ${(e as Error).message}` };
    }
  }

  private apply(mine: BuildEvent[]): void {
    const fresh = this.feed.push(mine);
    for (const ev of fresh) {
      switch (ev.type) {
        case 'heartbeat':
          // The GPU limit is this build's own memory: a device delta counts other processes' too.
          this.checkMemoryLimits(ev.hostMemoryBytes, ev.gpuMemorySource === 'device-delta' ? undefined : ev.gpuMemoryBytes);
          break;
        case 'log':
          if (!this.oomLogLine && ev.severity !== 'verbose' && ev.severity !== 'info' && isOutOfMemoryLine(ev.message)) this.oomLogLine = ev.message;
          break;
        case 'build.finished':
          // The worker said how it ended: the native layer removed its own temp file already,
          // and nothing of it reached the output path.
          if (ev.status !== 'succeeded') this.removePartialOutput(false);
          this.settle(ev);
          break;
      }
    }
  }

  /** `f` with the build's memory (the view's per-phase peaks, raised by what the worker measured). */
  private withMemory(f: BuildFinished): BuildFinished {
    const memory = mergeMemory(this.feed.view.memorySummary(), f.memory);
    return memory ? { ...f, memory } : f;
  }

  /**
   * The worker's build.finished as every surface gets it: with its memory, the memory stop's
   * sentence when a limit stopped it, and an allocation failure said plainly.
   */
  private ending(f: BuildFinished): BuildFinished {
    let out = this.withMemory(f);
    if (out.status === 'cancelled' && this.memoryStop) out = { ...out, error: memoryStopMessage(this.memoryStop), memoryStop: this.memoryStop };
    if (out.status === 'failed' && this.oomLogLine) out = { ...out, error: plainOutOfMemoryError(out.error, this.oomLogLine) };
    return out;
  }

  /** build.started with how much host memory the build is expected to need (memory-estimate.ts). */
  private withMemoryEstimate(ev: Extract<BuildEvent, { type: 'build.started' }>): BuildEvent {
    if (ev.memoryEstimate) return ev;
    const b = this.build;
    const memoryEstimate = estimateHostMemory({
      backend: b.backend,
      options: b.options,
      model: b.summary,
      profiles: this.opts.estimator?.profiles ?? [],
      availableBytes: availableHostMemory()?.bytes,
    });
    if (memoryEstimate?.warning) this.opts.onWarning?.(`build ${this.id}: ${memoryEstimate.warning}`);
    return memoryEstimate ? { ...ev, memoryEstimate } : ev;
  }

  /** maxHostMemory / maxGpuMemory in bytes; "auto" is read now, when the worker starts. */
  private resolveLimits(): void {
    const o = this.build.options;
    let host: number | undefined;
    if (o.maxHostMemory === 'auto') {
      const auto = autoHostLimit();
      if (auto) host = auto.bytes;
      else this.opts.onWarning?.('maxHostMemory "auto": neither a cgroup limit nor MemAvailable could be read; no host memory limit');
    } else host = o.maxHostMemory;
    this.limits = { host, gpu: o.maxGpuMemory };
  }

  /** A heartbeat's memory against the limits: the first one passed asks the build to stop. */
  private checkMemoryLimits(host: number | undefined, gpu: number | undefined): void {
    if (this.memoryStop || this.finished) return;
    const passed =
      host !== undefined && this.limits.host !== undefined && host > this.limits.host
        ? { kind: 'host' as const, usedBytes: host, limitBytes: this.limits.host }
        : gpu !== undefined && this.limits.gpu !== undefined && gpu > this.limits.gpu
          ? { kind: 'gpu' as const, usedBytes: gpu, limitBytes: this.limits.gpu }
          : undefined;
    if (!passed) return;
    // A Stop already under way keeps its own reason; the limit is still named at the end.
    this.memoryStop = { ...passed, phasePath: this.feed.view.currentPath().map((l) => l.name) };
    if (this.run.cancel('memory', this.opts.memoryGraceMs ?? MEMORY_GRACE_MS) === 1) this.stopRequested = true;
  }

  private readCgroupAtLaunch(): void {
    const pid = this.run.pid;
    if (pid === undefined) return;
    const where = cgroupDirOf(pid);
    this.cgroupAtLaunch = { where, before: readCgroupMemory(where) };
  }

  /** After a SIGKILL nobody here sent: did the out-of-memory killer do it (its counter rose)? */
  private oomKilled(site: string[] | undefined): OomKill | undefined {
    const at = this.cgroupAtLaunch;
    if (!at || at.before.oomKills === undefined) return undefined;
    const after = readCgroupMemory(at.where);
    if (after.oomKills === undefined || after.oomKills <= at.before.oomKills) return undefined;
    // The heartbeats' peak, or the cgroup's own when it is higher (a worker killed before its
    // first heartbeat has no sample at all).
    const sampled = this.feed.view.memorySummary()?.peakHostBytes;
    const peak = sampled === undefined ? after.peakBytes : Math.max(sampled, after.peakBytes ?? 0);
    return {
      ...(after.limitBytes !== undefined ? { limitBytes: after.limitBytes } : {}),
      ...(peak !== undefined ? { peakHostBytes: peak } : {}),
      ...(site && site.length > 0 ? { phasePath: site } : {}),
    };
  }

  private finishLocally(status: BuildStatus, error?: string, reason?: CancelReason, lastPhasePath?: string[], oomKill?: OomKill): void {
    if (this.finished) return;
    const t = this.launchedAtMs ? Date.now() - this.launchedAtMs : 0;
    const base = { v: PROTOCOL_VERSION, buildId: this.id };
    // On the build clock, never before the newest event: elapsed must not go backwards at the end.
    const endT = Math.max(t, this.feed.view.lastT);
    let seq = this.feed.lastSeq;
    const events: BuildEvent[] = [];
    if (status === 'cancelled' && reason && this.state === 'queued') {
      events.push({ ...base, t: endT, seq: ++seq, type: 'build.cancelling', requestedAt: endT, reason });
    }
    if (status !== 'succeeded') this.removePartialOutput(true);
    const requestedAt = this.run.cancelRequestedAt;
    const finished: BuildFinished = this.withMemory({
      ...base,
      t: endT,
      seq: seq + 1,
      type: 'build.finished',
      status,
      durationMs: endT,
      ...(requestedAt !== undefined ? { stopToFinishMs: Date.now() - requestedAt } : {}),
      ...(error ? { error } : {}),
      ...(lastPhasePath ? { lastPhasePath } : {}),
      ...(oomKill ? { oomKill } : {}),
      ...(status === 'cancelled' && this.memoryStop ? { memoryStop: this.memoryStop } : {}),
    });
    events.push(finished);
    this.feed.push(events);
    this.settle(finished);
    if (!this.run.launched) this.opts.onSlotFree(this);
  }

  private releaseOutput(): void {
    if (this.claimsOutput && this.outputTarget !== undefined && claimedOutputs.get(this.outputTarget) === this.id) claimedOutputs.delete(this.outputTarget);
    this.claimsOutput = false;
    this.outputClaim?.release();
    this.outputClaim = undefined;
  }

  /**
   * Records the identity of each temp file the worker creates beside the output (tempFileIds), in
   * the output's claim too: if this process and the worker are killed, the build that takes the
   * claim over removes those very files (output-claim.ts).
   */
  private watchTempFiles(): void {
    const pid = this.run.pid;
    const target = this.outputTarget;
    if (pid === undefined || target === undefined) return;
    const dir = path.dirname(target);
    const prefix = tempPrefix(path.basename(target), pid);
    try {
      this.tempWatch = fs.watch(dir, { persistent: false }, (_event, name) => {
        if (typeof name === 'string' && name.startsWith(prefix)) this.recordTempFile(path.join(dir, name));
      });
      this.tempWatch.on('error', () => {
        this.stopWatchingTempFiles();
        // What is recorded so far may not be all: a taker goes by the files' names instead.
        this.outputClaim?.watchTemps(false);
      });
      this.outputClaim?.watchTemps(true);
    } catch {
      // No watch (inotify limits): a worker that dies leaves whatever is at the output path alone,
      // and a taker of the claim knows its temp files by their names alone.
      return;
    }
    // The worker runs from its spawn on, and the watch reports only what changes after it began:
    // a temp file created before it (a fast worker, a busy machine) is found by name once.
    try {
      for (const name of fs.readdirSync(dir)) if (name.startsWith(prefix)) this.recordTempFile(path.join(dir, name));
    } catch {
      // The folder is gone or unreadable: the watch's error (or the build's own) says so.
    }
  }

  /** The temp file at `p`, if it is a regular file, recorded here and in the output's claim. */
  private recordTempFile(p: string): void {
    const id = regularFileId(p);
    if (id === undefined || this.tempFileIds.has(id)) return;
    this.tempFileIds.add(id);
    this.outputClaim?.addTemp(id);
  }

  private stopWatchingTempFiles(): void {
    this.tempWatch?.close();
    this.tempWatch = undefined;
  }

  private settle(f: BuildFinished): void {
    this.stopWatchingTempFiles();
    this.releaseOutput();
    // What the build wrote, recorded now: the engine is served and listed only while it is still that file.
    if (f.status === 'succeeded') this.engine = recordEngine(this.build.outputPath, f.engineBytes);
    this.finishedAt = new Date().toISOString();
    this.run.settled();
    const err = this.opts.estimator?.finished(f);
    if (err) this.opts.onWarning?.(`could not keep this build's profile for predictions: ${err.message}`);
    for (const w of this.waiters.splice(0)) w(f);
  }

  /**
   * A build that did not succeed leaves nothing of its own behind, and touches nothing else. The
   * native layer writes temp + rename and cleans up on cancel/failure, but a killed or crashed
   * worker cannot: its temp files (`<target>.tmp-<worker pid>-<n>`, created O_EXCL by that
   * worker) are removed here when they are still regular files of this user. The output path
   * itself is only touched after a worker died (`workerDied`), and only when the file there is the
   * very one the worker created (its inode is one of the temp files seen, tempFileIds), is not the
   * one there at launch, and has no manifest of another build beside it: a symlink's target, a
   * FIFO, a folder, another build's engine stay. Every failure here is a warning on this build,
   * never an exception (the output path may have become anything).
   */
  private removePartialOutput(workerDied: boolean): void {
    const pid = this.run.pid;
    const target = this.outputTarget;
    if (pid === undefined || target === undefined) return;
    const warn = (what: string, e: unknown) => this.opts.onWarning?.(`build ${this.id}: could not remove ${what}: ${(e as Error).message}`);
    const cache = this.build.options.timingCache;
    for (const t of [target, ...(cache ? [realOr(cache)] : [])]) {
      const prefix = tempPrefix(path.basename(t), pid);
      removeOwnFiles(path.dirname(t), (f) => f.startsWith(prefix), warn);
    }
    if (!workerDied) return;
    const now = regularFileId(target);
    if (now === undefined || now === this.preexistingOutput || !this.tempFileIds.has(now)) return;
    const other = readManifest(this.build.outputPath);
    if (other.ok && other.manifest.buildId !== this.id) return;
    try {
      fs.unlinkSync(target);
    } catch (e) {
      warn(target, e);
      return;
    }
    try {
      // Removed together: a manifest beside it no longer describes anything there.
      removeManifest(this.build.outputPath);
    } catch (e) {
      warn(`the manifest beside ${this.build.outputPath}`, e);
    }
  }
}
