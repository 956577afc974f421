// BuildServiceApi over Redis + BullMQ (`serve --queue redis://...`): builds are queued in the
// pool of their target and run by farm workers on other machines; serve mirrors each build from
// its Redis stream so every surface (HTTP/SSE, CLI, MCP, UI) sees the same live tree, Stop and
// history as with local builds. State lives in Redis, so a restarted serve picks up where it was.
import type { FarmStatus } from '../shared/farm-status.js';
import { composeFarmStatus } from './farm-status.js';
import { FarmStatusFeed, type FarmStatusListener } from './farm-status-feed.js';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceError, type BuildServiceApi, type StartBuildInput, type SubscribeOpts, type Subscription } from '../service/api.js';
import { checkOutputPath, checkShapes } from '../service/build-validation.js';
import { inspectModel, readModel } from '../service/model/model-reader.js';
import {
  BuildOptions,
  PROTOCOL_VERSION,
  describeZodError,
  type BackendInfo,
  type BuildEvent,
  type BuildFinished,
  type BuildRecord,
  type CancelReason,
  type ModelSummary,
} from '../shared/protocol.js';
import type { ArtifactStore } from './artifacts.js';
import { LocalPathArtifacts } from './artifacts.js';
import { DEFAULT_LIMITS, FarmStore, FINAL_STATES, parseEntry, type FarmRecord, type FarmRequest, type StoreLimits, type WorkerInfo } from './farm-store.js';
import { canonicalTarget, keys, poolQueueName } from './keys.js';
import { checkTarget, formatLabels, matches, type Labels } from './labels.js';
import { connectRedis, RECONNECT_MAX_MS, safeUrl, watchRedis, type LogLine } from './redis.js';
import { RemoteBuild } from './remote-build.js';
import { viewFromStream } from './stream-view.js';
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import type { BuildViewSnapshot } from '../shared/build-view.js';

/** A build request as the farm takes it: the local request (with target, retries) or a matrix. */
export type FarmBuildInput = StartBuildInput & { targets?: Array<Record<string, string>> };

export interface QueueServiceOptions {
  url: string;
  artifacts?: ArtifactStore;
  log?: LogLine;
  /** How often serve checks for lost workers and unmatched targets (default 1000 ms). */
  checkMs?: number;
  /** Must match the workers' heartbeat TTL (default 10 s): after a reconnect serve waits this long before calling anyone lost. */
  heartbeatTtlMs?: number;
  limits?: StoreLimits;
  /** How long one blocking read of the build streams waits at most (default READ_BLOCK_LIMIT_MS). */
  readBlockLimitMs?: number;
  retainEvents?: number;
  retainFinishedPhases?: number;
}

const SERVE_OWNER = 'serve';
/**
 * The reader's XREAD gives up after this long without an entry and starts over. Not a polling
 * interval: entries and wakes end the wait at once; this only bounds how long a lost wake (Redis
 * restarted between the wake and the read) could leave a new build's stream unread.
 */
const READ_BLOCK_LIMIT_MS = 5000;
/** A serve that died without cleaning up leaves its wake stream behind this long at most. */
const WAKE_KEY_TTL_MS = 24 * 3600_000;

export class QueueBuildService implements BuildServiceApi {
  private readonly log: LogLine;
  private readonly redis: Redis;
  private readonly reader: Redis;
  private readonly store: FarmStore;
  private readonly artifacts: ArtifactStore;
  private readonly builds = new Map<string, RemoteBuild>();
  private readonly queues = new Map<string, Queue>();
  private closing = false;
  private readerDone?: Promise<void>;
  private checkTimer?: NodeJS.Timeout;
  private checking = false;
  /** When the command connection last became ready: heartbeats missed during an outage do not count. */
  private readySince = Date.now();
  private live: WorkerInfo[] = [];
  /** This serve's wake stream (readLoop) and the last entry of it the reader has seen. */
  private readonly wakeKey = keys.serveWake(crypto.randomUUID());
  private wakeSeen = '0-0';
  /** The farm view for its live stream; composed again whenever something it shows changed. */
  private readonly farmFeed = new FarmStatusFeed(() => this.farmStatus());
  /** Subscribed to keys.farmChannel: workers say there when they beat, join or leave. */
  private readonly farmChanges: Redis;

