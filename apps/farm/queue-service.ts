// BuildServiceApi over Redis + BullMQ (`serve --queue redis://...`): builds are queued in the
// pool of their target and run by farm workers on other machines; serve mirrors each build from
// its Redis stream so every surface (HTTP/SSE, CLI, MCP, UI) sees the same live tree, Stop and
// history as with local builds. State lives in Redis, so a restarted serve picks up where it was.
// This file is the queue and the API: requests into the pools (targets, matrices, retries as
// jobs), cancel, and the periodic check. Serve's copy of each build is build-mirror.ts; who owns
// a build, and what happens when its worker is lost, is build-ownership.ts.
import type { FarmStatus } from '../shared/farm-status.js';
import { composeFarmStatus } from './farm-status.js';
import { FarmStatusFeed, type FarmStatusListener } from './farm-status-feed.js';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ServiceError, type BuildServiceApi, type FarmServiceCalls, type StartBuildInput, type StartMatrixInput, type SubscribeOpts, type Subscription } from '../service/api.js';
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
import { DEFAULT_LIMITS, FarmStore, type FarmRecord, type FarmRequest, type StoreLimits, type WorkerInfo } from './farm-store.js';
import { buildJob, canonicalTarget, keys, poolQueueName } from './keys.js';
import { checkTarget, type Labels } from './labels.js';
import { connectRedis, safeUrl, watchRedis, type LogLine } from './redis.js';
import { BuildMirror } from './build-mirror.js';
import type { RemoteBuild } from './remote-build.js';
import { BuildOwnership, SERVE_OWNER } from './build-ownership.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineRecord } from '../service/engine-identity.js';
import type { BuildViewSnapshot } from '../shared/build-view.js';

/** A build request as the farm takes it: the local request (with target, retries) or a matrix. */
export type FarmBuildInput = StartBuildInput & { targets?: Array<Record<string, string>> };

export interface QueueServiceOptions {
  url: string;
  artifacts?: ArtifactStore;
  log?: LogLine;
  /** The command whose lines these are (default `trt-build-studio serve`; a `build --queue` says build). */
  who?: string;
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

export class QueueBuildService implements BuildServiceApi, FarmServiceCalls {
  private readonly log: LogLine;
  /** A line of this service's own, after the command's name. */
  private readonly say: LogLine;
  private readonly redis: Redis;
  private readonly reader: Redis;
  private readonly store: FarmStore;
  private readonly artifacts: ArtifactStore;
  /** Serve's copy of every farm build (build-mirror.ts). */
  private readonly builds: BuildMirror;
  /** Lost workers, builds serve ends itself, why a queued build waits (build-ownership.ts). */
  private readonly ownership: BuildOwnership;
  private readonly queues = new Map<string, Queue>();
  private closing = false;
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
    const who = opts.who ?? 'trt-build-studio serve';
    this.say = (l) => this.log(`${who}: ${l}`);
    this.redis = connectRedis(opts.url, who, this.log);
    this.reader = this.redis.duplicate();
    watchRedis(this.reader, opts.url, who, this.log);
    this.redis.on('ready', () => (this.readySince = Date.now()));
    this.farmChanges = this.redis.duplicate();
    watchRedis(this.farmChanges, opts.url, who, this.log);
    this.farmChanges.on('message', () => this.farmFeed.changed());
    this.farmChanges.on('ready', () => {
      void this.farmChanges.subscribe(keys.farmChannel).catch(() => undefined);
      this.farmFeed.changed();
    });
    this.store = new FarmStore(this.redis, opts.limits ?? DEFAULT_LIMITS, this.log);
    this.artifacts = opts.artifacts ?? new LocalPathArtifacts();
    this.builds = new BuildMirror(this.store, this.reader, this.redis, {
      retainEvents: opts.retainEvents,
      log: this.say,
      readBlockLimitMs: opts.readBlockLimitMs,
      onChange: () => this.farmFeed.changed(),
    });
    this.ownership = new BuildOwnership(this.store, this.builds, {
      log: this.say,
      heartbeatTtlMs: opts.heartbeatTtlMs,
      readySince: () => this.readySince,
      addJob: (id, target, attempt) => this.addJob(id, target, attempt),
      farmChanged: async (id) => {
        await this.redis.publish(keys.farmChannel, id).catch(() => undefined);
      },
    });
  }

