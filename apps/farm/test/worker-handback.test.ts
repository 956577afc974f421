// A farm worker stopped by SIGTERM (a rolling update, a pod eviction) hands its running builds
// back: each goes back to the queue and another worker runs it within its retry budget, or, with
// no attempt left, it ends failed "worker shut down". Never cancelled: nobody stopped it. A build
// a person stops during the shutdown stays cancelled. Real redis-server, real `worker` processes
// (the CLI from dist/, each build in its own build worker process), the simulated backend; serve
// is the QueueBuildService in this process, as `serve --queue` uses it.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { SharedFolderArtifacts } from '../artifacts.js';
import { Queue } from 'bullmq';
import { FarmStore, type FarmRecord } from '../farm-store.js';
import { buildJob, keys, poolQueueName } from '../keys.js';
import { QueueBuildService } from '../queue-service.js';
import { rmDir, startRedis, startWorker, stopAll, until, type RedisServer, type WorkerProc } from './harness.js';

const sim = (simDuration: number) => ({ backend: 'simulated' as const, simDuration, simSeed: 7 });

let dir: string;
let model: string;
let redis: RedisServer;
let artifacts: SharedFolderArtifacts;
const services: QueueBuildService[] = [];

beforeAll(async () => {
  dir = tempDir('tbs-farm-handback-');
  fs.mkdirSync(path.join(dir, 'redis'));
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
  artifacts = new SharedFolderArtifacts(path.join(dir, 'artifacts'));
  artifacts.ensure();
  redis = await startRedis(path.join(dir, 'redis'));
}, 60_000);

afterEach(async () => {
  for (const s of services.splice(0)) await s.shutdown().catch(() => undefined);
});

afterAll(async () => {
  for (const s of services) await s.shutdown().catch(() => undefined);
  await stopAll();
  if (dir) rmDir(dir);
});

async function serve(): Promise<QueueBuildService> {
  const s = await QueueBuildService.create({ url: redis.url, artifacts, checkMs: 250, heartbeatTtlMs: 1500, log: () => undefined });
  services.push(s);
  return s;
}

const worker = (id: string, gpu: string) => startWorker(redis.url, id, `gpu=${gpu}`, ['--artifacts', artifacts.root]);

function exited(p: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve({ code: p.exitCode, signal: p.signalCode });
  return new Promise((resolve) => p.once('exit', (code, signal) => resolve({ code, signal })));
}

/** The build runs on `w`: its phases reach serve. */
async function runningOn(svc: QueueBuildService, id: string, w: WorkerProc): Promise<void> {
  await until(
    () => (svc.getBuild(id) as FarmRecord | undefined)?.farm.worker?.id === w.id && (svc.getView(id)?.rows.rows.length ?? 0) > 2,
    30_000,
    `build ${id} to run on ${w.id} (stderr: ${w.stderr().slice(-500)})`,
  );
}

/** Every event of the build as Redis keeps it (what any serve, now or restarted, reads). */
async function streamOf(id: string): Promise<BuildEvent[]> {
  const r = new Redis(redis.url);
  try {
    return await new FarmStore(r).eventsAfter(id, -1);
  } finally {
    r.disconnect();
  }
}

const logs = (events: BuildEvent[]) => events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
const starts = (events: BuildEvent[]) => events.flatMap((e) => (e.type === 'build.started' ? [e.worker?.id] : []));