  private constructor(private readonly opts: QueueServiceOptions) {
    this.log = opts.log ?? ((l) => process.stderr.write(`${l}\n`));
    this.redis = connectRedis(opts.url, 'trt-build-studio serve', this.log);
    this.reader = this.redis.duplicate();
    watchRedis(this.reader, opts.url, 'trt-build-studio serve', this.log);
    this.redis.on('ready', () => (this.readySince = Date.now()));
    this.farmChanges = this.redis.duplicate();
    watchRedis(this.farmChanges, opts.url, 'trt-build-studio serve', this.log);
    this.farmChanges.on('message', () => this.farmFeed.changed());
    this.farmChanges.on('ready', () => {
      void this.farmChanges.subscribe(keys.farmChannel).catch(() => undefined);
      this.farmFeed.changed();
    });
    this.store = new FarmStore(this.redis, opts.limits ?? DEFAULT_LIMITS);
    this.artifacts = opts.artifacts ?? new LocalPathArtifacts();
  }

  /** Connects, loads the history kept in Redis and starts following running builds. */
  static async create(opts: QueueServiceOptions): Promise<QueueBuildService> {
    const s = new QueueBuildService(opts);
    await s.loadHistory();
    s.readerDone = s.readLoop();
    s.checkTimer = setInterval(() => void s.check(), opts.checkMs ?? 1000);
    return s;
  }

  private mirror(record: FarmRecord): RemoteBuild {
    const b = new RemoteBuild(record, {
      retainEvents: Math.max(100, this.opts.retainEvents ?? 20_000),
      onChange: () => this.farmFeed.changed(),
    });
    this.builds.set(record.id, b);
    if (!b.finished) this.wakeReader();
    this.farmFeed.changed();
    return b;
  }

  private async loadHistory(): Promise<void> {
    for (const id of await this.store.historyIds()) {
      const rec = await this.loadRecord(id);
      if (!rec) continue;
      const b = this.mirror(rec);
      // The record is the snapshot; the stream has whatever happened after it was written.
      if (!b.finished) await this.feed(b, await this.store.eventsAfter(id, rec.lastSeq));
    }
  }

  /**
   * Events from the stream into a mirror. The farm numbers a build's events without gaps, so a
   * gap means the stream was trimmed past what this serve had read: the record in Redis (a
   * snapshot the worker rewrites every few seconds) replaces the mirror's state first.
   */
  private async feed(b: RemoteBuild, events: BuildEvent[]): Promise<void> {
    if (events.length && events[0].seq > b.lastSeq + 1) {
      const rec = await this.store.getRecord(b.id);
      if (rec) b.reset(rec);
      if (events[0].seq > b.lastSeq + 1) {
        this.log(`trt-build-studio serve: build ${b.id}: events ${b.lastSeq + 1}..${events[0].seq - 1} were trimmed from Redis before they were read; its tree may miss phases`);
      }
    }
    b.ingest(events.filter((e) => e.seq > b.lastSeq));
  }

  // ─────────────────────────────── BuildServiceApi ───────────────────────────────

  async listBackends(): Promise<BackendInfo[]> {
    const live = await this.store.liveWorkers();
    const byName = new Map<string, { info: BackendInfo; workers: string[] }>();
    for (const w of live) {
      for (const b of (w.backends as BackendInfo[] | undefined) ?? []) {
        const cur = byName.get(b.name);
        if (b.available && (!cur || !cur.info.available)) byName.set(b.name, { info: b, workers: [w.id] });
        else if (b.available && cur) cur.workers.push(w.id);
        else if (!cur) byName.set(b.name, { info: b, workers: [] });
      }
    }
    const out: BackendInfo[] = [];
    for (const name of ['tensorrt', 'simulated'] as const) {
      const e = byName.get(name);
      if (!e) {
        out.push({ name, available: false, reason: live.length ? 'no live farm worker offers it' : 'no live farm worker' });
        continue;
      }
      out.push({ ...e.info, detail: { ...e.info.detail, farmWorkers: e.workers.join(', ') } });
    }
    return out;
  }

