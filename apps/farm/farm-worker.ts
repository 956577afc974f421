// A farm worker: takes builds whose target its labels match from the Redis/BullMQ pools and runs
// each with the local build service (the same isolated build worker process, cancel, time budget
// and crash handling as a local build), forwarding its events to the build's Redis stream and
// Stop requests from Redis to the local build.
//
// Label routing: one BullMQ queue per distinct target ("pool"); a worker polls the pools whose
// target its labels satisfy and takes jobs by hand (Worker.getNextJob), so one slot count governs
// every pool it serves. See docs/farm.md for why.
import * as crypto from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { BuildService, type BuildServiceOptions } from '../service/build-service.js';
import { resolveBackend } from '../service/build-validation.js';
import { checkTimingCacheFile } from '../service/timing-cache-file.js';
import { NO_PLUGINS, type PluginPolicy } from '../service/plugin-libraries.js';
import { ServiceError, type StartBuildInput } from '../service/api.js';
import {
  CancelReason as CancelReasonSchema,
  describeZodError,
  PROTOCOL_VERSION,
  type BackendInfo,
  type BuildEvent,
  type BuildFinished,
  type BuildRecord,
  type CancelReason,
} from '../shared/protocol.js';
import { JobData } from './farm-schemas.js';
import type { ArtifactStore } from './artifacts.js';
import { FarmStore, targetFromCanonical, type FarmRequest, type StoreLimits, DEFAULT_LIMITS } from './farm-store.js';
import { matches, probeLabels, type Labels } from './labels.js';
import { acquireLock } from './redis-lock.js';
import { displayMessage } from '../shared/display-text.js';
import { checkOut, discard, publish, type Published, type WorkingCopy } from './cache-copy.js';
import { connectRedis, watchRedis, type LogLine } from './redis.js';
import { buildJob, keys } from './keys.js';
import { EngineReuseStore } from '../service/engine-reuse-store.js';
import { Forwarder } from './event-forwarder.js';

/** The pool names serve makes (keys.ts poolQueueName); BullMQ refuses others (a ':' throws). */
const POOL_NAME = /^tbs-pool-(any|[0-9a-f]{16})$/;

/** Phase ids of attempt n are offset by (n-1) × this, so a retry's tree never collides with the lost one's. */
export const ATTEMPT_PHASE_OFFSET = 1_000_000;

export interface FarmWorkerOptions {
  url: string;
  /** Added to / overriding the labels the backend probe found. */
  labels?: Labels;
  concurrency?: number;
  /**
   * A slot of `worker --gpus`: every build runs on this CUDA device (whatever the request says),
   * and the worker carries the label device=<n>.
   */
  device?: number;
  artifacts?: ArtifactStore;
  id?: string;
  log?: LogLine;
  /** Heartbeat key TTL (default 10 s): serve calls a worker lost this long after its last beat. */
  heartbeatTtlMs?: number;
  /** BullMQ job lock (default 30 s); renewed at a third of it. */
  lockDurationMs?: number;
  pollMs?: number;
  /** Passed to the local build service (tests shorten cancelKillMs). */
  service?: BuildServiceOptions;
  /**
   * "build" (default): no two machines merge into one timing cache at once, even where the file
   * lock does not reach across machines: a build works on a private copy of its cache and
   * publishes into it under the farm-wide Redis lock (cache-copy.ts), so builds sharing a cache
   * run side by side. "off": caches are used in place under the native file lock alone (a shared
   * filesystem whose locks work across clients, e.g. NFSv4 with locking).
   */
  cacheLock?: 'build' | 'off';
  /** Where private copies of shared timing caches go (default: the OS temp folder). */
  cacheCopyDir?: string;
  limits?: StoreLimits;
  /**
   * Which plugin libraries a build may name (staticPlugins, dynamicPlugins, pluginsToSerialize):
   * the worker loads what a remote client asks for, so only those inside the operator's
   * `--plugin-dir` folders. Default: none.
   */
  pluginPolicy?: PluginPolicy;
}

interface Running {
  farmId: string;
  /** The pool (BullMQ queue) the build was taken from: a hand-back queues its next attempt there. */
  pool: string;
  localId?: string;
  /**
   * The worker is shutting down (the signal's name, or "stopped"): the build is stopped for that
   * and given back, not ended cancelled (handBack).
   */
  handBack?: string;
  /** Stop before the local build exists (while the build is being taken and prepared). */
  early: AbortController;
  owner: string;
  done: Promise<void>;
}