describe('farm worker shut down by SIGTERM hands its builds back', () => {
  it('with a retry left: the build goes back to the queue, a second worker runs it and it succeeds; the first exits 0', async () => {
    const svc = await serve();
    const [wa, wb] = await Promise.all([worker('hbA1', 'HB1'), worker('hbA2', 'HB1')]);
    const rec = await svc.startBuild({ modelPath: model, options: sim(6), target: { gpu: 'HB1' }, retries: 1 });
    await until(() => (svc.getView(rec.id)?.rows.rows.length ?? 0) > 2, 30_000, 'the build to run');
    const [first, second] = (svc.getBuild(rec.id) as FarmRecord).farm.worker!.id === wa.id ? [wa, wb] : [wb, wa];
    first.proc.kill('SIGTERM');
    const code = await exited(first.proc);
    expect(code, first.stderr()).toEqual({ code: 0, signal: null });
    const f = await svc.waitForResult(rec.id);
    expect(f.status, JSON.stringify(f)).toBe('succeeded');
    expect(first.stderr()).toMatch(/SIGTERM, stopping running builds, handing them back to the queue/);
    const r = svc.getBuild(rec.id) as FarmRecord;
    expect(r.farm.worker?.id).toBe(second.id);
    expect(r.farm.attempt).toBe(2);
    const events = await streamOf(rec.id);
    expect(logs(events)).toContain(`worker ${first.id} shut down (SIGTERM); build handed back to the queue, attempt 2 of 2`);
    // Handed back by the worker itself, not called lost by serve after its heartbeat expired.
    expect(logs(events).filter((m) => /worker lost/.test(m))).toEqual([]);
    expect(events.filter((e) => e.type === 'build.cancelling')).toEqual([]);
    expect(starts(events)).toEqual([first.id, second.id]);
    expect(events.filter((e) => e.type === 'build.finished').map((e) => e.type === 'build.finished' && e.status)).toEqual(['succeeded']);
    // The first attempt's phases were closed; the retry's tree is whole.
    expect(svc.getView(rec.id)!.rows.open).toEqual([]);
    expect(fs.existsSync(f.outputPath!)).toBe(true);
  }, 90_000);

  it('with no retry (retries 0): the build ends failed, "worker shut down", never cancelled, and no other worker runs it', async () => {
    const svc = await serve();
    const w = await worker('hbB1', 'HB2');
    const other = await worker('hbB2', 'HB2');
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'HB2' } });
    await until(() => (svc.getView(rec.id)?.rows.rows.length ?? 0) > 2, 30_000, 'the build to run');
    const ranOn = (svc.getBuild(rec.id) as FarmRecord).farm.worker!.id;
    const [victim, idle] = ranOn === w.id ? [w, other] : [other, w];
    victim.proc.kill('SIGTERM');
    expect(await exited(victim.proc), victim.stderr()).toEqual({ code: 0, signal: null });
    const f = await svc.waitForResult(rec.id);
    expect({ status: f.status, error: f.error }).toEqual({ status: 'failed', error: 'worker shut down' });
    const events = await streamOf(rec.id);
    expect(logs(events)).toContain(`worker ${victim.id} shut down (SIGTERM); no attempt left (this was attempt 1 of 1): the build fails`);
    expect(events.filter((e) => e.type === 'build.cancelling')).toEqual([]);
    expect(starts(events)).toEqual([victim.id]);
    expect(svc.getView(rec.id)!.rows.open).toEqual([]);
    // The ending is in Redis, with its view: a serve started now reads the same.
    const again = await serve();
    expect(again.getBuild(rec.id)?.outcome).toMatchObject({ status: 'failed', error: 'worker shut down' });
    expect(again.getView(rec.id)?.status).toBe('failed');
    // Still idle: nothing ran the build again.
    expect(idle.proc.exitCode).toBeNull();
    expect(starts(await streamOf(rec.id))).toEqual([victim.id]);
  }, 90_000);

  it('on its last attempt: handed back once, then failed "worker shut down" when the second worker is stopped too', async () => {
    const svc = await serve();
    const first = await worker('hbC1', 'HB3');
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'HB3' }, retries: 1 });
    await runningOn(svc, rec.id, first);
    const second = await worker('hbC2', 'HB3');
    first.proc.kill('SIGTERM');
    expect(await exited(first.proc), first.stderr()).toEqual({ code: 0, signal: null });
    await runningOn(svc, rec.id, second);
    second.proc.kill('SIGINT');
    expect(await exited(second.proc), second.stderr()).toEqual({ code: 0, signal: null });
    const f = await svc.waitForResult(rec.id);
    expect({ status: f.status, error: f.error }).toEqual({ status: 'failed', error: 'worker shut down' });
    const events = await streamOf(rec.id);
    expect(logs(events)).toEqual(
      expect.arrayContaining([
        `worker ${first.id} shut down (SIGTERM); build handed back to the queue, attempt 2 of 2`,
        `worker ${second.id} shut down (SIGINT); no attempt left (this was attempt 2 of 2): the build fails`,
      ]),
    );
    expect(events.filter((e) => e.type === 'build.cancelling')).toEqual([]);
    expect(starts(events)).toEqual([first.id, second.id]);
  }, 90_000);

  it('a build a person stops while its worker shuts down stays cancelled: not handed back, not run again', async () => {
    const svc = await serve();
    const w = await worker('hbD1', 'HB4');
    const rec = await svc.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'HB4' }, retries: 3 });
    await runningOn(svc, rec.id, w);
    // The build worker process, stopped, reads no cancel: the shutdown waits on it (the harness's
    // --cancel-kill-ms 3000), and the person's Stop lands inside that wait.
    const buildWorkers = childPids(w.proc.pid!);
    expect(buildWorkers.length, 'the build worker process').toBeGreaterThan(0);
    for (const pid of buildWorkers) process.kill(pid, 'SIGSTOP');
    w.proc.kill('SIGTERM');
    await until(() => /SIGTERM, stopping running builds/.test(w.stderr()), 10_000, 'the shutdown to begin');
    expect(svc.cancelBuild(rec.id, 'user')).toBe(true);
    const f = await svc.waitForResult(rec.id);
    expect(f.status, JSON.stringify(f)).toBe('cancelled');
    expect(await exited(w.proc), w.stderr()).toEqual({ code: 0, signal: null });
    const events = await streamOf(rec.id);
    // The stopped build worker never said it was cancelling; whatever says so names the person.
    expect(events.filter((e) => e.type === 'build.cancelling' && e.reason !== 'user')).toEqual([]);
    expect(logs(events).filter((m) => /handed back/.test(m))).toEqual([]);
    expect(starts(events)).toEqual([w.id]);
  }, 90_000);

  it('a worker that died between handing a build back and queueing its next attempt: serve queues it, and a worker runs it', async () => {
    const svc = await serve();
    const rec = await svc.startBuild({ modelPath: model, options: sim(0.5), target: { gpu: 'HB5' }, retries: 1 });
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    const store = new FarmStore(raw);
    try {
      // A worker "ghost" (a live heartbeat listing the build) took the build by hand: claimed it
      // and removed its job, as taking a job does.
      await raw.set(keys.worker('ghost'), JSON.stringify({ id: 'ghost', labels: { gpu: 'HB5' }, concurrency: 1, running: [rec.id], host: 'h', pid: 1 }), 'PX', 60_000);
      expect(await store.claim(rec.id, 'ghost/t1')).toBe(1);
      await new Queue(poolQueueName({ gpu: 'HB5' }), { connection: raw }).remove(buildJob(rec.id, 1).opts.jobId);
      await until(() => svc.getBuild(rec.id)?.state === 'running', 10_000, 'serve to see the build running');
      // It hands the build back, and dies before it adds the next attempt's job.
      expect(await store.handBack(rec.id, 'ghost/t1', { ...(svc.getBuild(rec.id) as FarmRecord), state: 'queued' })).toBe('requeued');
      await raw.del(keys.worker('ghost'));
      await until(() => svc.getBuild(rec.id)?.state === 'queued', 10_000, 'serve to see the build queued again');
      const w = await worker('hbE1', 'HB5');
      const f = await svc.waitForResult(rec.id);
      expect(f.status, JSON.stringify(f)).toBe('succeeded');
      expect(starts(await streamOf(rec.id))).toEqual([w.id]);
    } finally {
      await raw.del(keys.worker('ghost'));
      raw.disconnect();
    }
  }, 90_000);
});

/** The processes whose parent is `pid` (a farm worker's build workers). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      // Field 4 (ppid) follows the command name, which is in parentheses and may hold spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
