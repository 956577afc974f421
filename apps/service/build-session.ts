// One build as the service sees it: its record and state machine, joined to its worker process
// (worker-run.ts: launch, release, kill) and its state and delivery (build-feed.ts: the build
// view, the events kept for replay, the subscribers). The worker is trusted for nothing: its
// messages are validated, and if it dies without a result the session writes the ending itself
// (status "crashed", with where it crashed when the crash record says) and removes anything
// half-written.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildViewSnapshot } from '../shared/build-view.js';
import {
  PROTOCOL_VERSION,
  type BuildEvent,
  type BuildFinished,
  type BuildRecord,
  type BuildState,
  type BuildStatus,
  type CancelReason,
} from '../shared/protocol.js';
import type { Subscription } from './api.js';
import { BuildFeed, type FeedSubscribeOptions } from './build-feed.js';
import type { BuildEstimator } from './build-estimator.js';
import type { ValidatedBuild } from './build-validation.js';
import { formatCrashSite, readCrashSite, removeCrashRecord } from './crash-site.js';
import { describeExit } from './exit-status.js';
import { ensurePrivateDir } from './private-dir.js';
import { recordEngine, recordedEnginePath, type EngineRecord } from './engine-identity.js';
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
}

function fileId(p: string): string | undefined {
  try {
    const st = fs.statSync(p);
    return `${st.ino}:${st.mtimeMs}:${st.size}`;
  } catch {
    return undefined;
  }
}

