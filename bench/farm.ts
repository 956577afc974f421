// bench:farm — the build farm under load, with faults: a real redis-server, a real `serve --queue`,
// worker processes with simulated GPU slots (`worker --gpus sim:N`), M builds across several
// targets, K SSE watchers, and, while it runs, worker processes killed with SIGKILL and started
// again under the same id (as a pod restart would). Prints one JSON object:
//   counts      submitted / succeeded / crashed / cancelled / failed, retried (more than one
//               attempt), stuck (not finished when the run gave up waiting)
//   throughput  builds × simulated seconds ÷ (slots × wall seconds): 1.0 would be every slot busy
//               building all the time, with no cost for starting build processes or moving events
//   latency     queue-to-start (queuedAt → build.started) and event-to-watcher (an event's wall
//               time, build.started's startedAtMs + t, → its arrival at an SSE watcher), p50/p99
//   memory      Redis used_memory_peak, serve's peak RSS (VmHWM)
//   stopLatencyMs  Stop (POST …/cancel) → build.finished at an SSE client, p50/p99, on the farm
//               (after the load, every slot idle) and on a local serve on the same machine, with
//               farm − local and farm ÷ local at p50 (bench/stop-latency.ts)
// Usage: node dist/bench/farm.js [--slots 8] [--procs 2] [--builds 200] [--watchers 50]
//        [--sim-seconds 2] [--kills 2] [--targets 2] [--stops 20]
// The small form of the same run is a test (apps/farm/test/farm-load.test.ts).
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { killProc, startRedis, type RedisServer } from '../apps/farm/test/harness.js';
import { SseParser } from '../apps/service/http/sse-parser.js';
import type { BuildEvent, BuildRecord } from '../apps/shared/protocol.js';
import { spawnCli } from '../test/support/cli.js';
import { serveApi, serveReady, type ServeChild } from './serve-child.js';
import { writeModel } from '../test/support/onnx-gen.js';
import { measureStops, stats, type Stats } from './stop-latency.js';

export interface FarmLoadOptions {
  /** GPU slots in all (split evenly over `procs` worker processes). */
  slots: number;
  procs: number;
  builds: number;
  watchers: number;
  simSeconds: number;
  /** Worker processes killed (SIGKILL) and restarted during the run. */
  kills: number;
  /** Distinct targets (gpu=G0, G1, …); worker processes are given them in turn. */
  targets: number;
  /** Stops timed on the farm and on a local serve (0: none). */
  stops?: number;
  /** Give up waiting for the builds after this long. */
  deadlineMs?: number;
  log?: (line: string) => void;
}

export interface FarmLoadResult {
  config: FarmLoadOptions & { slotsPerProc: number };
  counts: { submitted: number; succeeded: number; crashed: number; cancelled: number; failed: number; retried: number; stuck: number };
  wallSeconds: number;
  throughput: { achieved: number; idealBuildsPerSec: number; buildsPerSec: number; buildSecondsMean: number; slotBusy: number };
  latencyMs: { queueToStart: Stats; eventToWatcher: Stats };
  memory: { redisPeakBytes: number; servePeakRssBytes: number; redisStreamKeys: number; redisStreamEntries: number };
  kills: Array<{ worker: string; atMs: number }>;
  /** One-minute load average: lowest and highest seen during the run. */
  load: number[];
  stopLatencyMs?: StopLatency;
  /** Every build that did not succeed: how it ended and why, so a failed run says what happened. */
  notSucceeded: Array<{ id: string; status: string; error?: string }>;
}

export interface StopLatency {
  farm: Stats & { notCancelled: number };
  local: Stats & { notCancelled: number };
  /** farm p50 − local p50: what the farm adds to a Stop (the goal: at most 100 ms). */
  p50DiffMs: number;
  /** farm p50 ÷ local p50. */
  ratio: number;
}

type Serve = ServeChild;
const api = serveApi;

function startServe(url: string, artifacts: string): Promise<Serve> {
  return serveReady(spawnCli(['serve', '--port', '0', '--queue', url, '--artifacts', artifacts]));
}

