// What anything with write access to Redis or the shared artifact folder can put there must not
// stop serve, hang a build, stall the workers, or make serve hand out a file outside the artifact
// folder (issue 40 item 6). Garbage is generated here and written straight into this test's own
// redis-server with ioredis; the real `serve --queue` and worker processes then meet it.
import type { ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { spawnCli } from '../../../test/support/cli.js';
import { SharedFolderArtifacts } from '../artifacts.js';
import { keys, poolQueueName } from '../keys.js';
import { killProc, rmDir, startRedis, startWorker, stopAll, until, type RedisServer, type WorkerProc } from './harness.js';

const sim = (simDuration: number) => ({ backend: 'simulated' as const, simDuration, simSeed: 3 });
let dir: string;
let model: string;
let redis: RedisServer;
let raw: Redis;
let artifacts: SharedFolderArtifacts;
let wG: WorkerProc;

interface Serve {
  proc: ChildProcess;
  base: string;
  stderr: () => string;
  api: (p: string, body?: unknown) => Promise<Response>;
}

/** A real `serve --queue` process; resolves once it printed its URL. */
const serves: ChildProcess[] = [];

async function serve(): Promise<Serve> {
  const proc = spawnCli(['serve', '--queue', redis.url, '--artifacts', artifacts.root, '--port', '0', '--token', 'tok']);
  serves.push(proc);
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /^(http:\/\/127\.0\.0\.1:\d+)\//m.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`serve exited (${code}) before printing its URL; stderr: ${err.slice(-2000)}`)));
  });
  const api = (p: string, body?: unknown) =>
    fetch(`${base}${p}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
  return { proc, base, stderr: () => err, api };
}

async function stop(s: Serve): Promise<void> {
  await killProc(s.proc, 'SIGTERM');
}

const alive = (s: Serve) => s.proc.exitCode === null && s.proc.signalCode === null;

/** Builds a test made: forgotten after it (with whatever garbage it added), so each test meets only its own. */
const made: string[] = [];

async function startBuild(s: Serve, gpu: string, seconds: number): Promise<string> {
  const r = await s.api('/api/builds', { modelPath: model, options: sim(seconds), target: { gpu } });
  expect(r.status).toBe(201);
  const id = ((await r.json()) as { id: string }).id;
  made.push(id);
  return id;
}

async function stateOf(s: Serve, id: string): Promise<string> {
  const r = await s.api(`/api/builds/${id}`);
  const body = await r.text();
  if (r.status !== 200) throw new Error(`GET /api/builds/${id}: ${r.status} ${body}; serve's stderr: ${s.stderr().slice(-2000)}`);
  const { state, outcome } = JSON.parse(body) as { state: string; outcome?: { error?: string } };
  if (state === 'failed' || state === 'crashed') throw new Error(`build ${id} ${state}: ${outcome?.error}; serve's stderr: ${s.stderr().slice(-2000)}`);
  return state;
}

/** Random bytes that are not JSON (a '{' first, so they look like a record to a careless reader). */
const notJson = () => `{${crypto.randomBytes(24).toString('base64')}`;

beforeAll(async () => {
  dir = tempDir('tbs-farm-garbage-');
  fs.mkdirSync(path.join(dir, 'redis'));
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 4 });
  artifacts = new SharedFolderArtifacts(path.join(dir, 'artifacts'));
  artifacts.ensure();
  redis = await startRedis(path.join(dir, 'redis'));
  raw = new Redis(redis.url, { maxRetriesPerRequest: null });
  wG = await startWorker(redis.url, 'wG', 'gpu=G1', ['--artifacts', artifacts.root]);
}, 60_000);

afterEach(async () => {
  for (const p of serves.splice(0)) await killProc(p, 'SIGTERM');
  await raw.multi().del(keys.worker('wJunk'), keys.worker('wShape')).srem(keys.workers, 'wJunk', 'wShape').exec();
  for (const id of made.splice(0)) await raw.multi().zrem(keys.history, id).del(keys.build(id), keys.events(id), keys.seq(id), keys.final(id), keys.cancel(id)).exec();
});

afterAll(async () => {
  raw?.disconnect();
  await stopAll();
  if (dir) rmDir(dir);
});