export class BuildSession {
  private state: BuildState = 'queued';
  private readonly queuedAt = new Date().toISOString();
  private startedAt?: string;
  private finishedAt?: string;
  private backendVersion?: string;
  private outcome?: BuildFinished;
  private readonly feed: BuildFeed;
  private readonly run: WorkerRun;
  private readonly waiters: Array<(f: BuildFinished) => void> = [];
  private launchedAtMs = 0;
  /** Identity of a file already at the output path before the build, which a failure must not delete. */
  private preexistingOutput?: string;
  private crashRecord?: string;
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
          if (!this.finished) this.ingest([{ ...finished, seq: Math.max(finished.seq, this.feed.lastSeq + 1) }]);
        },
        onError: (message) => {
          if (!this.finished) this.finishLocally('failed', message);
        },
        onExit: (exit) => {
          this.onWorkerExit(exit);
          this.opts.onSlotFree(this);
        },
      },
    );
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
      backendVersion: this.backendVersion ?? b.backendInfo.version,
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
    this.state = 'running';
    this.startedAt = new Date().toISOString();
    this.launchedAtMs = Date.now();
    this.preexistingOutput = fileId(this.build.outputPath);
    const b = this.build;
    try {
      // Private: the service reads crash records back, so nobody else may plant one.
      ensurePrivateDir(this.opts.crashDir, 'crash record');
      this.crashRecord = path.join(this.opts.crashDir, `${this.id}-${crypto.randomBytes(4).toString('hex')}.phases`);
    } catch {
      // Without a place for the record a crash is still reported, only without its site.
      this.crashRecord = undefined;
    }
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
    } catch (e) {
      // No worker: finishLocally frees the slot itself.
      this.finishLocally('failed', `could not start a build worker: ${(e as Error).message}`);
    }
  }

  /**
   * First call: ask the worker to stop at the next step. A second call, or no result within
   * cancelKillMs, kills the worker (worker-run.ts). Returns false when there is nothing to cancel.
   */
  cancel(reason: CancelReason = 'user'): boolean {
    if (this.finished) return false;
    if (!this.run.launched) {
      // Still queued: nothing runs, so it ends right here.
      this.finishLocally('cancelled', undefined, reason);
      return true;
    }
    if (this.run.cancel(reason) === 1) this.state = 'cancelling';
    return true;
  }

  private onWorkerExit(exit: WorkerExit): void {
    if (this.finished) {
      if (this.crashRecord) removeCrashRecord(this.crashRecord);
      return;
    }
    if (exit.killedAfterCancel) {
      if (this.crashRecord) removeCrashRecord(this.crashRecord);
      this.finishLocally('cancelled', `the worker was killed ${exit.sinceCancelMs ?? 0} ms after cancel (${exit.killedAfterCancel})`);
      return;
    }
    const how = describeExit(exit);
    const site = this.crashRecord ? readCrashSite(this.crashRecord) : undefined;
    // The record belongs to this one build: gone once read.
    if (this.crashRecord) removeCrashRecord(this.crashRecord);
    const where = site && site.length > 0 ? `crashed in ${formatCrashSite(site)}: it ` : '';
    const lastLine = exit.stderrTail ? `; last output: ${exit.stderrTail.split('\n').slice(-3).join(' | ')}` : '';
    this.finishLocally('crashed', `the build worker ${where}exited without a result (${how})${lastLine}`, undefined, site?.length ? site : undefined);
  }

  /** Events from the worker, in seq order; stale, foreign or post-final events are dropped. */
  private ingest(events: BuildEvent[]): void {
    const est = this.opts.estimator;
    const mine: BuildEvent[] = [];
    for (const ev of events) {
      if (this.finished || ev.seq <= this.feed.lastSeq || ev.buildId !== this.id) continue;
      mine.push(est ? est.annotate(ev) : ev);
    }
    const fresh = this.feed.push(mine);
    for (const ev of fresh) {
      switch (ev.type) {
        case 'build.started':
          this.backendVersion = ev.backendVersion;
          break;
        case 'build.cancelling':
          if (this.state === 'running') this.state = 'cancelling';
          break;
        case 'build.finished':
          if (ev.status !== 'succeeded') this.removePartialOutput();
          this.settle(ev);
          break;
      }
    }
  }

  private finishLocally(status: BuildStatus, error?: string, reason?: CancelReason, lastPhasePath?: string[]): void {
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
    if (status !== 'succeeded') this.removePartialOutput();
    const requestedAt = this.run.cancelRequestedAt;
    const finished: BuildFinished = {
      ...base,
      t: endT,
      seq: ++seq,
      type: 'build.finished',
      status,
      durationMs: endT,
      ...(requestedAt !== undefined ? { stopToFinishMs: Date.now() - requestedAt } : {}),
      ...(error ? { error } : {}),
      ...(lastPhasePath ? { lastPhasePath } : {}),
    };
    events.push(finished);
    this.feed.push(events);
    this.settle(finished);
    if (!this.run.launched) this.opts.onSlotFree(this);
  }

  private settle(f: BuildFinished): void {
    // What the build wrote, recorded now: the engine is served and listed only while it is still that file.
    if (f.status === 'succeeded') this.engine = recordEngine(this.build.outputPath, f.engineBytes);
    this.outcome = f;
    this.state = f.status;
    this.finishedAt = new Date().toISOString();
    this.run.settled();
    const err = this.opts.estimator?.finished(f);
    if (err) this.opts.onWarning?.(`could not keep this build's profile for predictions: ${err.message}`);
    for (const w of this.waiters.splice(0)) w(f);
  }

  /**
   * A build that did not succeed leaves nothing behind: the native layer writes temp + rename and
   * cleans up on cancel/failure, but a killed or crashed worker cannot, so its temp files
   * (`<target>.tmp-<pid>-<n>`) are removed here, and any new file at the output path too.
   */
  private removePartialOutput(): void {
    const pid = this.run.pid;
    // A symbolic link is written through: the temp files sit beside its target.
    const real = (p: string) => {
      try {
        return fs.realpathSync(p);
      } catch {
        return p;
      }
    };
    const targets = [this.build.outputPath, this.build.options.timingCache].filter((p): p is string => !!p).map(real);
    for (const target of targets) {
      if (pid === undefined) continue;
      const dir = path.dirname(target);
      const prefix = `${path.basename(target)}.tmp-${pid}-`;
      try {
        for (const f of fs.readdirSync(dir)) if (f.startsWith(prefix)) fs.rmSync(path.join(dir, f), { force: true });
      } catch {
        // Directory gone: nothing to clean.
      }
    }
    const now = fileId(this.build.outputPath);
    // The file, never a link to it: the link stays a link.
    if (now !== undefined && now !== this.preexistingOutput) fs.rmSync(real(this.build.outputPath), { force: true });
  }
}
