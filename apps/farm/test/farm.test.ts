// The build farm against a real redis-server and real worker processes (the CLI's `worker`
// command from dist/, each running builds in its own isolated build worker process), with the
// simulated backend. Serve is the QueueBuildService in this process, as `serve --queue` uses it.
import type { ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { EngineManifest } from '../../shared/engine-manifest.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { SharedFolderArtifacts } from '../artifacts.js';
import type { FarmRecord } from '../farm-store.js';
import { keys } from '../keys.js';
import { QueueBuildService } from '../queue-service.js';
import { collect as collectCli, spawnCli } from '../../../test/support/cli.js';
import { startBuildTool } from '../../mcp/build-tool.js';
import { CancelReasons } from '../../surface/cancel-reasons.js';
import { runMatrixTool } from '../../mcp/matrix-tool.js';
import { createBuildService } from '../../service/build-service.js';
import { killProc, LOSS_HEARTBEAT, rmDir, startRedis, startWorker, stopAll, until, type RedisServer, type WorkerProc } from './harness.js';

const sim = (simDuration: number) => ({ backend: 'simulated' as const, simDuration, simSeed: 3 });

let dir: string;
let model: string;
let redis: RedisServer;
let artifacts: SharedFolderArtifacts;
let wA: WorkerProc;
let wB: WorkerProc;
const services: QueueBuildService[] = [];

/**
 * What two views of one stream must agree on: the rows and open phases. Not the number of events
 * each received nor the absolute activity counters (steps may be coalesced on one side).
 */
function sameTree(view: BuildViewSnapshot) {
  const { phaseEvents: _n, tick: _t, open, ...rows } = view.rows;
  return { ...rows, open: [...open].sort((a, b) => a.activity - b.activity).map(({ activity: _a, ...o }) => o) };
}

/** Keys of a simulated timing cache file ("TBSSIMTC", version, count, 32-byte entries, checksum). */
function simCacheKeys(file: string): Set<string> {
  const b = fs.readFileSync(file);
  expect(b.subarray(0, 8).toString('latin1')).toBe('TBSSIMTC');
  const n = b.readUInt32LE(12);
  const keys = new Set<string>();
  for (let i = 0; i < n; i++) keys.add(b.subarray(16 + i * 32, 32 + i * 32).toString('hex'));
  return keys;
}

/** Pending files beside a cache ("<cache>.pending-<n>-<m>"): entries every load reads. */
function pendingFiles(cache: string): string[] {
  const base = path.basename(cache);
  return fs
    .readdirSync(path.dirname(cache))
    .filter((n) => n.startsWith(`${base}.pending-`) && /^\d+-\d+$/.test(n.slice(base.length + '.pending-'.length)))
    .map((n) => path.join(path.dirname(cache), n));
}

/** The timing-cache keys a simulated build of each model measures from an empty cache, run here. */
async function measuredAlone(models: string[]): Promise<Array<Set<string>>> {
  const local = createBuildService();
  try {
    const out: Array<Set<string>> = [];
    for (const [i, m] of models.entries()) {
      const cache = path.join(dir, `alone-${i}.cache`);
      const rec = await local.startBuild({ modelPath: m, outputPath: path.join(dir, `alone-${i}.engine`), options: { ...sim(0.2), timingCache: cache } });
      expect((await local.waitForResult(rec.id)).status).toBe('succeeded');
      out.push(simCacheKeys(cache));
    }
    return out;
  } finally {
    await local.shutdown();
  }
}

/** What a build loading the shared cache starts from: the file's keys and its pending files'. */
function sharedCacheKeys(cache: string): Set<string> {
  const keys = simCacheKeys(cache);
  for (const p of pendingFiles(cache)) for (const k of simCacheKeys(p)) keys.add(k);
  return keys;
}

/** Distinct phase rows serve's view of a build has so far (0 for an unknown build). */
function rowCount(svc: QueueBuildService, id: string): number {
  return svc.getView(id)?.rows.rows.length ?? 0;
}

async function serve(): Promise<QueueBuildService> {
  const s = await QueueBuildService.create({ url: redis.url, artifacts, checkMs: 250, heartbeatTtlMs: 1500, log: () => undefined });
  services.push(s);
  return s;
}

/** Every event of a build through subscribe, from the snapshot on, until build.finished. */
function collect(svc: QueueBuildService, id: string, afterSeq?: number): { snapshot: FarmRecord; events: BuildEvent[]; done: Promise<void> } {
  const events: BuildEvent[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const sub = svc.subscribe(
    id,
    (evs) => {
      events.push(...evs);
      if (evs.some((e) => e.type === 'build.finished')) resolve();
    },
    afterSeq === undefined ? undefined : { afterSeq },
  );
  if ((sub.snapshot as FarmRecord).outcome) resolve();
  return { snapshot: sub.snapshot as FarmRecord, events, done };
}

/** The base URL a `serve` child prints on its first stdout line. */
function serveUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^(http:\/\/127\.0\.0\.1:\d+)\//m.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error('serve exited before printing its URL')));
  });
}