describe('the farm verifies what it reads from Redis', () => {
  it('a stream entry whose payload is not JSON is skipped and named; serve keeps running', async () => {
    const s = await serve();
    try {
      // A build no worker matches stays queued: serve tails its stream.
      const id = await startBuild(s, 'NOBODY', 0.2);
      await raw.xadd(keys.events(id), '0-500', 'e', notJson());
      await raw.xadd(keys.events(id), '0-501', 'x', 'y');
      await raw.xadd(keys.events(id), '0-502', 'e', JSON.stringify({ v: 1, buildId: 'another', seq: 501, t: 0, type: 'log', severity: 'info', message: 'm' }));
      await until(() => s.stderr().includes(`${keys.events(id)} 0-500`) && s.stderr().includes('not JSON'), 10_000, 'the bad entry to be named');
      // Still serving, and the forged entries moved nothing.
      expect(alive(s)).toBe(true);
      expect((await s.api(`/api/builds/${id}`)).status).toBe(200);
      expect(await stateOf(s, id)).toBe('queued');
      expect((await s.api(`/api/builds/${id}/cancel`, {})).status).toBe(202);
      await until(async () => (await stateOf(s, id)) === 'cancelled', 15_000, 'the build to end cancelled');
    } finally {
      await stop(s);
    }
  });

  it('an entry added with an automatic id does not block the worker: the build still ends', async () => {
    const s = await serve();
    try {
      const id = await startBuild(s, 'G1', 2);
      await until(async () => (await raw.xlen(keys.events(id))) > 2, 20_000, 'the build to run');
      // Valid JSON, so only its id is in the way (an automatic id is \`<ms>-<n>\`, above every \`0-<n>\`).
      await raw.xadd(keys.events(id), '*', 'e', JSON.stringify({ note: 'not an event' }));
      await until(async () => (await stateOf(s, id)) === 'succeeded', 30_000, 'the build to succeed');
      expect(alive(s)).toBe(true);
    } finally {
      await stop(s);
    }
  });

  it('garbage build records (not JSON, wrong shape, not a hash) do not stop serve from starting; each is named', async () => {
    const bad = ['fbad1-json', 'fbad2-shape', 'fbad3-type'];
    await raw.hset(keys.build(bad[0]), { state: 'running', record: notJson(), owner: '' });
    await raw.hset(keys.build(bad[1]), { state: 'running', record: JSON.stringify({ id: bad[1], state: 'running', lastSeq: 'many' }), owner: '' });
    await raw.set(keys.build(bad[2]), notJson());
    for (const id of bad) await raw.zadd(keys.history, Date.now(), id);
    made.push(...bad);
    const s = await serve();
    try {
      await until(() => bad.every((id) => s.stderr().includes(keys.build(id))), 10_000, 'every bad record to be named');
      const list = await s.api('/api/builds');
      expect(list.status).toBe(200);
      const ids = ((await list.json()) as Array<{ id: string }>).map((b) => b.id);
      for (const id of bad) expect(ids).not.toContain(id);
      // And it still runs builds.
      const id = await startBuild(s, 'G1', 0.2);
      await until(async () => (await stateOf(s, id)) === 'succeeded', 30_000, 'a build to succeed');
    } finally {
      await stop(s);
    }
  });

  it('a garbage heartbeat does not make GET /api/farm fail; it is named and not shown as a worker', async () => {
    await raw
      .multi()
      .set(keys.worker('wJunk'), notJson(), 'PX', 60_000)
      .set(keys.worker('wShape'), JSON.stringify({ id: 'wShape', labels: 'gpu' }), 'PX', 60_000)
      .sadd(keys.workers, 'wJunk', 'wShape')
      .exec();
    const s = await serve();
    try {
      const r = await s.api('/api/farm');
      expect(r.status).toBe(200);
      const st = (await r.json()) as { workers: Array<{ id: string }> };
      expect(st.workers.map((w) => w.id)).toContain('wG');
      expect(st.workers.map((w) => w.id)).not.toContain('wJunk');
      expect(st.workers.map((w) => w.id)).not.toContain('wShape');
      await until(() => s.stderr().includes(keys.worker('wJunk')) && s.stderr().includes(keys.worker('wShape')), 10_000, 'the bad heartbeats to be named');
    } finally {
      await stop(s);
    }
  });

  it('a pools entry that is no pool (a name BullMQ refuses, a queue whose keys hold garbage) is named and skipped; the worker goes on taking builds', async () => {
    const s = await serve();
    const broken = 'tbs-pool-00000000deadbeef';
    try {
      // An empty target matches every worker: each would read these on every poll.
      await raw.hset(keys.pools, 'not:a:pool', '', broken, '');
      await raw.set(`bull:${broken}:wait`, 'not a list');
      const id = await startBuild(s, 'G1', 0.2);
      await until(async () => (await stateOf(s, id)) === 'succeeded', 30_000, 'a build beside the broken pools to succeed');
      await until(() => wG.stderr().includes(`${keys.pools} not:a:pool`) && wG.stderr().includes(`bull:${broken}`), 10_000, 'the bad pools to be named');
    } finally {
      await raw.hdel(keys.pools, 'not:a:pool', broken);
      await raw.del(`bull:${broken}:wait`);
      await stop(s);
    }
  });

  it('a pools key that is not a hash: GET /api/farm answers, it is named, and the next build queued replaces it and runs', async () => {
    const s = await serve();
    const saved = await raw.hgetall(keys.pools);
    try {
      await raw.del(keys.pools);
      await raw.set(keys.pools, notJson());
      expect((await s.api('/api/farm')).status).toBe(200);
      const id = await startBuild(s, 'G1', 0.2);
      await until(async () => (await stateOf(s, id)) === 'succeeded', 30_000, 'a build queued over the garbage to succeed');
      await until(() => s.stderr().includes(`${JSON.stringify(keys.pools)}: not a hash of pools`), 10_000, 'the bad key to be named');
    } finally {
      await raw.del(keys.pools);
      if (Object.keys(saved).length) await raw.hset(keys.pools, saved);
      await stop(s);
    }
  });

  it('a poison job fails once with its reason; the worker goes on taking builds', async () => {
    const s = await serve();
    const pool = poolQueueName({ gpu: 'G1' });
    const q = new Queue(pool, { connection: raw.duplicate() });
    try {
      await q.obliterate({ force: true });
      await raw.hset(keys.pools, pool, 'gpu=G1');
      const poison = await Promise.all([q.add('build', null, { jobId: 'poison-null' }), q.add('build', { buildId: { $gt: 1 } }, { jobId: 'poison-obj' })]);
      for (const job of poison) {
        await until(async () => (await q.getJobState(job.id!)) === 'failed', 20_000, `job ${job.id} to fail`);
        const failed = await q.getJob(job.id!);
        expect(failed?.failedReason).toMatch(/not a farm build job/);
        expect(failed?.attemptsMade).toBeLessThanOrEqual(1);
      }
      const id = await startBuild(s, 'G1', 0.2);
      await until(async () => (await stateOf(s, id)) === 'succeeded', 30_000, 'a build after the poison to succeed');
    } finally {
      await q.obliterate({ force: true }).catch(() => undefined);
      await q.close();
      await stop(s);
    }
  });
});