/** A serve that builds on this machine itself: the local Stop the farm's is measured against. */
function startLocalServe(outputDir: string): Promise<Serve> {
  return serveReady(spawnCli(['serve', '--port', '0', '--output-dir', outputDir]));
}

interface WorkerProcess {
  id: string;
  labels: string;
  proc: ChildProcess;
}

/**
 * Heartbeat TTL of the bench's workers. The bench loses no worker on purpose, so the TTL only has
 * to outlast the longest stall of a worker's event loop: a 1.5 s TTL (beats every 0.5 s) turned a
 * busy machine (the bench's own builds, their workers and serve on a few cores) into serve calling
 * live workers lost and ending their builds "worker lost", which measures load, not the farm.
 * 20 s, as the farm tests' GENEROUS_HEARTBEAT_MS (a worker's default is 10 s).
 */
const BENCH_HEARTBEAT_MS = 20_000;

function startWorkerProcess(url: string, id: string, labels: string, slots: number, artifacts: string): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const proc = spawnCli([
      'worker',
      '--queue',
      url,
      '--id',
      id,
      '--labels',
      labels,
      '--gpus',
      `sim:${slots}`,
      '--heartbeat-ms',
      String(BENCH_HEARTBEAT_MS),
      '--artifacts',
      artifacts,
    ]);
    let err = '';
    const onData = (c: Buffer) => {
      err += c.toString();
      if (err.includes(`${id} ready, ${slots} GPU slot(s)`)) {
        proc.stderr!.off('data', onData);
        resolve({ id, labels, proc });
      }
    };
    proc.stderr!.on('data', onData);
    proc.once('exit', (code, sig) => reject(new Error(`worker ${id} exited (${sig ?? code}) while starting: ${err.slice(-2000)}`)));
  });
}