beforeAll(async () => {
  dir = tempDir('tbs-farm-');
  fs.mkdirSync(path.join(dir, 'redis'));
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 8 });
  artifacts = new SharedFolderArtifacts(path.join(dir, 'artifacts'));
  artifacts.ensure();
  redis = await startRedis(path.join(dir, 'redis'));
  const art = ['--artifacts', artifacts.root];
  [wA, wB] = await Promise.all([startWorker(redis.url, 'wA', 'gpu=A100,trt=10.16.0', art), startWorker(redis.url, 'wB', 'gpu=L4,trt=10.16.0', art)]);
}, 60_000);

// Each serve polls Redis; the ones a test made go away with it.
afterEach(async () => {
  for (const s of services.splice(0)) await s.shutdown().catch(() => undefined);
});

afterAll(async () => {
  for (const s of services) await s.shutdown().catch(() => undefined);
  await stopAll();
  if (dir) rmDir(dir);
});

describe('build farm', () => {
  it('routes targeted builds to the worker whose labels match, with the same event contract', async () => {
    const svc = await serve();
    const a = await svc.startBuild({ modelPath: model, options: sim(0.6), target: { gpu: 'A100' } });
    const b = await svc.startBuild({ modelPath: model, options: sim(0.6), target: { gpu: 'L4' } });
    const ca = collect(svc, a.id);
    const cb = collect(svc, b.id);
    await Promise.all([ca.done, cb.done]);
    for (const [c, worker, gpu] of [
      [ca, 'wA', 'A100'],
      [cb, 'wB', 'L4'],
    ] as const) {
      const started = c.events.find((e) => e.type === 'build.started');
      expect(started?.type === 'build.started' && started.worker).toEqual({ id: worker, labels: { gpu, trt: '10.16.0' } });
      const seqs = c.events.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(c.events.at(-1)?.type).toBe('build.finished');
    }
    const ra = svc.getBuild(a.id) as FarmRecord;
    expect(ra.state, ra.outcome?.error).toBe('succeeded');
    expect(rowCount(svc, a.id)).toBeGreaterThan(3);
    expect(ra.farm.worker?.id).toBe('wA');
    // The engine went to the shared folder and serve hands it out; the shared timing cache of
    // (A100, 10.16.0) was written there too.
    const engine = svc.enginePath(a.id);
    expect(engine && engine.startsWith(artifacts.root)).toBe(true);
    expect(fs.readFileSync(engine!, 'utf8')).toMatch(/SIMULATED ENGINE/);
    expect(fs.existsSync(artifacts.timingCacheFor({ gpu: 'A100', trt: '10.16.0' })!)).toBe(true);
    // Its manifest beside it, written on the farm machine before build.finished, describes those bytes.
    const fin = ca.events.at(-1);
    expect(fin?.type === 'build.finished' && fin.manifestPath).toBe(`${engine}.manifest.json`);
    const manifest = EngineManifest.parse(JSON.parse(fs.readFileSync(`${engine}.manifest.json`, 'utf8')));
    expect(manifest.engine.sha256).toBe(crypto.createHash('sha256').update(fs.readFileSync(engine!)).digest('hex'));
    expect(manifest.buildId).not.toBe('');
    // Resume after a seq: only later events, in order.
    const mid = ca.events[Math.floor(ca.events.length / 2)].seq;
    const replayed: BuildEvent[] = [];
    svc.subscribe(a.id, (evs) => replayed.push(...evs), { afterSeq: mid });
    await new Promise((r) => setTimeout(r, 20));
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed.every((e) => e.seq > mid)).toBe(true);
  });

  it('a reuse matrix builds only the targets whose engines are stale, from the shared engine store', async () => {
    const svc = await serve();
    const opts = { ...sim(0.4), simSeed: 77, reuse: true };
    const matrix = async (options: typeof opts & { optLevel?: number }, targets: Array<{ gpu: string }>) => {
      const recs = await svc.startMatrix({ modelPath: model, options, targets });
      return Promise.all(recs.map((r) => svc.waitForResult(r.id)));
    };
    // A100 only: built, kept in the shared store.
    const [a1] = await matrix(opts, [{ gpu: 'A100' }]);
    expect([a1.status, a1.reused]).toEqual(['succeeded', undefined]);
    // A100 and L4: A100's engine is up to date (reused, the same bytes), L4 has none yet (built).
    const [a2, l2] = await matrix(opts, [{ gpu: 'A100' }, { gpu: 'L4' }]);
    expect(a2).toMatchObject({ status: 'succeeded', reused: { fromBuildId: expect.any(String) } });
    expect(fs.readFileSync(a2.outputPath!).equals(fs.readFileSync(a1.outputPath!))).toBe(true);
    expect([l2.status, l2.reused]).toEqual(['succeeded', undefined]);
    // The shared store holds one engine per GPU the workers stand for.
    expect(fs.readdirSync(artifacts.engineStoreDir()).filter((n) => /^[0-9a-f]{64}$/.test(n))).toHaveLength(2);
    // The same matrix again: nothing is stale, nothing builds.
    const again = await matrix(opts, [{ gpu: 'A100' }, { gpu: 'L4' }]);
    expect(again.map((f) => [f.status, !!f.reused])).toEqual([
      ['succeeded', true],
      ['succeeded', true],
    ]);
    expect(fs.readFileSync(again[1].outputPath!).equals(fs.readFileSync(l2.outputPath!))).toBe(true);
    // A changed option makes every target's engine stale: both build.
    const changed = await matrix({ ...opts, optLevel: 1 }, [{ gpu: 'A100' }, { gpu: 'L4' }]);
    expect(
      changed.map((f) => [f.status, f.reused]),
      changed.map((f) => f.error ?? '').join('; '),
    ).toEqual([
      ['succeeded', undefined],
      ['succeeded', undefined],
    ]);
  });

  it('a matrix makes one build per target; a target no live worker matches stays queued and says why', async () => {
    const svc = await serve();
    const recs = await svc.startMatrix({ modelPath: model, options: sim(0.4), targets: [{ gpu: 'A100' }, { gpu: 'L4' }, { gpu: 'H100' }] });
    expect(recs).toHaveLength(3);
    const [a, b, h] = recs.map((r) => r.id);
    await Promise.all([svc.waitForResult(a), svc.waitForResult(b)]);
    expect((svc.getBuild(a) as FarmRecord).farm.worker?.id).toBe('wA');
    expect((svc.getBuild(b) as FarmRecord).farm.worker?.id).toBe('wB');
    const queued = svc.getBuild(h) as FarmRecord;
    expect(queued.state).toBe('queued');
    expect(queued.farm.waiting).toMatch(/no live worker matches target gpu=H100/);
    const c = collect(svc, h, -1);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.events.some((e) => e.type === 'log' && /no live worker matches target gpu=H100/.test(e.message))).toBe(true);
    // Stop on a queued build ends it at once; no worker ever runs it.
    expect(svc.cancelBuild(h)).toBe(true);
    await c.done;
    expect(svc.getBuild(h)?.state).toBe('cancelled');
    expect(c.events.map((e) => e.type).slice(-2)).toEqual(['build.cancelling', 'build.finished']);
  });

  it('Stop reaches the remote worker: the build ends cancelled at the next step, from another serve too', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'L4' } });
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    // A second serve on the same Redis (another process in real life) sees the running build and stops it.
    const other = await serve();
    expect(other.getBuild(rec.id)?.state).toBe('running');
    const t0 = Date.now();
    expect(other.cancelBuild(rec.id)).toBe(true);
    const f = await svc.waitForResult(rec.id);
    expect(f.status).toBe('cancelled');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(svc.getBuild(rec.id)?.outcome?.cancelLatencyMs).toBeDefined();
    expect(fs.existsSync(svc.getBuild(rec.id)!.outputPath ?? '/nonexistent')).toBe(false);
  });

  it('Stop travels by pub/sub, not by polling: a counted request with no message waits; the message stops the build at once', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'L4' } });
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    try {
      // What serve writes, without the message that goes with it: no worker re-reads the counter
      // on a timer, so the build keeps running.
      await raw.multi().hincrby(keys.cancel(rec.id), 'n', 1).hset(keys.cancel(rec.id), 'reason', 'user').exec();
      await new Promise((r) => setTimeout(r, 1500));
      expect(svc.getBuild(rec.id)?.state).toBe('running');
      // The bare id alone (what a serve of an earlier version publishes) makes the worker read the
      // counter now.
      const t0 = Date.now();
      await raw.publish(keys.cancelChannel, rec.id);
      const f = await svc.waitForResult(rec.id);
      expect(f.status).toBe('cancelled');
      // A correctness bound with room for a busy machine; the bench measures the real figure.
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      raw.disconnect();
    }
  });

  it('Stop carries its count: the message on the stop channel cancels the build without the worker reading the counter', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'L4' } });
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    try {
      // No counter in Redis at all: only the message says a Stop was asked (reason "timeout" to tell it apart).
      expect(await raw.exists(keys.cancel(rec.id))).toBe(0);
      const seen = collect(svc, rec.id, -1);
      await raw.publish(keys.stopChannel, JSON.stringify({ id: rec.id, n: 1, reason: 'timeout' }));
      await seen.done;
      expect((await svc.waitForResult(rec.id)).status).toBe('cancelled');
      expect(seen.events.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'timeout' });
    } finally {
      raw.disconnect();
    }
  });

  it("one worker process for a machine's GPUs (--gpus sim:2): a slot per GPU, one build each, labelled by device", async () => {
    const slots = await startWorker(redis.url, 'wS', 'gpu=T4,trt=10.16.0', ['--gpus', 'sim:2', '--artifacts', artifacts.root]);
    try {
      expect(slots.stderr()).toMatch(/wS-gpu0 ready, labels gpu=T4,trt=10.16.0,device=0, 1 at a time/);
      expect(slots.stderr()).toMatch(/wS-gpu1 ready, labels gpu=T4,trt=10.16.0,device=1, 1 at a time/);
      const svc = await serve();
      // Two builds for the machine's GPU type run at once, one per slot.
      const [a, b] = await svc.startMatrix({ modelPath: model, options: sim(1.5), targets: [{ gpu: 'T4' }, { gpu: 'T4' }] });
      // A build may ask for one GPU of the machine by its device label.
      const d1 = await svc.startBuild({ modelPath: model, options: sim(0.3), target: { gpu: 'T4', device: '1' } });
      const workerOf = (id: string) => (svc.getBuild(id) as FarmRecord).farm.worker?.id;
      await until(() => !!workerOf(a.id) && !!workerOf(b.id) && svc.getBuild(a.id)?.state === 'running' && svc.getBuild(b.id)?.state === 'running', 20_000, 'both builds to run');
      const ids = [a, b].map((r) => workerOf(r.id)).sort();
      expect(ids).toEqual(['wS-gpu0', 'wS-gpu1']);
      await Promise.all([a, b, d1].map((r) => svc.waitForResult(r.id)));
      expect((svc.getBuild(d1.id) as FarmRecord).farm.worker?.id).toBe('wS-gpu1');
      expect(svc.getBuild(d1.id)?.state).toBe('succeeded');
    } finally {
      await killProc(slots.proc, 'SIGTERM');
    }
  });

  it("the farm view (serve's farmStatus and `farm status`): workers with labels and heartbeats, queued builds and why they wait, endings", async () => {
    const svc = await serve();
    const done = await svc.startBuild({ modelPath: model, options: sim(0.2), target: { gpu: 'A100' } });
    await svc.waitForResult(done.id);
    const long = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'L4' } });
    const waiting = await svc.startBuild({ modelPath: model, options: sim(0.2), target: { gpu: 'V100' } });
    await until(() => rowCount(svc, long.id) > 2, 20_000, 'the build to run');
    const st = await svc.farmStatus();
    const byId = new Map(st.workers.map((w) => [w.id, w]));
    expect(byId.get('wA')?.labels).toEqual({ gpu: 'A100', trt: '10.16.0' });
    expect(byId.get('wB')?.running).toEqual([long.id]);
    expect(byId.get('wB')?.lastHeartbeatMsAgo).toBeLessThan(10_000);
    expect(st.running.map((r) => r.id)).toContain(long.id);
    const v100 = st.pools.find((p) => p.target.gpu === 'V100');
    expect(v100?.queued).toEqual([expect.objectContaining({ id: waiting.id, waiting: expect.stringMatching(/no live worker matches target gpu=V100/) })]);
    expect(st.recent.find((r) => r.id === done.id)).toMatchObject({ state: 'succeeded', worker: 'wA' });
    // The CLI reads the same from Redis.
    const cli = await collectCli(spawnCli(['farm', 'status', '--queue', redis.url, '--json']));
    expect(cli.code).toBe(0);
    const fromCli = JSON.parse(cli.stdout) as typeof st;
    expect(fromCli.pools.find((p) => p.target.gpu === 'V100')?.queued.map((q) => q.id)).toEqual([waiting.id]);
    const text = await collectCli(spawnCli(['farm', 'status', '--queue', redis.url]));
    expect(text.stdout).toMatch(/^Workers: \d+ live, \d+ of \d+ slot\(s\) busy/m);
    expect(text.stdout).toContain(`${waiting.id}  no live worker matches target gpu=V100`);
    svc.cancelBuild(long.id);
    svc.cancelBuild(waiting.id);
    await Promise.all([svc.waitForResult(long.id), svc.waitForResult(waiting.id)]);
    // A Redis that is not there: said in one line, exit 1.
    const down = await collectCli(spawnCli(['farm', 'status', '--queue', 'redis://127.0.0.1:1']));
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/Redis at redis:\/\/127\.0\.0\.1:1 is unavailable/);
  });

  it('a build worker that crashes on the farm machine ends "crashed" with its own reason; the farm worker goes on', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: { ...sim(0.5), simFault: 'crash' }, target: { gpu: 'A100' } });
    const f = await svc.waitForResult(rec.id);
    expect(f.status).toBe('crashed');
    expect(f.error).toMatch(/the build worker (crashed in .+: it )?exited without a result/);
    const next = await svc.startBuild({ modelPath: model, options: sim(0.2), target: { gpu: 'A100' } });
    expect((await svc.waitForResult(next.id)).status).toBe('succeeded');
    // Serve shutting down does not stop farm builds: "shutdown" cancels are not forwarded.
    const long = await svc.startBuild({ modelPath: model, options: sim(0.5), target: { gpu: 'A100' } });
    expect(svc.cancelBuild(long.id, 'shutdown')).toBe(false);
    expect((await svc.waitForResult(long.id)).status).toBe('succeeded');
  });

  it('a time budget cancels the remote build with reason "timeout"', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), timeBudgetSeconds: 1, target: { gpu: 'A100' } });
    const c = collect(svc, rec.id);
    await c.done;
    const cancelling = c.events.find((e) => e.type === 'build.cancelling');
    expect(cancelling?.type === 'build.cancelling' && cancelling.reason).toBe('timeout');
    expect(svc.getBuild(rec.id)?.state).toBe('cancelled');
  });

  it('memory on the farm: a remote build past its host memory limit stops (reason memory) and build.finished carries memory', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: { ...sim(4), simMemory: '1G', maxHostMemory: '400M' }, target: { gpu: 'A100' } });
    const c = collect(svc, rec.id);
    await c.done;
    expect(c.events.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'memory' });
    const fin = c.events.at(-1)!;
    expect(fin.type === 'build.finished' && fin.status).toBe('cancelled');
    expect(fin.type === 'build.finished' && fin.error).toMatch(/^stopped: host memory .* passed the 400 MiB limit during Building engine › /);
    expect(fin.type === 'build.finished' && fin.memory!.peakHostBytes).toBeGreaterThan(400 * 2 ** 20);
    expect(svc.getBuild(rec.id)?.outcome?.memory).toEqual(fin.type === 'build.finished' && fin.memory);
  });

  it('a serve restart keeps the history and follows a running build to its end', async () => {
    const first = await serve();
    const done = await first.startBuild({ modelPath: model, options: sim(0.3), target: { gpu: 'A100' } });
    await first.waitForResult(done.id);
    const running = await first.startBuild({ modelPath: model, options: sim(3), target: { gpu: 'A100' } });
    await until(() => rowCount(first, running.id) > 2, 20_000, 'the build to run');
    const before = first.getBuild(done.id)!;
    const beforeView = first.getView(done.id)!;
    await first.shutdown();
    const second = await serve();
    const after = second.getBuild(done.id)!;
    expect(after.state).toBe('succeeded');
    expect(sameTree(second.getView(done.id)!)).toEqual(sameTree(beforeView));
    expect(after.outcome).toEqual(before.outcome);
    expect(second.listBuilds().map((b) => b.id)).toEqual(expect.arrayContaining([done.id, running.id]));
    const f = await second.waitForResult(running.id);
    expect(f.status).toBe('succeeded');
    expect(rowCount(second, running.id)).toBeGreaterThan(3);
  });

  it('a worker killed mid-build: the build ends crashed, "worker lost", within the heartbeat bound', async () => {
    const wK = await startWorker(redis.url, 'wK', 'gpu=K80', LOSS_HEARTBEAT);
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'K80' } });
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    const t0 = Date.now();
    await killProc(wK.proc, 'SIGKILL');
    const f = await svc.waitForResult(rec.id);
    const took = Date.now() - t0;
    expect(f.status).toBe('crashed');
    expect(f.error).toBe('worker lost');
    // TTL 1.5 s + check every 0.25 s, with slack for a busy machine.
    expect(took).toBeLessThan(8000);
    expect(svc.getView(rec.id)!.rows.open).toEqual([]);
    // Not retried: nothing runs it again, and the record in Redis says the same after a restart.
    const again = await serve();
    expect(again.getBuild(rec.id)?.outcome?.error).toBe('worker lost');
  });

  it('a worker killed and restarted at once under the same id (a pod restart): its build is not left running forever', async () => {
    const first = await startWorker(redis.url, 'wR', 'gpu=R1', LOSS_HEARTBEAT);
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'R1' } });
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    await killProc(first.proc, 'SIGKILL');
    // The restarted process's first heartbeat, under the same id, before the old one expired
    // (written here so the timing does not depend on how fast a process starts on a busy machine):
    // the id is alive again, but it does not run the build.
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    try {
      await raw.set(keys.worker('wR'), JSON.stringify({ id: 'wR', labels: { gpu: 'R1' }, concurrency: 1, running: [], host: 'h', pid: 1 }), 'PX', 60_000);
      const f = await svc.waitForResult(rec.id);
      expect(f.status).toBe('crashed');
      expect(f.error).toBe('worker lost');
      const c = collect(svc, rec.id, -1);
      await new Promise((r) => setTimeout(r, 20));
      expect(c.events.some((e) => e.type === 'log' && /wR restarted and its new process does not run this build/.test(e.message))).toBe(true);
    } finally {
      await raw.del(keys.worker('wR'));
      raw.disconnect();
    }
  });

  it("with retries: n, a lost worker's build runs again on another matching worker", async () => {
    // Both beat with a generous TTL, so a slow machine never loses the survivor; the loss is
    // driven here: the first worker is killed and its heartbeat key expired by hand, as its TTL
    // would (the TTL bound itself is the "worker killed mid-build" test's).
    const [w1, w2] = await Promise.all([startWorker(redis.url, 'wT1', 'gpu=T4'), startWorker(redis.url, 'wT2', 'gpu=T4')]);
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(2), target: { gpu: 'T4' }, retries: 1 });
    const c = collect(svc, rec.id);
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    const first = (svc.getBuild(rec.id) as FarmRecord).farm.worker!.id;
    await killProc((first === 'wT1' ? w1 : w2).proc, 'SIGKILL');
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    await raw.pexpire(keys.worker(first), 1).finally(() => raw.disconnect());
    await c.done;
    const r = svc.getBuild(rec.id) as FarmRecord;
    expect(r.state).toBe('succeeded');
    expect(r.farm.worker?.id).toBe(first === 'wT1' ? 'wT2' : 'wT1');
    expect(r.farm.attempt).toBe(2);
    expect(c.events.some((e) => e.type === 'log' && /worker lost: .* retrying \(attempt 2 of 2\)/.test(e.message))).toBe(true);
    // Each attempt announces itself with the worker that runs it.
    const starts = c.events.filter((e) => e.type === 'build.started');
    expect(starts.map((e) => e.type === 'build.started' && e.worker?.id)).toEqual([first, r.farm.worker?.id]);
    // Phases of the lost attempt were closed (early), the retry's phases have their own ids.
    expect(svc.getView(rec.id)!.rows.open).toEqual([]);
  });

  it('builds sharing a (GPU, TensorRT) timing cache run side by side on two machines and lose no entries', async () => {
    const art = ['--artifacts', artifacts.root];
    const wcs = await Promise.all([startWorker(redis.url, 'wC1', 'gpu=V100,trt=10.16.0', art), startWorker(redis.url, 'wC2', 'gpu=V100,trt=10.16.0', art)]);
    const other = writeModel(path.join(dir, 'other.onnx'), { layers: 5, channels: 7, graphName: 'other' });
    const svc = await serve();
    const cachePath = artifacts.timingCacheFor({ gpu: 'V100', trt: '10.16.0' })!;
    const ids = [
      (await svc.startBuild({ modelPath: model, options: sim(3), target: { gpu: 'V100' } } as never)).id,
      (await svc.startBuild({ modelPath: other, options: sim(3), target: { gpu: 'V100' } } as never)).id,
    ];
    const cs = ids.map((id) => collect(svc, id, -1));
    // Both running at one moment: neither waits for the other's cache.
    await until(() => ids.every((id) => svc.getBuild(id)?.state === 'running'), 30_000, 'both builds to run at once');
    await Promise.all(cs.map((c) => c.done));
    const recs = ids.map((id) => svc.getBuild(id) as FarmRecord);
    expect(
      recs.map((r) => r.state),
      wcs.map((w) => `${w.id} exit ${w.proc.exitCode} ${w.proc.signalCode}: ${w.stderr()}`).join(' ;; '),
    ).toEqual(['succeeded', 'succeeded']);
    expect(new Set(recs.map((r) => r.farm.worker?.id))).toEqual(new Set(['wC1', 'wC2']));
    const [first, second] = [...recs].sort((a, b) => Date.parse(a.startedAt!) - Date.parse(b.startedAt!));
    expect(Date.parse(second.startedAt!)).toBeLessThan(Date.parse(first.finishedAt!));
    // Both started from the empty cache (neither had published), and the build's own paths are
    // never shown: events and records name the shared cache.
    expect(recs.map((r) => r.cache?.entriesBefore)).toEqual([0, 0]);
    expect(recs.every((r) => r.cache?.path === cachePath)).toBe(true);
    expect(cs.some((c) => c.events.some((e) => e.type === 'log' && /waiting for/.test(e.message)))).toBe(false);
    for (const c of cs) {
      const logs = c.events.filter((e): e is Extract<BuildEvent, { type: 'log' }> => e.type === 'log').map((e) => e.message);
      expect(logs.some((m) => m.includes('tbs-farm-cache-'))).toBe(false);
      expect(logs.some((m) => m.startsWith('Published') || m.startsWith('Timing cache: another build published'))).toBe(true);
    }
    // Every entry either build measured is in the shared cache (the file and the pending files
    // that every build loads) when the builds end. Started from an empty cache, each measured
    // what a build of its model alone on an empty cache measures (the two models share some
    // entries, which each build measured: the price of not waiting).
    const shared = sharedCacheKeys(cachePath);
    const alone = await measuredAlone([model, other]);
    expect(recs.map((r) => r.cache!.added)).toEqual(alone.map((k) => k.size));
    expect([...shared].sort()).toEqual([...new Set([...alone[0], ...alone[1]])].sort());
    // The next build starts from all of them and folds the pending ones into the file.
    const next = await svc.startBuild({ modelPath: model, options: sim(0.3), target: { gpu: 'V100' } });
    expect((await svc.waitForResult(next.id)).status).toBe('succeeded');
    expect((svc.getBuild(next.id) as FarmRecord).cache!.entriesBefore).toBe(shared.size);
    const inFile = simCacheKeys(cachePath);
    expect([...shared].filter((k) => !inFile.has(k))).toEqual([]);
    expect(pendingFiles(cachePath)).toEqual([]);

    // A cache the request names itself is published into the same way, and Stop still ends a
    // build that works on a copy (its measured entries kept, as for a local build).
    const named = path.join(artifacts.root, 'timing-caches', 'named.cache');
    const own = await svc.startBuild({ modelPath: other, options: { ...sim(20), timingCache: named }, target: { gpu: 'V100' } });
    const co = collect(svc, own.id, -1);
    const evaluated = () => {
      const ids = new Set(co.events.filter((e) => e.type === 'phase.start' && e.name === 'Evaluating tactic times').map((e) => (e as { id: number }).id));
      return co.events.filter((e) => e.type === 'phase.finish' && ids.has(e.id)).length;
    };
    await until(() => evaluated() >= 2, 30_000, 'the named-cache build to measure');
    svc.cancelBuild(own.id);
    await co.done;
    const ownRec = svc.getBuild(own.id) as FarmRecord;
    expect(ownRec.state).toBe('cancelled');
    expect(ownRec.cache?.path).toBe(named);
    expect(ownRec.cache!.savedAfterCancel).toBe(true);
    expect(ownRec.cache!.added).toBeGreaterThan(0);
    expect(simCacheKeys(named).size).toBe(ownRec.cache!.added);
    expect(co.events.some((e) => e.type === 'log' && e.message.startsWith(`Published this build's timing-cache entries into the shared cache ${named}`))).toBe(true);
  });

  it('serve --queue over HTTP (target, matrix, SSE) and build --queue --target on the CLI', async () => {
    const srv = spawnCli(['serve', '--queue', redis.url, '--artifacts', artifacts.root, '--port', '0', '--token', 'tok']);
    const exited = collectCli(srv);
    try {
      const base = await serveUrl(srv);
      const api = (p: string, body?: unknown) =>
        fetch(`${base}${p}`, {
          method: body ? 'POST' : 'GET',
          headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
          body: body ? JSON.stringify(body) : undefined,
        });
      const one = await api('/api/builds', { modelPath: model, options: sim(0.3), target: { gpu: 'L4' } });
      expect(one.status).toBe(201);
      const { id } = (await one.json()) as { id: string };
      const matrix = await api('/api/builds', { modelPath: model, options: sim(0.3), targets: [{ gpu: 'A100' }, { gpu: 'L4' }] });
      expect(matrix.status).toBe(201);
      expect(((await matrix.json()) as { ids: string[] }).ids).toHaveLength(2);
      const bad = await api('/api/builds', { modelPath: model, options: sim(0.3), target: { gpu: 5 } });
      expect(bad.status).toBe(400);
      expect(await bad.text()).toMatch(/target\.gpu/);
      // The SSE stream: snapshot, then events with the worker in build.started, ending with build.finished.
      const sse = await (await api(`/api/builds/${id}/events`)).text();
      expect(sse).toMatch(/^event: snapshot/);
      expect(sse).toMatch(/"type":"build\.started"[^\n]*"worker":\{"id":"wB"/);
      expect(sse).toMatch(/"type":"build\.finished","status":"succeeded"|"status":"succeeded"[^\n]*"type":"build\.finished"/);
      const eng = await api(`/api/builds/${id}/engine`);
      expect(eng.status).toBe(200);
      expect(await eng.text()).toMatch(/SIMULATED ENGINE/);
      // An uploaded model goes to the shared artifact folder, where a worker on another machine
      // reads it, and it stays there after serve stops (a queued build must still find it).
      const form = new FormData();
      form.append('model', new Blob([fs.readFileSync(model)]), 'uploaded.onnx');
      const up = await fetch(`${base}/api/models`, { method: 'POST', headers: { authorization: 'Bearer tok' }, body: form });
      expect(up.status).toBe(201);
      const uploaded = ((await up.json()) as { path: string }).path;
      expect(path.dirname(uploaded)).toBe(path.join(artifacts.root, 'uploads'));
      const fromUpload = await api('/api/builds', { modelPath: uploaded, options: sim(0.3), target: { gpu: 'A100' } });
      expect(fromUpload.status).toBe(201);
      const upId = ((await fromUpload.json()) as { id: string }).id;
      const upSse = await (await api(`/api/builds/${upId}/events`)).text();
      expect(upSse).toMatch(/"status":"succeeded"/);
      srv.kill('SIGTERM');
      await exited;
      expect(fs.existsSync(uploaded)).toBe(true);
    } finally {
      srv.kill('SIGTERM');
      await exited;
    }
    // A serve without --queue refuses a target instead of ignoring it.
    const local = spawnCli(['serve', '--port', '0', '--token', 'tok']);
    const localExit = collectCli(local);
    try {
      const base = await serveUrl(local);
      const r = await fetch(`${base}/api/builds`, {
        method: 'POST',
        headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
        body: JSON.stringify({ modelPath: model, options: sim(0.3), targets: [{ gpu: 'L4' }] }),
      });
      expect(r.status).toBe(400);
      expect(await r.text()).toMatch(/targets: only a build farm routes builds/);
    } finally {
      local.kill('SIGTERM');
      await localExit;
    }
    const out = path.join(dir, 'cli.engine');
    const r = await collectCli(spawnCli(['build', model, '-o', out, '--queue', redis.url, '--target', 'gpu=A100', '--backend', 'simulated', '--sim-duration', '0.3', '--json']));
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as BuildEvent);
    const started = events.find((e) => e.type === 'build.started');
    expect(started?.type === 'build.started' && started.worker?.id).toBe('wA');
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(fs.existsSync(out)).toBe(true);
    const noFarm = await collectCli(spawnCli(['build', model, '-o', out, '--target', 'gpu=A100']));
    expect(noFarm.code).toBe(2);
    expect(noFarm.stderr).toMatch(/--target needs --queue/);
  });

  it('MCP start_build takes a target on the farm, and a local MCP server refuses one', async () => {
    const svc = await serve();
    const res = await startBuildTool({ service: svc, reasons: new CancelReasons() }, { modelPath: model, options: sim(0.2), target: { gpu: 'L4' } });
    expect(res.isError).toBeFalsy();
    const id = (res.structuredContent as { buildId: string }).buildId;
    await svc.waitForResult(id);
    expect((svc.getBuild(id) as FarmRecord).farm.worker?.id).toBe('wB');
    const local = createBuildService();
    try {
      const refused = await startBuildTool({ service: local, reasons: new CancelReasons() }, { modelPath: model, options: sim(0.2), target: { gpu: 'L4' } });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/only a build farm routes builds/);
      expect(local.listBuilds()).toHaveLength(0);
    } finally {
      await local.shutdown();
    }
  });

  it('MCP build_matrix: one build per target, each reported with its target, progress per ending; cancel stops them all', async () => {
    const svc = await serve();
    const notes: Array<{ progress: number; total: number; message: string }> = [];
    const extra = (signal: AbortSignal) =>
      ({
        signal,
        _meta: { progressToken: 7 },
        sendNotification: async (n: { params: { progress: number; total: number; message: string } }) => void notes.push(n.params),
      }) as never;
    const res = await runMatrixTool(
      { service: svc, reasons: new CancelReasons() },
      { modelPath: model, options: sim(0.3), targets: [{ gpu: 'A100' }, { gpu: 'L4' }] },
      extra(new AbortController().signal),
    );
    expect(res.isError).toBeFalsy();
    const out = res.structuredContent as { succeeded: number; total: number; builds: Array<{ target: Record<string, string>; status: string; buildId: string }> };
    expect([out.succeeded, out.total]).toEqual([2, 2]);
    expect(out.builds.map((b) => [b.target.gpu, b.status])).toEqual([
      ['A100', 'succeeded'],
      ['L4', 'succeeded'],
    ]);
    expect((svc.getBuild(out.builds[1].buildId) as FarmRecord).farm.worker?.id).toBe('wB');
    expect(notes.at(-1)).toMatchObject({ progress: 2, total: 2, message: expect.stringMatching(/^2 of 2 ended: gpu=/) });
    // Cancelling the request cancels every build of the matrix.
    const abort = new AbortController();
    const before = new Set(svc.listBuilds().map((b) => b.id));
    const running = runMatrixTool(
      { service: svc, reasons: new CancelReasons() },
      { modelPath: model, options: sim(30), targets: [{ gpu: 'A100' }, { gpu: 'V100' }] },
      extra(abort.signal),
    );
    // Cancel once the matrix exists and its A100 build is running (not after a fixed sleep): the
    // abort then reaches a running build, whatever the machine's load.
    const matrix = () => svc.listBuilds().filter((b) => !before.has(b.id));
    await until(() => matrix().length === 2 && matrix().some((b) => b.state === 'running' && rowCount(svc, b.id) > 0), 20_000, 'the matrix to run');
    abort.abort();
    const cancelled = await running;
    expect(cancelled.isError).toBe(true);
    expect((cancelled.structuredContent as { builds: Array<{ status: string }> }).builds.map((b) => b.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('Redis restarted under a running build: the build still ends with the right state', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(4), target: { gpu: 'L4' } });
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    expect(svc.getBuild(rec.id)?.state).toBe('running');
    await redis.kill();
    const outage = Date.now();
    await new Promise((r) => setTimeout(r, 1000));
    await redis.restart();
    const f = await svc.waitForResult(rec.id);
    expect(f.status).toBe('succeeded');
    // It really ran through the outage (not finished before Redis went away).
    expect(Date.parse(svc.getBuild(rec.id)!.finishedAt!)).toBeGreaterThan(outage + 1000);
    const r = svc.getBuild(rec.id)!;
    expect(r.state).toBe('succeeded');
    // The stream has no holes the mirror skipped over: its view is the one the worker wrote from
    // the stream it appended, as a fresh serve reads it from Redis.
    expect(sameTree((await serve()).getView(rec.id)!)).toEqual(sameTree(svc.getView(rec.id)!));
    // And the workers are still there: a new build runs.
    const next = await svc.startBuild({ modelPath: model, options: sim(0.3), target: { gpu: 'L4' } });
    expect((await svc.waitForResult(next.id)).status).toBe('succeeded');
    expect(wB.stderr()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ is unavailable/);
  }, 60_000);

  it('a Redis that lost its data: serve ends the build "crashed" saying why, the worker stops it and goes on', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'A100' } });
    await until(() => rowCount(svc, rec.id) > 2, 20_000, 'the build to run');
    const flusher = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      await flusher.flushall();
    } finally {
      flusher.disconnect();
    }
    const f = await svc.waitForResult(rec.id);
    expect(f.status).toBe('crashed');
    expect(f.error).toMatch(/lost this build: Redis restarted without its data/);
    await until(() => /is no longer ours in Redis; stopping it/.test(wA.stderr()), 15_000, 'the worker to stop the orphaned build');
    const next = await svc.startBuild({ modelPath: model, options: sim(0.2), target: { gpu: 'A100' } });
    expect((await svc.waitForResult(next.id)).status).toBe('succeeded');
  });
});