describe('serve hands out only the engine the build wrote, from the artifact folder', () => {
  async function succeeded(): Promise<{ id: string; engine: string }> {
    const s = await serve();
    try {
      const id = await startBuild(s, 'G1', 0.2);
      await until(async () => (await stateOf(s, id)) === 'succeeded', 30_000, 'the build to succeed');
      const eng = await s.api(`/api/builds/${id}/engine`);
      expect(eng.status).toBe(200);
      expect(await eng.text()).toMatch(/SIMULATED ENGINE/);
      // The worker writes its final record just after build.finished.
      let rec: { outcome?: { outputPath: string } } = {};
      await until(async () => (rec = JSON.parse((await raw.hget(keys.build(id), 'record'))!)).outcome !== undefined, 10_000, 'the final record');
      return { id, engine: rec.outcome!.outputPath };
    } finally {
      await stop(s);
    }
  }

  it('a record edited to name /etc/passwd (identity forged too) serves nothing', async () => {
    const { id } = await succeeded();
    const rec = JSON.parse((await raw.hget(keys.build(id), 'record'))!) as Record<string, any>;
    const st = fs.statSync('/etc/passwd');
    rec.outputPath = '/etc/passwd';
    rec.outcome.outputPath = '/etc/passwd';
    rec.farm.engine = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    await raw.hset(keys.build(id), 'record', JSON.stringify(rec));
    const s = await serve();
    try {
      const r = await s.api(`/api/builds/${id}/engine`);
      const body = await r.text();
      expect(r.status).toBe(404);
      expect(body).not.toContain('root:');
    } finally {
      await stop(s);
    }
  });

  it('an engine replaced by a symbolic link in the shared folder is not followed; a rewritten one is not served either', async () => {
    const secret = path.join(dir, 'secret.txt');
    fs.writeFileSync(secret, 'SECRET OF THE SERVE HOST');
    const a = await succeeded();
    fs.rmSync(a.engine);
    fs.symlinkSync(secret, a.engine);
    const b = await succeeded();
    // Same path, other bytes: not the file the build wrote.
    fs.writeFileSync(b.engine, 'SIMULATED ENGINE but not the one');
    const s = await serve();
    try {
      for (const id of [a.id, b.id]) {
        const r = await s.api(`/api/builds/${id}/engine`);
        const body = await r.text();
        expect(r.status, body).toBe(404);
        expect(body).not.toContain('SECRET');
      }
    } finally {
      await stop(s);
    }
  });
});