/** Follows one build's SSE stream to build.finished; records each event's delay from its wall time. */
function watch(s: Serve, id: string, delays: number[]): Promise<void> {
  return new Promise((resolve, reject) => {
    let startedAtMs: number | undefined;
    let done = false;
    const parser = new SseParser((m) => {
      if (m.event !== 'message') return;
      const e = JSON.parse(m.data) as BuildEvent;
      if (e.type === 'build.started' && e.startedAtMs !== undefined) startedAtMs = e.startedAtMs;
      // Live events only: a replayed one (from before the watcher joined) says nothing of latency.
      if (startedAtMs !== undefined && arrivedAt - (startedAtMs + e.t) < 60_000) delays.push(Math.max(0, arrivedAt - (startedAtMs + e.t)));
      if (e.type === 'build.finished') done = true;
    });
    let arrivedAt = 0;
    const req = http.get(`${s.base}/api/builds/${id}/events?lastEventId=-1`, { headers: { Authorization: `Bearer ${s.token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE ${id}: HTTP ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        arrivedAt = Date.now();
        parser.push(chunk);
      });
      res.on('end', () => (done ? resolve() : reject(new Error(`SSE ${id} ended without build.finished`))));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

function peakRss(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

export async function runFarmLoad(opts: FarmLoadOptions): Promise<FarmLoadResult> {
  const log = opts.log ?? (() => undefined);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-bench-farm-'));
  const slotsPerProc = Math.max(1, Math.round(opts.slots / opts.procs));
  const workers: WorkerProcess[] = [];
  let redis: RedisServer | undefined;
  let serve: Serve | undefined;
  const kills: Array<{ worker: string; atMs: number }> = [];
  const loadSamples: number[] = [];
  try {
    fs.mkdirSync(path.join(dir, 'redis'));
    const artifacts = path.join(dir, 'artifacts');
    fs.mkdirSync(artifacts, { mode: 0o700 });
    const model = writeModel(path.join(artifacts, 'model.onnx'), { layers: 12 });
    redis = await startRedis(path.join(dir, 'redis'));
    const url = redis.url;
    serve = await startServe(url, artifacts);
    const targets = Array.from({ length: opts.targets }, (_, i) => `gpu=G${i}`);
    for (let i = 0; i < opts.procs; i++) workers.push(await startWorkerProcess(url, `w${i}`, `${targets[i % targets.length]},trt=10.16.0`, slotsPerProc, artifacts));
    log(`farm up: ${opts.procs} worker process(es) × ${slotsPerProc} slots, serve at ${serve.base}`);

    const t0 = Date.now();
    const ids: string[] = [];
    const delays: number[] = [];
    const watching: Array<Promise<void>> = [];
    const s = serve;
    // Submitted in small waves, the way a CI matrix arrives; each of the first K builds gets a watcher.
    for (let i = 0; i < opts.builds; i++) {
      const target = { gpu: `G${i % opts.targets}` };
      const { id } = await api<{ id: string }>(s, '/api/builds', {
        method: 'POST',
        body: JSON.stringify({ modelPath: model, options: { backend: 'simulated', simDuration: opts.simSeconds, simSeed: i }, target, retries: 2 }),
      });
      ids.push(id);
      if (i < opts.watchers) watching.push(watch(s, id, delays).catch((e: Error) => log(`watcher: ${e.message}`)));
    }
    log(`submitted ${ids.length} builds in ${Date.now() - t0} ms`);

    // Faults: kill worker processes in turn, spread over the expected run, and start them again.
    const expectedMs = (opts.builds * opts.simSeconds * 1000) / opts.slots;
    const faults = (async () => {
      for (let k = 0; k < opts.kills; k++) {
        await new Promise((r) => setTimeout(r, expectedMs / (opts.kills + 1)));
        const victim = workers[k % workers.length];
        kills.push({ worker: victim.id, atMs: Date.now() - t0 });
        log(`SIGKILL ${victim.id} at ${Date.now() - t0} ms`);
        await killProc(victim.proc, 'SIGKILL');
        await new Promise((r) => setTimeout(r, 500));
        const again = await startWorkerProcess(url, victim.id, victim.labels, slotsPerProc, artifacts);
        workers[workers.indexOf(victim)] = again;
      }
    })();

    const deadline = Date.now() + (opts.deadlineMs ?? Math.max(120_000, expectedMs * 6));
    let records: BuildRecord[] = [];
    for (;;) {
      loadSamples.push(os.loadavg()[0]);
      records = (await api<BuildRecord[]>(s, '/api/builds')).filter((r) => ids.includes(r.id));
      const open = records.filter((r) => !r.outcome).length;
      if (open === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const wallSeconds = (Date.now() - t0) / 1000;
    await faults;
    await Promise.race([Promise.all(watching), new Promise((r) => setTimeout(r, 5000))]);

    const by = (st: string) => records.filter((r) => r.outcome?.status === st).length;
    const queueToStart = records
      .filter((r) => r.startedAt)
      .map((r) => Date.parse(r.startedAt!) - Date.parse(r.queuedAt))
      .filter((x) => Number.isFinite(x) && x >= 0);
    const raw = new Redis(url, { maxRetriesPerRequest: null });
    let redisPeakBytes = NaN;
    let redisStreamKeys = 0;
    let redisStreamEntries = 0;
    try {
      redisPeakBytes = Number(/used_memory_peak:(\d+)/.exec(await raw.info('memory'))?.[1] ?? NaN);
      const streamKeys = await raw.keys('tbs:events:*');
      redisStreamKeys = streamKeys.length;
      for (const k of streamKeys) redisStreamEntries += await raw.xlen(k);
    } finally {
      raw.disconnect();
    }
    let stopLatencyMs: StopLatency | undefined;
    if ((opts.stops ?? 0) > 0) {
      // Long simulated builds (they never end by themselves), stopped once their first phase ran.
      const body = { modelPath: model, options: { backend: 'simulated', simDuration: 120 } };
      const farm = await measureStops(s, { ...body, target: { gpu: 'G0' } }, opts.stops!);
      log(`farm Stop → build.finished: p50 ${farm.p50} ms, p99 ${farm.p99} ms`);
      const localOut = path.join(dir, 'local-engines');
      fs.mkdirSync(localOut);
      const local = await startLocalServe(localOut);
      try {
        const l = await measureStops(local, body, opts.stops!);
        log(`local Stop → build.finished: p50 ${l.p50} ms, p99 ${l.p99} ms`);
        stopLatencyMs = { farm, local: l, p50DiffMs: Math.round((farm.p50 - l.p50) * 10) / 10, ratio: Math.round((farm.p50 / l.p50) * 100) / 100 };
      } finally {
        await killProc(local.proc, 'SIGTERM').catch(() => undefined);
      }
    }
    const simWork = opts.builds * opts.simSeconds;
    // What the builds really took (build.started → ending, as serve recorded them): a simulated
    // build whose timing cache is warm spends less than its simulated seconds, so `achieved`
    // (against the simulated seconds) can overstate the farm; `slotBusy` is the share of the
    // slots' wall time that went to builds as they really ran.
    const ran = records
      .filter((r) => r.startedAt && r.finishedAt)
      .map((r) => (Date.parse(r.finishedAt!) - Date.parse(r.startedAt!)) / 1000)
      .filter((x) => Number.isFinite(x) && x >= 0);
    const ranSeconds = ran.reduce((a, b) => a + b, 0);
    return {
      config: { ...opts, log: undefined, slotsPerProc },
      counts: {
        submitted: ids.length,
        succeeded: by('succeeded'),
        crashed: by('crashed'),
        cancelled: by('cancelled'),
        failed: by('failed'),
        retried: records.filter((r) => ((r as BuildRecord & { farm?: { attempt?: number } }).farm?.attempt ?? 1) > 1).length,
        stuck: records.filter((r) => !r.outcome).length + (ids.length - records.length),
      },
      wallSeconds: Math.round(wallSeconds * 10) / 10,
      throughput: {
        achieved: Math.round((simWork / (opts.slots * wallSeconds)) * 1000) / 1000,
        idealBuildsPerSec: Math.round((opts.slots / opts.simSeconds) * 100) / 100,
        buildsPerSec: Math.round((opts.builds / wallSeconds) * 100) / 100,
        buildSecondsMean: ran.length ? Math.round((ranSeconds / ran.length) * 100) / 100 : NaN,
        slotBusy: Math.round((ranSeconds / (opts.slots * wallSeconds)) * 1000) / 1000,
      },
      latencyMs: { queueToStart: stats(queueToStart), eventToWatcher: stats(delays) },
      memory: { redisPeakBytes, servePeakRssBytes: peakRss(serve.proc.pid), redisStreamKeys, redisStreamEntries },
      kills,
      load: [Math.min(...loadSamples), Math.max(...loadSamples)].map((x) => Math.round(x * 10) / 10),
      ...(stopLatencyMs ? { stopLatencyMs } : {}),
      notSucceeded: records
        .filter((r) => r.outcome?.status !== 'succeeded')
        .map((r) => ({ id: r.id, status: r.outcome?.status ?? r.state, ...(r.outcome?.error ? { error: r.outcome.error } : {}) })),
    };
  } finally {
    for (const w of workers) await killProc(w.proc, 'SIGTERM').catch(() => undefined);
    if (serve) await killProc(serve.proc, 'SIGTERM').catch(() => undefined);
    if (redis) await redis.kill().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

if (require.main === module) {
  const opts: FarmLoadOptions = {
    slots: arg('slots', 8),
    procs: arg('procs', 2),
    builds: arg('builds', 200),
    watchers: arg('watchers', 50),
    simSeconds: arg('sim-seconds', 2),
    kills: arg('kills', 2),
    targets: arg('targets', 2),
    stops: arg('stops', 20),
    log: (l) => process.stderr.write(`bench:farm: ${l}\n`),
  };
  runFarmLoad(opts).then(
    (r) => {
      process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      process.exit(r.counts.stuck === 0 ? 0 : 1);
    },
    (e: Error) => {
      process.stderr.write(`bench:farm failed: ${e.stack ?? e.message}\n`);
      process.exit(1);
    },
  );
}