/** host-pid-random: unique per process, readable in the farm view. */
export function defaultWorkerId(): string {
  return `${os.hostname()}-${process.pid}-${crypto.randomBytes(2).toString('hex')}`;
}

export class FarmWorker {
  readonly id: string;
  labels: Labels = {};
  concurrency = 1;
  private readonly log: LogLine;
  /** The last error of the job poll, said once (loop). */
  private lastPollError?: string;
  private readonly redis: Redis;
  private readonly store: FarmStore;
  private readonly local: BuildService;
  private readonly reuseStore?: EngineReuseStore;
  private readonly queues = new Map<string, { queue: Queue; worker: Worker }>();
  private readonly running = new Map<string, Running>();
  /** Working copies whose publication failed: left on disk so their entries are not lost. */
  private readonly keptCopies = new Set<WorkingCopy>();
  private backends: BackendInfo[] = [];
  private stopping = false;
  private loopDone?: Promise<void>;
  private hbTimer?: NodeJS.Timeout;
  private wake?: () => void;
  /** Subscribed to Stop requests (keys.cancelChannel); a subscribed connection runs no commands. */
  private readonly stops: Redis;

  constructor(private readonly opts: FarmWorkerOptions) {
    this.id = opts.id ?? defaultWorkerId();
    this.log = opts.log ?? ((l) => process.stderr.write(`${l}\n`));
    this.redis = connectRedis(opts.url, `trt-build-studio worker ${this.id}`, this.log);
    this.store = new FarmStore(this.redis, opts.limits ?? DEFAULT_LIMITS, this.log);
    // reuse builds share the farm's engine store: a matrix rebuilds only the targets whose engines are stale.
    const storeDir = opts.artifacts?.engineStoreDir?.();
    this.reuseStore = storeDir ? new EngineReuseStore(storeDir) : undefined;
    this.local = new BuildService({
      concurrency: 64,
      ...(this.reuseStore ? { reuseStore: this.reuseStore } : {}),
      ...opts.service,
      pluginPolicy: opts.pluginPolicy ?? NO_PLUGINS,
    });
    this.stops = this.redis.duplicate();
    watchRedis(this.stops, opts.url, `trt-build-studio worker ${this.id}`, this.log);
    // Stop reaches a running build the moment it is asked for: no polling. A message sent while
    // this connection was down is lost (pub/sub keeps nothing), so every (re)connect re-reads the
    // counters of the builds this worker runs.
    this.stops.on('message', (channel: string, message: string) => {
      if (channel === keys.queuedChannel) {
        this.wake?.();
        return;
      }
      if (channel === keys.stopChannel) {
        // The count and reason ride along: no read of the counter on Stop's path.
        let m: { id?: unknown; n?: unknown; reason?: unknown };
        try {
          m = JSON.parse(message) as typeof m;
        } catch {
          return;
        }
        if (typeof m.id !== 'string' || typeof m.n !== 'number') return;
        this.pairedStops.set(m.id, (this.pairedStops.get(m.id) ?? 0) + 1);
        const entry = this.running.get(m.id);
        // A reason that is not one of the protocol's would end the build with an event nobody accepts.
        const reason = CancelReasonSchema.safeParse(m.reason);
        if (entry) this.applyCount(entry, { n: m.n, reason: reason.success ? reason.data : 'user' });
        return;
      }
      // The bare id (cancelChannel): a serve of this version sent it right after the message above
      // (same connection, same order), which said it all; one of an earlier version sends only
      // this, and the counter is read.
      const paired = this.pairedStops.get(message) ?? 0;
      if (paired > 0) {
        if (paired === 1) this.pairedStops.delete(message);
        else this.pairedStops.set(message, paired - 1);
        return;
      }
      const entry = this.running.get(message);
      if (entry) void this.applyCancels(entry);
    });
    this.stops.on('ready', () => {
      this.pairedStops.clear();
      void this.stops.subscribe(keys.cancelChannel, keys.stopChannel, keys.queuedChannel).catch(() => undefined);
      for (const entry of this.running.values()) void this.applyCancels(entry);
    });
  }