  inspectModel(modelPath: string): Promise<ModelSummary> {
    if (typeof modelPath !== 'string' || !modelPath) return Promise.reject(new ServiceError('bad_input', 'modelPath is required'));
    return inspectModel(modelPath);
  }

  async startBuild(input: FarmBuildInput): Promise<BuildRecord> {
    if (input.targets !== undefined) {
      throw new ServiceError('bad_input', 'targets: a matrix creates several builds; send it to the matrix endpoint (startMatrix)');
    }
    return this.enqueue(input, await this.check0(input), input.target === undefined ? {} : this.target(input.target, 'target'));
  }

  /** One build per target; returns them in the targets' order. */
  async startMatrix(input: Omit<StartBuildInput, 'target'> & { targets: Array<Record<string, string>> }): Promise<BuildRecord[]> {
    const targets = input.targets;
    if (!Array.isArray(targets) || targets.length === 0) throw new ServiceError('bad_input', 'targets must be a non-empty array of {label: value} objects');
    if (targets.length > 256) throw new ServiceError('bad_input', `targets: at most 256 per matrix, got ${targets.length}`);
    if ((input as FarmBuildInput).target !== undefined) throw new ServiceError('bad_input', 'give either target or targets, not both');
    if (input.outputPath !== undefined) throw new ServiceError('bad_input', 'outputPath: a matrix writes one engine per target; leave outputPath out (engines go to the artifact folder)');
    const checked = targets.map((t, i) => this.target(t, `targets[${i}]`));
    const summary = await this.check0(input as FarmBuildInput);
    const out: BuildRecord[] = [];
    for (const t of checked) out.push(await this.enqueue(input as FarmBuildInput, summary, t));
    return out;
  }

  private target(t: unknown, what: string): Labels {
    try {
      return checkTarget(t, what);
    } catch (e) {
      throw new ServiceError('bad_input', (e as Error).message);
    }
  }

  /** What serve can check before queueing: the worker checks the rest (backend, its paths). */
  private async check0(input: FarmBuildInput): Promise<ModelSummary> {
    if (this.closing) throw new ServiceError('conflict', 'the build service is shutting down');
    // Fail at once rather than hold the request until Redis is back.
    if (this.redis.status !== 'ready') throw new ServiceError('conflict', `the build farm's Redis at ${safeUrl(this.opts.url)} is unavailable (reconnecting); try again shortly`);
    const parsed = BuildOptions.safeParse(input.options ?? {});
    if (!parsed.success) throw new ServiceError('bad_input', `invalid build options: ${describeZodError(parsed.error)}`);
    const budget = input.timeBudgetSeconds;
    if (budget !== undefined && !(typeof budget === 'number' && Number.isFinite(budget) && budget > 0)) {
      throw new ServiceError('bad_input', `timeBudgetSeconds must be a positive number of seconds, got ${String(budget)}`);
    }
    const retries = input.retries ?? 0;
    if (!Number.isInteger(retries) || retries < 0 || retries > 10) throw new ServiceError('bad_input', `retries must be an integer from 0 to 10, got ${String(retries)}`);
    if (typeof input.modelPath !== 'string' || !input.modelPath) throw new ServiceError('bad_input', 'modelPath is required');
    const { summary } = await readModel(path.resolve(input.modelPath), { requireExternalData: true });
    checkShapes(summary, parsed.data.shapes);
    if (input.outputPath !== undefined) checkOutputPath(path.resolve(input.outputPath), path.resolve(input.modelPath), summary);
    return summary;
  }

