// One build as the service sees it: its record, its phase tree (rebuilt from events), the events
// kept for replay, its subscribers, and the worker process that runs it. The worker is trusted
// for nothing: its messages are validated, and if it dies without a result the session writes the
// ending itself (status "crashed") and removes anything half-written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PhaseTree } from '../shared/phase-tree.js';
import {
  PROTOCOL_VERSION,
  describeZodError,
  type BuildEvent,
  type BuildFinished,
  type BuildRecord,
  type BuildState,
  type BuildStatus,
  type CacheStats,
  type CancelReason,
} from '../shared/protocol.js';
import { WorkerToParent } from '../worker/messages.js';
import type { Subscription } from './api.js';
import type { ValidatedBuild } from './build-validation.js';
import { EventLog } from './event-log.js';
import { SubscriberBacklog } from './subscriber-backlog.js';
import type { WorkerChannel, WorkerLauncher } from './worker-host.js';

/**
 * Events (after step coalescing) a busy subscriber may have waiting before it is dropped. Past
 * this, holding more would let one stuck client grow the service without bound; a dropped
 * subscriber hears of it through onOverflow and can resume from the last seq it got (replay and
 * snapshot), the way an SSE client resumes with Last-Event-ID.
 */
export const MAX_SUBSCRIBER_BACKLOG = 100_000;
/** A worker that sent its result but lingers this long is killed (it holds a GPU slot). */
const EXIT_AFTER_RESULT_MS = 5000;
const EXIT_GRACE_MS = 25;

interface Subscriber {
  /** A returned promise means "busy until it settles": later events wait, coalesced, in `backlog`. */
  cb: (events: BuildEvent[]) => unknown;
  ready: boolean;
  closed: boolean;
  buffered: BuildEvent[];
  busy: boolean;
  backlog: SubscriberBacklog;
  maxBacklog: number;
  /** Highest seq handed to cb. */
  lastSeq: number;
  onOverflow?: (lastSeq: number) => void;
}

export interface SubscribeOptions {
  /** Default MAX_SUBSCRIBER_BACKLOG. */
  maxBacklog?: number;
  /** The subscriber fell too far behind and was dropped; `lastSeq` is the last event it got. */
  onOverflow?: (lastSeq: number) => void;
}

export interface SessionOptions {
  cancelKillMs: number;
  retainEvents: number;
  /** Finished phases kept in the snapshot tree (open ones are always kept). */
  retainFinishedPhases: number;
  /** Called once, when the worker process is gone (or the build ended without one). */
  onSlotFree: (s: BuildSession) => void;
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
  private cache?: CacheStats;
  /** -1 until the first event: the native layer numbers events from 0. */
  private lastSeq = -1;
  /** Bounded: snapshots carry open phases plus the most recently finished ones, not the whole build. */
  private readonly tree: PhaseTree;
  private readonly log: EventLog;
  private readonly subs = new Set<Subscriber>();
  private readonly waiters: Array<(f: BuildFinished) => void> = [];

  private channel?: WorkerChannel;
  private launchedAtMs = 0;
  private cancelRequests = 0;
  private cancelRequestedAtMs?: number;
  private cancelReason?: CancelReason;
  private killedAfterCancel = false;
  private timers: NodeJS.Timeout[] = [];
  /** Identity of a file already at the output path before the build, which a failure must not delete. */
  private preexistingOutput?: string;
  private exited = false;
  private exitedPromise?: Promise<void>;

  constructor(
    readonly id: string,
    readonly build: ValidatedBuild,
    private readonly opts: SessionOptions,
  ) {
    this.log = new EventLog(opts.retainEvents);
    this.tree = new PhaseTree({ retainFinished: opts.retainFinishedPhases });
  }

  get finished(): boolean {
    return this.outcome !== undefined;
  }