  /** Connects, loads the history kept in Redis and starts following running builds. */
  static async create(opts: QueueServiceOptions): Promise<QueueBuildService> {
    const s = new QueueBuildService(opts);
    await s.builds.loadHistory();
    s.builds.start();
    s.checkTimer = setInterval(() => void s.check(), opts.checkMs ?? 1000);
    return s;
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
  async startMatrix(input: StartMatrixInput): Promise<BuildRecord[]> {
    const targets = input.targets;
    if (!Array.isArray(targets) || targets.length === 0) throw new ServiceError('bad_input', 'targets must be a non-empty array of {label: value} objects');
    if (targets.length > 256) throw new ServiceError('bad_input', `targets: at most 256 per matrix, got ${targets.length}`);
    if ((input as FarmBuildInput).target !== undefined) throw new ServiceError('bad_input', 'give either target or targets, not both');
    if (input.outputPath !== undefined)
      throw new ServiceError('bad_input', 'outputPath: a matrix writes one engine per target; leave outputPath out (engines go to the artifact folder)');
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
    const b = this.builds.get(id) ?? this.builds.mirror(record);
    await this.addJob(id, target, 1);
    await this.ownership.noteWaiting(b, await this.store.liveWorkers().catch(() => this.live));
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
    const job = buildJob(id, attempt);
    await q.add(job.name, job.data, job.opts);
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
    const builds = [...this.builds.all()].map((b) => ({ id: b.id, rec: b.record() }));
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
    return [...this.builds.all()].map((b) => b.record());
  }

  cancelBuild(id: string, reason: CancelReason = 'user'): boolean {
    const b = this.builds.get(id);
    if (!b || b.finished) return false;
    // Farm builds belong to the farm, not to this serve process: serve shutting down (even a
    // second Ctrl-C) leaves them running; the next serve follows them from Redis.
    if (reason === 'shutdown') return false;
    b.cancelRequests++;
    b.requestStop();
    void this.cancelRemote(b, reason).catch((e) => this.say(`cancel of ${id} could not reach Redis: ${(e as Error).message}`));
    return true;
  }

  private async cancelRemote(b: RemoteBuild, reason: CancelReason): Promise<void> {
    const owner = `${SERVE_OWNER}-cancel`;
    // One round trip: claimed if still queued, else counted and published to the worker running it
    // (it cancels at the next step boundary; a second request kills its build worker, as locally).
    if ((await this.store.requestStop(b.id, owner, reason)) === 0) {
      // Still queued: no worker has it, so it ends here (the worker that pops the job skips it).
      const base = { v: PROTOCOL_VERSION, buildId: b.id, seq: 0, t: 0 } as const;
      await this.ownership.finishAs(b, owner, 'cancelled', undefined, [{ ...base, type: 'build.cancelling', requestedAt: 0, reason }]);
      await this.queues
        .get(poolQueueName(b.farm.target))
        ?.remove(buildJob(b.id, b.farm.attempt).opts.jobId)
        .catch(() => undefined);
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

  /**
   * The engine of a succeeded build: the path its worker recorded, only where the artifact store
   * offers it (SharedFolderArtifacts: a regular file in its engines folder) and only while it is
   * the file the worker wrote (inode, size, mtime from the record; `GET /api/builds/{id}/engine`
   * checks the file it opened against engineRecord, as for local builds).
   */
  enginePath(id: string): string | undefined {
    const rec = this.builds.get(id)?.record() as FarmRecord | undefined;
    if (rec?.outcome?.status !== 'succeeded') return undefined;
    const file = this.artifacts.locateEngine(rec.outcome.outputPath ?? rec.outputPath);
    if (!file || !rec.farm?.engine) return undefined;
    return this.engineRecord(id) ? file : undefined;
  }

  /** What the worker recorded of the engine it wrote; the device is this machine's view of the path. */
  engineRecord(id: string): EngineRecord | undefined {
    const rec = this.builds.get(id)?.record() as FarmRecord | undefined;
    const file = rec?.outcome?.status === 'succeeded' ? this.artifacts.locateEngine(rec.outcome.outputPath ?? rec.outputPath) : undefined;
    const e = rec?.farm?.engine;
    if (!file || !e) return undefined;
    try {
      const st = fs.lstatSync(file);
      const ok = st.isFile() && st.ino === e.ino && st.size === e.size && st.mtimeMs === e.mtimeMs;
      return ok ? { dev: st.dev, ino: e.ino, size: e.size, mtimeMs: e.mtimeMs } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Farm builds belong to the farm: serve stops following them, it does not cancel them. */
  async shutdown(): Promise<void> {
    this.closing = true;
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.farmFeed.close();
    this.farmChanges.disconnect();
    await this.builds.stop();
    for (const q of this.queues.values()) await q.close().catch(() => undefined);
    this.redis.disconnect();
  }

  // ─────────────────────────────────── the check ───────────────────────────────────

  /** Periodic: queued builds no live worker can take say so; running builds of a lost worker end. */
  private async check(): Promise<void> {
    if (this.checking || this.closing || this.redis.status !== 'ready') return;
    this.checking = true;
    try {
      const before = liveKey(this.live);
      this.live = await this.store.liveWorkers();
      // A worker gone silent sends nothing: its heartbeat key expiring is seen here.
      if (liveKey(this.live) !== before) this.farmFeed.changed();
      await this.builds.followHistory();
      for (const b of this.builds.all()) {
        if (b.finished) continue;
        if (b.state === 'queued') await this.ownership.noteWaiting(b, this.live);
        // Queued ones too: a worker may have claimed one and not started it yet (waiting for a
        // timing-cache lock), and it can die there as well.
        await this.ownership.checkOwner(b);
      }
    } catch {
      // Redis went away mid-check: the connection line said so; the next check retries.
    } finally {
      this.checking = false;
    }
  }
}

/** Which workers are live and what they run: a change here changes the farm view. */
function liveKey(live: WorkerInfo[]): string {
  return live
    .map((w) => `${w.id}:${w.running.join(',')}`)
    .sort()
    .join(' ');
}