  private async enqueue(input: FarmBuildInput, summary: ModelSummary, target: Labels): Promise<BuildRecord> {
    const id = await this.store.nextBuildId();
    const options = BuildOptions.parse(input.options ?? {});
    const request: FarmRequest = {
      input: {
        modelPath: path.resolve(input.modelPath),
        outputPath: input.outputPath === undefined ? undefined : path.resolve(input.outputPath),
        options: input.options,
        timeBudgetSeconds: input.timeBudgetSeconds,
      },
      target,
      retries: input.retries ?? 0,
    };
    const record: FarmRecord = {
      id,
      state: 'queued',
      modelPath: request.input.modelPath,
      outputPath: request.input.outputPath,
      options,
      queuedAt: new Date().toISOString(),
      model: summary,
      lastSeq: -1,
      engineAvailable: false,
      farm: { target, attempt: 1, retries: request.retries },
    };
    await this.store.createBuild(record, request);
    const b = this.builds.get(id) ?? this.mirror(record);
    await this.addJob(id, target, 1);
    await this.noteWaiting(b, await this.store.liveWorkers().catch(() => this.live));
    return b.record();
  }

  private async addJob(id: string, target: Labels, attempt: number): Promise<void> {
    const name = poolQueueName(target);
    await this.store.registerPool(name, canonicalTarget(target));
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.redis });
      q.on('error', () => undefined);
      this.queues.set(name, q);
    }
    // attempts: 1 — BullMQ never re-runs a build by itself; retries after a lost worker are
    // serve's decision (the request's `retries`), recorded in the build's stream.
    await q.add('build', { buildId: id }, { jobId: `${id}-a${attempt}`, attempts: 1, removeOnComplete: true, removeOnFail: 1000 });
    // Wakes idle workers now; one that misses it finds the job at its next look.
    await this.redis.publish(keys.queuedChannel, name).catch(() => undefined);
  }

  /**
   * The farm view from this serve's mirrors of every build in the history (so it matches what the
   * builds' streams say), the live workers and the pools, as GET /api/farm and its stream give it.
   */
  async farmStatus(): Promise<FarmStatus> {
    const [live, pools] = await Promise.all([this.store.liveWorkers(), this.store.pools()]);
    this.live = live;
    const builds = [...this.builds.values()].map((b) => ({ id: b.id, rec: b.record() }));
    return composeFarmStatus(builds, live, Object.values(pools));
  }

  /** The farm view now (at once) and at every change (GET /api/farm/events). */
  subscribeFarm(cb: FarmStatusListener): () => void {
    return this.farmFeed.subscribe(cb);
  }

  getView(id: string): BuildViewSnapshot | undefined {
    return this.builds.get(id)?.viewSnapshot();
  }

  getBuild(id: string): BuildRecord | undefined {
    return this.builds.get(id)?.record();
  }

  listBuilds(): BuildRecord[] {
    return [...this.builds.values()].map((b) => b.record());
  }

  cancelBuild(id: string, reason: CancelReason = 'user'): boolean {
    const b = this.builds.get(id);
    if (!b || b.finished) return false;
    // Farm builds belong to the farm, not to this serve process: serve shutting down (even a
    // second Ctrl-C) leaves them running; the next serve follows them from Redis.
    if (reason === 'shutdown') return false;
    b.cancelRequests++;
    if (b.state === 'running') b.setState('cancelling');
    void this.cancelRemote(b, reason).catch((e) => this.log(`serve: cancel of ${id} could not reach Redis: ${(e as Error).message}`));
    return true;
  }

  private async cancelRemote(b: RemoteBuild, reason: CancelReason): Promise<void> {
    const owner = `${SERVE_OWNER}-cancel`;
    // One round trip: claimed if still queued, else counted and published to the worker running it
    // (it cancels at the next step boundary; a second request kills its build worker, as locally).
    if ((await this.store.requestStop(b.id, owner, reason)) === 0) {
      // Still queued: no worker has it, so it ends here (the worker that pops the job skips it).
      const base = { v: PROTOCOL_VERSION, buildId: b.id, seq: 0, t: 0 } as const;
      await this.finishAs(b, owner, 'cancelled', undefined, [{ ...base, type: 'build.cancelling', requestedAt: 0, reason }]);
      await this.queues.get(poolQueueName(b.farm.target))?.remove(`${b.id}-a${b.farm.attempt}`).catch(() => undefined);
    }
  }

  subscribe(id: string, onEvents: (events: BuildEvent[]) => unknown, opts: SubscribeOpts = {}): Subscription {
    const b = this.builds.get(id);
    if (!b) throw new ServiceError('not_found', `unknown build ${id}`);
    return b.subscribe(onEvents, opts);
  }

  waitForResult(id: string): Promise<BuildFinished> {
    const b = this.builds.get(id);
    if (!b) return Promise.reject(new ServiceError('not_found', `unknown build ${id}`));
    return b.waitForResult();
  }

  enginePath(id: string): string | undefined {
    const rec = this.builds.get(id)?.record();
    if (rec?.outcome?.status !== 'succeeded') return undefined;
    return this.artifacts.locateEngine(rec.outcome.outputPath ?? rec.outputPath);
  }

  /** Farm builds belong to the farm: serve stops following them, it does not cancel them. */
  async shutdown(): Promise<void> {
    this.closing = true;
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.farmFeed.close();
    this.farmChanges.disconnect();
    this.reader.disconnect();
    await this.readerDone;
    await this.redis.del(this.wakeKey).catch(() => undefined);
    for (const q of this.queues.values()) await q.close().catch(() => undefined);
    this.redis.disconnect();
  }

  // ──────────────────────────────── following builds ───────────────────────────────

  /**
   * Tails the streams of unfinished builds: one XREAD, blocking until an entry arrives in any of
   * them, from each one's last seq. It also reads this serve's wake stream, where `wakeReader`
   * adds an entry when a build joins the set, so a new build's stream is read from its first
   * event on rather than after the read in progress gives up. Nothing on this path waits out a
   * fixed interval: the block's limit is only a safety net (a wake lost to a Redis restart).
   */
  private async readLoop(): Promise<void> {
    while (!this.closing) {
      const active = [...this.builds.values()].filter((b) => !b.finished);
      const streams = [this.wakeKey, ...active.map((b) => keys.events(b.id))];
      const ids = [this.wakeSeen, ...active.map((b) => `0-${b.lastSeq + 1}`)];
      let res: Array<[string, Array<[string, string[]]>]> | null;
      try {
        res = (await this.reader.xread('COUNT', 2000, 'BLOCK', this.opts.readBlockLimitMs ?? READ_BLOCK_LIMIT_MS, 'STREAMS', ...streams, ...ids)) as typeof res;
      } catch {
        if (this.closing) return;
        // Redis away: the connection line said so; ioredis reconnects and the next read resumes.
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      for (const [key, entries] of res ?? []) {
        if (key === this.wakeKey) {
          this.wakeSeen = entries[entries.length - 1][0];
          continue;
        }
        const b = this.builds.get(key.slice(keys.events('').length));
        if (!b) continue;
        await this.feed(b, entries.map(([, f]) => parseEntry(f)).filter((e): e is BuildEvent => e !== undefined)).catch(() => undefined);
      }
    }
  }

  /**
   * Makes the blocked XREAD return and start over with the current set of builds. An entry in the
   * wake stream, read from the last one seen, cannot be missed: written before the XREAD reaches
   * Redis, it is returned at once.
   */
  private wakeReader(): void {
    if (this.closing || !this.readerDone) return;
    void this.redis
      .multi()
      .xadd(this.wakeKey, 'MAXLEN', '~', 16, '*', 'w', '1')
      .pexpire(this.wakeKey, WAKE_KEY_TTL_MS)
      .exec()
      .catch(() => undefined);
  }

  /** Periodic: queued builds no live worker can take say so; running builds of a lost worker end. */
  private async check(): Promise<void> {
    if (this.checking || this.closing || this.redis.status !== 'ready') return;
    this.checking = true;
    try {
      const before = liveKey(this.live);
      this.live = await this.store.liveWorkers();
      // A worker gone silent sends nothing: its heartbeat key expiring is seen here.
      if (liveKey(this.live) !== before) this.farmFeed.changed();
      await this.followHistory();
      for (const b of this.builds.values()) {
        if (b.finished) continue;
        if (b.state === 'queued') await this.noteWaiting(b, this.live);
        // Queued ones too: a worker may have claimed one and not started it yet (waiting for a
        // timing-cache lock), and it can die there as well.
        await this.checkOwner(b);
      }
    } catch {
      // Redis went away mid-check: the connection line said so; the next check retries.
    } finally {
      this.checking = false;
    }
  }

  /**
   * Builds started through another serve on the same Redis appear here too, and builds trimmed
   * from the history in Redis leave this process's memory (it stays bounded like the history).
   */
  private async followHistory(): Promise<void> {
    const ids = await this.store.historyIds();
    const known = new Set(ids);
    for (const id of ids) {
      if (this.builds.has(id)) continue;
      const rec = await this.loadRecord(id);
      if (!rec) continue;
      const b = this.mirror(rec);
      if (!b.finished) await this.feed(b, await this.store.eventsAfter(id, rec.lastSeq));
    }
    for (const [id, b] of this.builds) {
      if (b.finished && !known.has(id)) {
        this.builds.delete(id);
        this.farmFeed.changed();
      }
    }
  }

  private async noteWaiting(b: RemoteBuild, live: WorkerInfo[]): Promise<void> {
    const target = b.farm.target;
    const ok = live.some((w) => matches(w.labels, target));
    const reason = ok
      ? undefined
      : `no live worker matches target ${formatLabels(target)}` +
        (live.length ? ` (live: ${live.map((w) => `${w.id} ${formatLabels(w.labels)}`).join('; ')})` : ' (no live workers)') +
        '; the build stays queued until one does';
    if (reason === b.farm.waiting) return;
    b.setFarm({ waiting: reason });
    const message = reason ?? `a live worker now matches target ${formatLabels(target)}`;
    if (reason || b.lastSeq >= 0) await this.appendAs(b, '', [logEvent(b.id, reason ? 'warning' : 'info', message)]);
  }

  private async checkOwner(b: RemoteBuild): Promise<void> {
    // Right after a reconnect, heartbeat keys may have expired during the outage: give workers
    // time to reconnect themselves (their retry timers are not in step with ours) and beat again
    // before calling any of them lost.
    const ttl = this.opts.heartbeatTtlMs ?? 10_000;
    if (Date.now() - this.readySince < ttl + 2 * RECONNECT_MAX_MS + 500) return;
    const fields = await this.store.getBuildFields(b.id);
    if (fields.state === undefined) {
      // Redis no longer has the build at all: it restarted without persistence (or was flushed).
      // Nobody can finish it in Redis any more; end it here so no client waits forever.
      this.log(`trt-build-studio serve: build ${b.id} is gone from Redis (restarted without persistence?); ending it as crashed`);
      const rec = b.record();
      const t = rec.startedAt ? Date.now() - Date.parse(rec.startedAt) : 0;
      b.ingest([
        {
          v: PROTOCOL_VERSION,
          buildId: b.id,
          seq: b.lastSeq + 1,
          t,
          type: 'build.finished',
          status: 'crashed',
          durationMs: t,
          error: 'the build farm lost this build: Redis restarted without its data (turn on appendonly)',
        },
      ]);
      return;
    }
    const owner = fields.owner ?? '';
    if (!owner || owner.startsWith(SERVE_OWNER)) return;
    const workerId = owner.slice(0, owner.lastIndexOf('/'));
    if (b.state === 'queued' && fields.state === 'running') {
      b.setState('running');
      b.setFarm({ waiting: undefined });
    }
    const runs = await this.store.workerRuns(workerId, b.id);
    if (runs === 'yes') return;
    const newOwner = `${SERVE_OWNER}-lost-${Date.now()}`;
    if (!(await this.store.takeover(b.id, owner, newOwner))) return;
    const attempt = Number(fields.attempts ?? b.farm.attempt);
    const why =
      runs === 'gone'
        ? `worker lost: ${workerId} stopped sending heartbeats (none for ${ttl} ms)`
        : `worker lost: ${workerId} restarted and its new process does not run this build`;
    this.log(`serve: build ${b.id}: ${why}`);
    const closeOpen = b.openPhases().map(
      (id) => ({ v: PROTOCOL_VERSION, buildId: b.id, seq: 0, t: 0, type: 'phase.finish', id, stepsDone: 0, early: true }) as BuildEvent,
    );
    if (attempt <= b.farm.retries) {
      await this.appendAs(b, newOwner, [...closeOpen, logEvent(b.id, 'warning', `${why}; retrying (attempt ${attempt + 1} of ${b.farm.retries + 1})`)]);
      await this.store.requeue(b.id, newOwner);
      b.setState('queued');
      b.setFarm({ worker: undefined });
      await this.addJob(b.id, b.farm.target, attempt + 1);
      return;
    }
    await this.finishAs(b, newOwner, 'crashed', 'worker lost', [...closeOpen, logEvent(b.id, 'error', why)]);
  }

  /** `owner` '' appends whoever owns the build (notes while queued); else only while `owner` does. */
  private async appendAs(b: RemoteBuild, owner: string, events: BuildEvent[]): Promise<BuildEvent[] | undefined> {
    const stored = await this.store.append(b.id, events, owner);
    // The reader delivers them too; ingesting now keeps the record current for the caller.
    if (stored) b.ingest(stored);
    return stored;
  }

  /** Ends a build serve owns (cancelled while queued, worker lost), in the stream and the record. */
  private async finishAs(b: RemoteBuild, owner: string, status: 'cancelled' | 'crashed', error: string | undefined, before: BuildEvent[]): Promise<void> {
    const rec = b.record();
    const startMs = rec.startedAt ? Date.parse(rec.startedAt) : Date.now();
    const finished = {
      v: PROTOCOL_VERSION,
      buildId: b.id,
      seq: 0,
      t: Date.now() - startMs,
      type: 'build.finished',
      status,
      durationMs: rec.startedAt ? Date.now() - startMs : 0,
      ...(error ? { error } : {}),
    } as BuildEvent;
    const stored = await this.appendAs(b, owner, [...before, finished]);
    if (!stored) return;
    // With its view, like the records workers write: a serve that loads this record later shows
    // the finished build's tree, logs and ending, not an empty tree still "queued".
    await this.store.putRecord({ ...b.record(), view: await this.wholeView(b) }, owner);
    // Builds serve ends itself change the farm view without any worker beating: say so.
    await this.redis.publish(keys.farmChannel, b.id).catch(() => undefined);
  }

  /** The mirror's view, or (when this serve did not see the build from its start) one rebuilt from Redis. */
  private async wholeView(b: RemoteBuild): Promise<BuildViewSnapshot> {
    if (b.viewIsWhole) return b.viewSnapshot();
    return viewFromStream(this.store, b.record()).catch(() => b.viewSnapshot());
  }

  /** A record from Redis, with a view rebuilt from the stream if it ended without one. */
  private async loadRecord(id: string): Promise<FarmRecord | undefined> {
    const rec = await this.store.getRecord(id);
    if (!rec || rec.view || !FINAL_STATES.has(rec.state)) return rec;
    return { ...rec, view: await viewFromStream(this.store, rec) };
  }
}

/** Which workers are live and what they run: a change here changes the farm view. */
function liveKey(live: WorkerInfo[]): string {
  return live
    .map((w) => `${w.id}:${w.running.join(',')}`)
    .sort()
    .join(' ');
}

function logEvent(buildId: string, severity: 'info' | 'warning' | 'error', message: string): BuildEvent {
  return { v: PROTOCOL_VERSION, buildId, seq: 0, t: 0, type: 'log', severity, message } as BuildEvent;
}