  get isRunning(): boolean {
    return this.channel !== undefined && !this.exited;
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
      cache: this.cache,
      lastSeq: this.lastSeq,
      phases: this.tree.snapshot(),
      engineAvailable: this.enginePath() !== undefined,
    };
  }

  enginePath(): string | undefined {
    if (this.outcome?.status !== 'succeeded') return undefined;
    return fs.existsSync(this.build.outputPath) ? this.build.outputPath : undefined;
  }

  waitForResult(): Promise<BuildFinished> {
    if (this.outcome) return Promise.resolve(this.outcome);
    return new Promise((r) => this.waiters.push(r));
  }

  /** Resolves when the worker process has exited (immediately if there never was one). */
  waitForExit(): Promise<void> {
    return this.exitedPromise ?? Promise.resolve();
  }

  /**
   * Live events (and a replay of those after `afterSeq`) for `cb`. A callback that returns a
   * promise gets nothing more until it settles; what arrives meanwhile waits with steps
   * coalesced, and a subscriber whose backlog passes `maxBacklog` is dropped (onOverflow).
   */
  subscribe(cb: (events: BuildEvent[]) => unknown, afterSeq?: number, opts: SubscribeOptions = {}): Subscription {
    const snapshot = this.record();
    const replay = afterSeq !== undefined ? this.log.after(afterSeq) : [];
    const sub: Subscriber = {
      cb,
      ready: false,
      closed: false,
      buffered: [],
      busy: false,
      backlog: new SubscriberBacklog(),
      maxBacklog: opts.maxBacklog ?? MAX_SUBSCRIBER_BACKLOG,
      lastSeq: afterSeq ?? this.lastSeq,
      onOverflow: opts.onOverflow,
    };
    if (!this.finished) this.subs.add(sub);
    // Delivered after subscribe() returns, so the caller can send the snapshot first; live events
    // that arrive meanwhile are buffered behind the replay.
    queueMicrotask(() => {
      if (sub.closed) return;
      const first = replay.concat(sub.buffered);
      sub.ready = true;
      if (this.finished) this.subs.delete(sub);
      sub.buffered = [];
      if (first.length) this.deliver(sub, first);
    });
    return {
      snapshot,
      unsubscribe: () => {
        sub.closed = true;
        sub.backlog.clear();
        this.subs.delete(sub);
      },
    };
  }

  /** Starts the worker. */
  launch(launcher: WorkerLauncher): void {
    this.state = 'running';
    this.startedAt = new Date().toISOString();
    this.launchedAtMs = Date.now();
    this.preexistingOutput = fileId(this.build.outputPath);
    let ch: WorkerChannel;
    try {
      ch = launcher();
    } catch (e) {
      // No channel: finishLocally frees the slot itself.
      this.finishLocally('failed', `could not start a build worker: ${(e as Error).message}`);
      return;
    }
    this.channel = ch;
    this.exitedPromise = new Promise((resolve) => {
      ch.onExit((code, signal) => {
        this.exited = true;
        for (const t of this.timers) clearTimeout(t);
        this.timers = [];
        // Exit and the last messages travel separately (utilityProcess especially): let messages
        // already on their way land before deciding the worker died without a result.
        setTimeout(() => {
          this.onWorkerExit(code, signal);
          resolve();
          this.opts.onSlotFree(this);
        }, EXIT_GRACE_MS);
      });
    });
    ch.onMessage((raw) => this.onWorkerMessage(raw));
    const b = this.build;
    ch.send({
      type: 'start',
      request: {
        buildId: this.id,
        backend: b.backend,
        modelPath: b.modelPath,
        outputPath: b.outputPath,
        options: b.options,
        layers: b.layers,
        model: b.summary,
      },
    });
    // The budget covers the build, not its wait in the queue.
    if (b.timeBudgetSeconds) {
      this.timers.push(setTimeout(() => this.cancel('timeout'), b.timeBudgetSeconds * 1000));
    }
  }

  /**
   * First call: ask the worker to stop at the next step. A second call, or no result within
   * cancelKillMs, kills the worker. Returns false when there is nothing to cancel.
   */
  cancel(reason: CancelReason = 'user'): boolean {
    if (this.finished) return false;
    if (!this.channel) {
      // Still queued: nothing runs, so it ends right here.
      this.finishLocally('cancelled', undefined, reason);
      return true;
    }
    this.cancelRequests++;
    if (this.cancelRequests === 1) {
      this.state = 'cancelling';
      this.cancelRequestedAtMs = Date.now();
      this.cancelReason = reason;
      this.channel.send({ type: 'cancel', reason });
      this.timers.push(setTimeout(() => this.kill(), this.opts.cancelKillMs));
    } else {
      this.kill();
    }
    return true;
  }

  private kill(): void {
    if (this.finished || this.exited || !this.channel) return;
    this.killedAfterCancel = true;
    this.channel.kill();
  }

  private onWorkerMessage(raw: unknown): void {
    const parsed = WorkerToParent.safeParse(raw);
    if (!parsed.success) {
      // A worker that speaks garbage cannot be trusted to finish properly either.
      this.finishLocally('failed', `the build worker sent an invalid message: ${describeZodError(parsed.error)}`);
      this.channel?.kill();
      return;
    }
    const msg = parsed.data;
    switch (msg.type) {
      case 'events':
        this.ingest(msg.events);
        break;
      case 'result':
        // The stream normally ends with build.finished already; this covers a lost last batch.
        if (!this.finished) this.ingest([{ ...msg.finished, seq: Math.max(msg.finished.seq, this.lastSeq + 1) }]);
        this.channel?.send({ type: 'release' });
        break;
      case 'error':
        if (!this.finished) this.finishLocally('failed', msg.message);
        break;
      case 'ready':
      case 'backends':
        break;
    }
  }

  private onWorkerExit(code: number | null, signal: string | null): void {
    if (this.finished) return;
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    if (this.killedAfterCancel) {
      const waited = Date.now() - (this.cancelRequestedAtMs ?? Date.now());
      this.finishLocally('cancelled', `the worker was killed ${waited} ms after cancel (${this.cancelRequests > 1 ? 'second cancel' : 'no result in time'})`);
      return;
    }
    const tail = this.channel?.stderrTail?.();
    const lastLine = tail ? `; last output: ${tail.split('\n').slice(-3).join(' | ')}` : '';
    this.finishLocally('crashed', `the build worker exited without a result (${how})${lastLine}`);
  }

  /** Events from the worker, in seq order; stale or post-final events are dropped. */
  private ingest(events: BuildEvent[]): void {
    const fresh: BuildEvent[] = [];
    for (const ev of events) {
      if (this.finished || ev.seq <= this.lastSeq || ev.buildId !== this.id) continue;
      this.lastSeq = ev.seq;
      this.tree.apply(ev);
      this.log.append(ev);
      switch (ev.type) {
        case 'build.started':
          this.backendVersion = ev.backendVersion;
          break;
        case 'build.cancelling':
          if (this.state === 'running') this.state = 'cancelling';
          break;
        case 'cache.stats':
          this.cache = this.cacheFrom(ev);
          break;
        case 'build.finished':
          if (ev.status !== 'succeeded') this.removePartialOutput();
          this.settle(ev);
          break;
      }
      fresh.push(ev);
    }
    this.broadcast(fresh);
  }

  private cacheFrom(ev: Extract<BuildEvent, { type: 'cache.stats' }>): CacheStats {
    const { v: _v, buildId: _b, seq: _s, t: _t, type: _ty, ...stats } = ev;
    return stats;
  }

  private finishLocally(status: BuildStatus, error?: string, reason?: CancelReason): void {
    if (this.finished) return;
    const t = this.launchedAtMs ? Date.now() - this.launchedAtMs : 0;
    const base = { v: PROTOCOL_VERSION, buildId: this.id, t };
    const events: BuildEvent[] = [];
    if (status === 'cancelled' && reason && this.state === 'queued') {
      events.push({ ...base, seq: ++this.lastSeq, type: 'build.cancelling', requestedAt: t, reason });
    }
    if (status !== 'succeeded') this.removePartialOutput();
    const finished: BuildFinished = {
      ...base,
      seq: ++this.lastSeq,
      type: 'build.finished',
      status,
      durationMs: t,
      ...(this.cancelRequestedAtMs !== undefined ? { stopToFinishMs: Date.now() - this.cancelRequestedAtMs } : {}),
      ...(error ? { error } : {}),
    };
    events.push(finished);
    for (const e of events) this.log.append(e);
    this.settle(finished);
    this.broadcast(events);
    if (!this.channel) this.opts.onSlotFree(this);
  }

  private settle(f: BuildFinished): void {
    this.outcome = f;
    this.state = f.status;
    this.finishedAt = new Date().toISOString();
    if (f.cache) this.cache = f.cache;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    if (this.channel && !this.exited) {
      this.timers.push(setTimeout(() => this.channel?.kill(), EXIT_AFTER_RESULT_MS));
    }
    for (const w of this.waiters.splice(0)) w(f);
  }

  /**
   * A build that did not succeed leaves nothing behind: the native layer writes temp + rename and
   * cleans up on cancel/failure, but a killed or crashed worker cannot, so its temp files
   * (`<target>.tmp-<pid>-<n>`) are removed here, and any new file at the output path too.
   */
  private removePartialOutput(): void {
    const pid = this.channel?.pid;
    const targets = [this.build.outputPath, this.build.options.timingCache].filter((p): p is string => !!p);
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
    if (now !== undefined && now !== this.preexistingOutput) fs.rmSync(this.build.outputPath, { force: true });
  }

  private broadcast(events: BuildEvent[]): void {
    if (events.length === 0) return;
    for (const sub of this.subs) {
      if (sub.ready) this.deliver(sub, events);
      else sub.buffered.push(...events);
    }
    if (this.finished) {
      // Nothing follows build.finished; pending replays still complete (they hold their own copy).
      for (const sub of this.subs) if (sub.ready) this.subs.delete(sub);
    }
  }

  private deliver(sub: Subscriber, events: BuildEvent[]): void {
    if (sub.closed || events.length === 0) return;
    if (sub.busy) {
      sub.backlog.push(events);
      if (sub.backlog.size > sub.maxBacklog) this.overflow(sub);
      return;
    }
    sub.lastSeq = events[events.length - 1].seq;
    let r: unknown;
    try {
      r = sub.cb(events);
    } catch {
      // One subscriber's bug must not starve the others (or the build).
      return;
    }
    if (r && typeof (r as PromiseLike<unknown>).then === 'function') {
      sub.busy = true;
      const resume = () => {
        sub.busy = false;
        // Still delivered after the build ended (the subscriber left `subs` then): it gets the
        // rest of the stream, build.finished included.
        if (!sub.closed) this.deliver(sub, sub.backlog.take());
      };
      (r as PromiseLike<unknown>).then(resume, resume);
    }
  }

  private overflow(sub: Subscriber): void {
    sub.closed = true;
    sub.backlog.clear();
    this.subs.delete(sub);
    try {
      sub.onOverflow?.(sub.lastSeq);
    } catch {
      // As in deliver().
    }
  }
}