  private get ttl(): number {
    return this.opts.heartbeatTtlMs ?? 10_000;
  }
  private get lockMs(): number {
    return this.opts.lockDurationMs ?? 30_000;
  }

  /** Probes the backends, labels itself, registers, and starts taking builds. */
  async start(): Promise<void> {
    this.backends = await this.local.listBackends();
    this.labels = { ...probeLabels(this.backends), ...this.opts.labels, ...(this.opts.device === undefined ? {} : { device: String(this.opts.device) }) };
    if (this.reuseStore) this.reuseStore.standsFor = this.labels.gpu;
    // One build per GPU: the probe reports the one GPU builds run on, so 1 unless told otherwise.
    this.concurrency = Math.max(1, this.opts.concurrency ?? 1);
    await this.beat();
    this.hbTimer = setInterval(() => void this.beat().catch(() => undefined), Math.max(100, Math.floor(this.ttl / 3)));
    this.loopDone = this.loop();
  }

  private beat(): Promise<void> {
    return this.store.heartbeat(
      {
        id: this.id,
        labels: this.labels,
        concurrency: this.concurrency,
        running: [...this.running.keys()],
        host: os.hostname(),
        pid: process.pid,
        backends: this.backends,
        beatAt: Date.now(),
        ttlMs: this.ttl,
      },
      this.ttl,
    );
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let took = false;
      if (this.running.size < this.concurrency) {
        try {
          took = await this.takeOne();
        } catch (e) {
          // Redis away: the connection line says so; keep polling. Anything else is said once
          // per distinct message, so a poll that keeps failing is never silent.
          const msg = (e as Error)?.message ?? String(e);
          if (msg !== this.lastPollError) {
            this.lastPollError = msg;
            this.log(`worker ${this.id}: taking a job failed: ${displayMessage(msg)} (retrying)`);
          }
        }
      }
      if (!took && !this.stopping) {
        await new Promise<void>((r) => {
          const t = setTimeout(r, this.opts.pollMs ?? 250);
          this.wake = () => {
            clearTimeout(t);
            r();
          };
        });
        this.wake = undefined;
      }
    }
  }

  private pool(name: string): { queue: Queue; worker: Worker } {
    let p = this.queues.get(name);
    if (!p) {
      const connection = this.redis.duplicate();
      watchRedis(connection, this.opts.url, `trt-build-studio worker ${this.id}`, this.log);
      const queue = new Queue(name, { connection });
      // No processor: jobs are taken by hand so one slot count covers every pool. No stalled
      // re-run: a build whose worker vanished ends "worker lost" (serve decides, see docs).
      const worker = new Worker(name, null, { connection, lockDuration: this.lockMs, maxStalledCount: 0, stalledInterval: this.lockMs });
      queue.on('error', () => undefined);
      worker.on('error', () => undefined);
      void worker.startStalledCheckTimer().catch(() => undefined);
      p = { queue, worker };
      this.queues.set(name, p);
    }
    return p;
  }

  /**
   * Takes the oldest waiting job among the pools this worker matches. Each pool is read on its
   * own: one that cannot be (a name in the pools hash that is no pool of this farm, a queue whose
   * keys hold something else) is named once and skipped, so that it cannot keep this worker from
   * the others' builds (it took every poll down with it, and the worker, ready, took nothing).
   */
  private async takeOne(): Promise<boolean> {
    const pools = await this.store.pools();
    const candidates: Array<{ name: string; ts: number }> = [];
    for (const [name, canon] of Object.entries(pools)) {
      if (!POOL_NAME.test(name)) {
        this.store.refused(`${keys.pools} ${name}`, 'not a pool name of this farm (tbs-pool-<16 hex digits> or tbs-pool-any)');
        continue;
      }
      if (!matches(this.labels, targetFromCanonical(canon))) continue;
      try {
        const [head] = await this.pool(name).queue.getJobs(['wait'], 0, 0, true);
        if (head) candidates.push({ name, ts: Number.isFinite(head.timestamp) ? head.timestamp : Infinity });
      } catch (e) {
        this.poolUnreadable(name, e);
      }
    }
    candidates.sort((a, b) => a.ts - b.ts);
    for (const c of candidates) {
      const token = crypto.randomUUID();
      let job: Job | undefined;
      try {
        job = await this.pool(c.name).worker.getNextJob(token, { block: false });
      } catch (e) {
        this.poolUnreadable(c.name, e);
        continue;
      }
      if (!job) continue;
      this.runJob(job, token);
      return true;
    }
    return false;
  }

  private poolUnreadable(name: string, e: unknown): void {
    this.store.refused(`bull:${name}`, `its queue cannot be read (${displayMessage((e as Error)?.message ?? String(e))}); its builds wait, the other pools are served`);
  }

  private runJob(job: Job, token: string): void {
    // A job is data from Redis like any other: one that names no farm build fails once, with its
    // reason, instead of being taken (and lost, and taken again) by every worker.
    const data = JobData.safeParse(job.data);
    if (!data.success) {
      const why = `not a farm build job (${describeZodError(data.error).slice(0, 200)})`;
      this.store.refused(`bull:${job.queueName}:${job.id ?? '?'}`, why);
      void job.moveToFailed(new Error(why), token, false).catch(() => undefined);
      return;
    }
    const farmId = data.data.buildId;
    const owner = `${this.id}/${token}`;
    const entry: Running = { farmId, pool: job.queueName, owner, early: new AbortController(), done: Promise.resolve() };
    this.running.set(farmId, entry);
    void this.beat().catch(() => undefined);
    const lockTimer = setInterval(() => void job.extendLock(token, this.lockMs).catch(() => undefined), Math.floor(this.lockMs / 3));
    entry.done = this.runBuild(entry)
      .catch((e) => this.log(`worker ${this.id}: build ${farmId}: ${(e as Error).message}`))
      .finally(async () => {
        clearInterval(lockTimer);
        this.running.delete(farmId);
        // The job's lock may be gone (Redis restarted, or serve gave up on us): nothing to do then.
        await job.moveToCompleted('done', token, false).catch(() => undefined);
        void this.beat().catch(() => undefined);
        this.wake?.();
      });
  }

  private async runBuild(entry: Running): Promise<void> {
    const { farmId, owner } = entry;
    const attempt = await this.store.claim(farmId, owner);
    if (attempt === 0) {
      // Cancelled while queued, ended, or taken by another attempt's job: nothing to run. Said, so
      // that a job taken and dropped is never mistaken for a worker that took nothing.
      this.log(`worker ${this.id}: build ${farmId} is not queued any more (stopped, ended or already taken); its job ${entry.pool} is dropped`);
      return;
    }
    const request = await this.store.getRequest(farmId);
    const base = await this.store.getRecord(farmId);
    if (!request || !base) {
      // Claimed, but what it is cannot be read (refused and said by the store): end it failed
      // with the reason, as this owner, so nobody waits for it and no worker takes it again.
      await this.endUnreadable(farmId, owner, request ? 'record' : 'request');
      return;
    }
    this.log(`worker ${this.id}: build ${farmId} started (attempt ${attempt})`);
    const forwarder = new Forwarder(this.store, farmId, owner, base, { id: this.id, labels: this.labels }, (attempt - 1) * ATTEMPT_PHASE_OFFSET, attempt, () => {
      // The build was taken from us (serve called this worker lost during a network cut) or
      // Redis lost it: nobody follows this run any more, so it should not hold the GPU.
      this.log(`trt-build-studio worker ${this.id}: build ${farmId} is no longer ours in Redis; stopping it`);
      if (entry.localId) this.local.cancelBuild(entry.localId, 'shutdown');
      entry.early.abort();
    });

    let copy: WorkingCopy | undefined;
    let localId: string | undefined;
    try {
      const input = await this.localInput(farmId, request);
      const cachePath = input.options?.timingCache;
      if (cachePath && this.opts.cacheLock !== 'off') {
        // A private copy now, the farm-wide lock only to publish into the cache (cache-copy.ts).
        // Checked first, as the local service checks a cache: a clear refusal names the file.
        checkTimingCacheFile(path.resolve(cachePath), input.options?.backend);
        copy = checkOut(path.resolve(cachePath), this.opts.cacheCopyDir);
        input.options!.timingCache = copy.path;
        const wc = copy;
        forwarder.useCacheCopy(wc, () => this.publishCache(wc, farmId, entry.early.signal));
      }
      // Stop may have come while the build was being taken.
      if ((await this.store.cancelRequests(farmId)).n > 0) {
        await forwarder.endWithout('cancelled');
        return;
      }
      // The worker began shutting down while the build was being taken: nothing ran yet.
      if (entry.handBack !== undefined) {
        await this.handBack(entry, forwarder, attempt, request, undefined);
        return;
      }
      const rec = await this.local.startBuild(input);
      localId = rec.id;
      entry.localId = localId;
      forwarder.engineOf = () => {
        const e = this.local.engineRecord(localId!);
        return e && { ino: e.ino, size: e.size, mtimeMs: e.mtimeMs };
      };
      await this.applyCancels(entry);
      if (entry.handBack !== undefined) this.local.cancelBuild(localId, 'shutdown');
      // While the worker shuts down, the local build's cancelling (reason shutdown) and its ending
      // wait here: whether they reach the stream is decided once it ended (handBack).
      const held: BuildEvent[] = [];
      // A stop of the build's own (its time budget, a memory limit, a person) that it reported
      // before the shutdown's: the build ends as that stop ends it, and is not handed back. (One
      // its build worker never got to report, stalled, goes unseen: that build is handed back.)
      let ownStop: CancelReason | undefined;
      const hold = (events: BuildEvent[]): BuildEvent[] => {
        for (const e of events) if (e.type === 'build.cancelling' && e.reason !== 'shutdown') ownStop ??= e.reason;
        if (entry.handBack === undefined) return events;
        const pass: BuildEvent[] = [];
        for (const e of events) ((e.type === 'build.cancelling' && e.reason === 'shutdown') || e.type === 'build.finished' ? held : pass).push(e);
        return pass;
      };
      // pacesBuild: while the forwarder has more than its bound waiting for Redis (slow or stalled),
      // push() returns a promise and the build worker holds its next batch (event-forwarder.ts).
      const sub = this.local.subscribe(localId, (events) => forwarder.push(hold(events), () => this.local.getBuild(localId!)!), { afterSeq: -1, pacesBuild: true });
      await this.local.waitForResult(localId);
      sub.unsubscribe();
      if (entry.handBack !== undefined) {
        const record = this.local.getBuild(localId)!;
        // The ending is in the record even if the subscription had not delivered it yet.
        if (!held.some((e) => e.type === 'build.finished') && record.outcome) held.push(record.outcome);
        await this.handBack(entry, forwarder, attempt, request, { held, record, ownStop });
        return;
      }
      await forwarder.flush(this.local.getBuild(localId)!);
      const outcome = this.local.getBuild(localId)?.outcome;
      this.log(`worker ${this.id}: build ${farmId} ${outcome?.status ?? 'ended'}`);
    } catch (e) {
      const msg = e instanceof ServiceError ? e.message : `internal error: ${(e as Error).message}`;
      await forwarder.endWithout('failed', msg);
    } finally {
      this.applied.delete(farmId);
      if (copy && !this.keptCopies.delete(copy)) discard(copy);
    }
  }

  private async endUnreadable(farmId: string, owner: string, what: string): Promise<void> {
    const error = `the build farm could not read this build's ${what} from Redis (${keys.build(farmId)}); see the worker's log`;
    this.log(`worker ${this.id}: build ${farmId}: ${error}`);
    const finished = { v: PROTOCOL_VERSION, buildId: farmId, seq: 0, t: 0, type: 'build.finished', status: 'failed', durationMs: 0, error } as BuildEvent;
    await this.store.append(farmId, [finished], owner).catch(() => undefined);
    await this.redis
      .eval(`if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('HSET', KEYS[1], 'state', 'failed') end`, 1, keys.build(farmId), owner)
      .catch(() => undefined);
  }

  /**
   * The worker shuts down under a build (`entry.handBack`): the build goes back to its pool for
   * another worker while it has an attempt left (request.retries, the same budget a lost worker's
   * build draws on), else it ends failed, "worker shut down"; never cancelled, since nobody
   * stopped it. A build a person stopped meanwhile ends cancelled, as asked. The decision is one
   * Redis script (FarmStore.handBack), so a Stop cannot slip between it and the requeue; one that
   * comes after finds the build queued (serve ends it) or stops its next attempt at the start.
   * `local`: the local build that ran (its held-back cancelling and ending, and its record).
   */
  private async handBack(
    entry: Running,
    forwarder: Forwarder,
    attempt: number,
    request: FarmRequest,
    local: { held: BuildEvent[]; record: BuildRecord; ownStop?: CancelReason } | undefined,
  ): Promise<void> {
    const { farmId } = entry;
    const localEnd = local?.held.find((e): e is BuildFinished => e.type === 'build.finished');
    // The build got to its own end before the cancel reached it (succeeded, or failed for a
    // reason of its own), or was stopped for a reason of its own first: that ending stands.
    if (local && (localEnd?.status !== 'cancelled' || local.ownStop !== undefined)) return this.endAsRan(forwarder, local);
    if ((await this.store.cancelRequests(farmId)).n > 0) return this.endStopped(forwarder, farmId, local);
    const budget = request.retries + 1;
    const again = attempt < budget;
    const why = `worker ${this.id} shut down (${entry.handBack})`;
    const note = again
      ? `${why}; build handed back to the queue, attempt ${attempt + 1} of ${budget}`
      : `${why}; no attempt left (this was attempt ${attempt} of ${budget}): the build fails`;
    const closeOpen = (await forwarder.openPhases()).map(
      (id) => ({ v: PROTOCOL_VERSION, buildId: farmId, seq: 0, t: 0, type: 'phase.finish', id, stepsDone: 0, early: true }) as BuildEvent,
    );
    const logLine = { v: PROTOCOL_VERSION, buildId: farmId, seq: 0, t: 0, type: 'log', severity: again ? 'warning' : 'error', message: note } as BuildEvent;
    // Refused: serve already took the build over (it called this worker lost); it decides.
    if (!(await forwarder.sendFarm([...closeOpen, logLine]))) return;
    const result = await this.store.handBack(farmId, entry.owner, again ? forwarder.handBackRecord(local?.record) : undefined);
    if (result === 'lost') return;
    if (result === 'stopped') return this.endStopped(forwarder, farmId, local);
    if (result === 'requeued') {
      // Should this fail (Redis gone at this very moment), serve queues the same job when it sees
      // the build back in the queue (build-ownership.ts, checkOwner).
      const job = buildJob(farmId, attempt + 1);
      await this.pool(entry.pool)
        .queue.add(job.name, job.data, job.opts)
        .catch((e: Error) => this.log(`worker ${this.id}: build ${farmId}: could not queue its next attempt (${e.message}); serve will`));
      await this.redis.publish(keys.queuedChannel, entry.pool).catch(() => undefined);
      this.log(`worker ${this.id}: build ${farmId} handed back to the queue (attempt ${attempt + 1} of ${budget} next)`);
      return;
    }
    this.log(`worker ${this.id}: build ${farmId} failed: worker shut down on its last attempt`);
    if (!local || !localEnd) return forwarder.endWithout('failed', 'worker shut down');
    // The local ending, as a failure: its duration, cache and memory stand; what belonged to the
    // cancel (its latencies, the removed engine) does not.
    const { cancelLatencyMs: _c, stopToFinishMs: _s, engineBytes: _b, outputPath: _p, memoryStop: _m, ...kept } = localEnd;
    const failed: BuildFinished = { ...kept, status: 'failed', error: 'worker shut down' };
    const record: BuildRecord = { ...local.record, state: 'failed', outcome: failed };
    await this.endAsRan(forwarder, { held: [failed], record });
  }

  /** The held-back events go to the stream as the local build emitted them. */
  private async endAsRan(forwarder: Forwarder, local: { held: BuildEvent[]; record: BuildRecord }): Promise<void> {
    await forwarder.push(local.held, () => local.record);
    await forwarder.flush(local.record);
  }

  /**
   * A person stopped the build while the worker shut down: it ends cancelled, with their reason
   * (the local build's cancelling said "shutdown", the first cancel it got).
   */
  private async endStopped(forwarder: Forwarder, farmId: string, local: { held: BuildEvent[]; record: BuildRecord } | undefined): Promise<void> {
    if (!local) return forwarder.endWithout('cancelled');
    const { reason } = await this.store.cancelRequests(farmId).catch(() => ({ reason: 'user' as CancelReason }));
    const held = local.held.map((e) => (e.type === 'build.cancelling' ? { ...e, reason } : e));
    await this.endAsRan(forwarder, { held, record: local.record });
  }

  /**
   * Publishes a build's working copy into the shared cache: the Redis lock is held only for the
   * re-read and replace. A lock not had within a minute (a stuck holder) sends the entries to a
   * sidecar instead of holding up the build's end.
   */
  private async publishCache(wc: WorkingCopy, farmId: string, signal: AbortSignal): Promise<Published> {
    try {
      return await publish(wc, async () => {
        // Redis failing here is no reason to lose the entries: without the lock they go to a
        // pending file, which needs none.
        const held = await acquireLock(this.redis, `cache:${wc.shared}`, { ttlMs: 30_000, waitMs: 60_000, signal }).catch(() => undefined);
        return held && (() => held.release());
      });
    } catch (e) {
      // The shared folder refused the write (full, permissions): the copy stays for an operator.
      this.keptCopies.add(wc);
      const why = `${(e as Error).message}; this build's entries stay in ${wc.path} on ${os.hostname()}`;
      this.log(`trt-build-studio worker ${this.id}: build ${farmId}: timing cache ${wc.shared} not updated: ${why}`);
      throw new Error(why, { cause: e });
    }
  }

  /** The request as the local service takes it: shared engine path and timing cache filled in. */
  private async localInput(farmId: string, request: FarmRequest): Promise<StartBuildInput> {
    const input: StartBuildInput = { ...request.input, options: { ...request.input.options } };
    // A GPU slot's builds run on its GPU: the request cannot know which device a machine gave it.
    if (this.opts.device !== undefined) input.options!.device = this.opts.device;
    const art = this.opts.artifacts;
    if (art && !input.outputPath) {
      const backend = resolveBackend(input.options?.backend ?? 'auto', this.backends);
      input.outputPath = art.enginePathFor(farmId, input.modelPath, backend.name === 'simulated');
    }
    if (art && !input.options!.timingCache) {
      const shared = art.timingCacheFor(this.labels);
      if (shared) input.options!.timingCache = shared;
    }
    return input;
  }

  /** Each new Stop request in Redis becomes one local cancel (the second one kills, as locally). */
  private applied = new Map<string, number>();
  /** Stop messages with their count, per build, whose bare-id twin on cancelChannel has not come yet. */
  private readonly pairedStops = new Map<string, number>();
  private async applyCancels(entry: Running): Promise<void> {
    let c;
    try {
      c = await this.store.cancelRequests(entry.farmId);
    } catch {
      return;
    }
    this.applyCount(entry, c);
  }

  /** Acts on the Stop count `c.n` of a build (what is new since the last look). */
  private applyCount(entry: Running, c: { n: number; reason: CancelReason }): void {
    if (!entry.localId) {
      if (c.n > 0) entry.early.abort();
      return;
    }
    const done = this.applied.get(entry.farmId) ?? 0;
    for (let i = done; i < c.n; i++) this.local.cancelBuild(entry.localId, c.reason);
    this.applied.set(entry.farmId, Math.max(done, c.n));
  }

  /**
   * One more cancel for every build this worker runs (a second one kills the build's worker
   * process, as locally); builds still being prepared stop before they start. After stop() began,
   * the builds it gives back are still given back once their build workers are gone.
   */
  cancelAll(reason: 'shutdown'): void {
    for (const r of this.running.values()) {
      if (r.localId) this.local.cancelBuild(r.localId, reason);
      else r.early.abort();
    }
  }

  /**
   * Stops taking builds and gives the running ones back (`why`: the signal that stopped the
   * worker, for the builds' logs): each local build is cancelled (reason "shutdown": the GPU is
   * free at its next step boundary), and once it ended the build goes back to the queue or, with
   * no attempt left, ends failed "worker shut down" (handBack). A build a person had already
   * stopped just ends, cancelled: this cancel is its second, which ends it now.
   */
  async stop(why = 'stopped'): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loopDone;
    for (const r of this.running.values()) {
      if ((this.applied.get(r.farmId) ?? 0) === 0) r.handBack = why;
      // One still being prepared sees handBack before its local build starts (runBuild).
      if (r.localId) this.local.cancelBuild(r.localId, 'shutdown');
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
    await this.local.shutdown();
    if (this.hbTimer) clearInterval(this.hbTimer);
    await this.store.removeWorker(this.id).catch(() => undefined);
    this.stops.disconnect();
    for (const { queue, worker } of this.queues.values()) {
      await worker.close(true).catch(() => undefined);
      await queue.close().catch(() => undefined);
    }
    this.redis.disconnect();
  }
}
