// Builds serve ends itself (Stop while still queued, a worker lost) against a real redis-server
// and a real farm worker process: the record serve writes to Redis carries the build view, so a
// serve started later (a new queue service on the same Redis) shows the finished build whole, as
// GET /api/builds/{id}/view hands it out: final status, outcome, no open phase, the full tree.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import type { BuildViewSnapshot } from '../../shared/build-view.js';
import { Redis } from 'ioredis';
import { FINAL_STATES, type FarmRecord } from '../farm-store.js';
import { keys } from '../keys.js';
import { QueueBuildService } from '../queue-service.js';
import { killProc, LOSS_HEARTBEAT, rmDir, startRedis, startWorker, stopAll, until, type RedisServer } from './harness.js';

const sim = (simDuration: number) => ({ backend: 'simulated' as const, simDuration, simSeed: 3 });

let dir: string;
let model: string;
let redis: RedisServer;
const services: QueueBuildService[] = [];

async function serve(): Promise<QueueBuildService> {
  const s = await QueueBuildService.create({ url: redis.url, checkMs: 250, heartbeatTtlMs: 1500, log: () => undefined });
  services.push(s);
  return s;
}

/** The view as the HTTP route hands it out: through JSON, as a client receives it. */
function viewOf(svc: QueueBuildService, id: string): BuildViewSnapshot {
  const v = svc.getView(id);
  expect(v, `view of ${id}`).toBeDefined();
  return JSON.parse(JSON.stringify(v)) as BuildViewSnapshot;
}

/**
 * serve settles waiters as soon as build.finished is in the stream; its record write follows.
 * A restart test starts the next serve once that write is in Redis.
 */
async function finalRecordStored(id: string): Promise<FarmRecord> {
  const r = new Redis(redis.url);
  try {
    let rec: FarmRecord | undefined;
    await until(
      async () => {
        const raw = await r.hget(keys.build(id), 'record');
        rec = raw ? (JSON.parse(raw) as FarmRecord) : undefined;
        return rec !== undefined && FINAL_STATES.has(rec.state);
      },
      10_000,
      `the final record of ${id} in Redis`,
    );
    return rec!;
  } finally {
    r.disconnect();
  }
}

beforeAll(async () => {
  dir = tempDir('tbs-farm-records-');
  fs.mkdirSync(path.join(dir, 'redis'));
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
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

describe('records serve writes itself carry the build view', () => {
  it('a build cancelled while queued: a restarted serve shows it cancelled, with its log, no open phase', async () => {
    const first = await serve();
    const rec = await first.startBuild({ modelPath: model, options: sim(0.3), target: { gpu: 'NOSUCHGPU' } });
    await until(() => (first.getView(rec.id)?.logs ?? []).some((l) => /no live worker matches/.test(l.message)), 10_000, 'the waiting note in the view');
    expect(first.cancelBuild(rec.id)).toBe(true);
    const f = await first.waitForResult(rec.id);
    expect(f.status).toBe('cancelled');
    const before = viewOf(first, rec.id);
    expect((await finalRecordStored(rec.id)).view?.status).toBe(f.status);
    await first.shutdown();

    const second = await serve();
    expect(second.getBuild(rec.id)?.state).toBe('cancelled');
    const view = viewOf(second, rec.id);
    expect(view.status).toBe('cancelled');
    expect(view.outcome).toMatchObject({ type: 'build.finished', status: 'cancelled', seq: f.seq });
    expect(view.seq).toBe(f.seq);
    expect(view.cancelling?.reason).toBe('user');
    expect(view.rows.open).toEqual([]);
    expect(view.logs.some((l) => /no live worker matches target gpu=NOSUCHGPU/.test(l.message))).toBe(true);
    expect(view).toEqual(before);
  }, 60_000);

  it('a worker lost mid-build: a restarted serve shows the tree it had run, ended crashed, no open phase', async () => {
    const w = await startWorker(redis.url, 'wLost', 'gpu=K80', LOSS_HEARTBEAT);
    const first = await serve();
    const rec = await first.startBuild({ modelPath: model, options: sim(30), target: { gpu: 'K80' } });
    await until(() => (first.getView(rec.id)?.rows.rows.length ?? 0) > 2, 20_000, 'the build to run');
    await killProc(w.proc, 'SIGKILL');
    const f = await first.waitForResult(rec.id);
    expect(f).toMatchObject({ status: 'crashed', error: 'worker lost' });
    const before = viewOf(first, rec.id);
    expect(before.rows.rows.length).toBeGreaterThan(2);
    expect((await finalRecordStored(rec.id)).view?.status).toBe('crashed');
    await first.shutdown();

    const second = await serve();
    const view = viewOf(second, rec.id);
    expect(view.status).toBe('crashed');
    expect(view.outcome).toMatchObject({ status: 'crashed', error: 'worker lost', seq: f.seq });
    expect(view.seq).toBe(f.seq);
    expect(view.rows.open).toEqual([]);
    expect(view.started?.worker?.id).toBe('wLost');
    // The phases the worker ran before it was lost are all there, not an empty tree.
    expect(view.rows.rows).toEqual(before.rows.rows);
    expect(view.logs.some((l) => /worker lost: wLost stopped sending heartbeats/.test(l.message))).toBe(true);
  }, 60_000);

  it('a finished record stored without a view (an older serve wrote it): the view is rebuilt from the stream', async () => {
    const first = await serve();
    const rec = await first.startBuild({ modelPath: model, options: sim(0.3), target: { gpu: 'NOSUCHGPU2' } });
    await until(() => (first.getView(rec.id)?.logs ?? []).some((l) => /no live worker matches/.test(l.message)), 10_000, 'the waiting note in the view');
    expect(first.cancelBuild(rec.id)).toBe(true);
    const f = await first.waitForResult(rec.id);
    const before = viewOf(first, rec.id);
    const stored = await finalRecordStored(rec.id);
    await first.shutdown();
    // What serve wrote before its records carried a view.
    const r = new Redis(redis.url);
    const { view: _dropped, ...bare } = stored;
    await r.hset(keys.build(rec.id), 'record', JSON.stringify(bare));
    r.disconnect();

    const second = await serve();
    const view = viewOf(second, rec.id);
    expect(view).toMatchObject({ status: 'cancelled', seq: f.seq, outcome: { status: 'cancelled' } });
    expect(view.rows.open).toEqual([]);
    expect(view).toEqual(before);
  }, 60_000);

  it("a build its worker ends without running it (the model is gone on that machine): the worker's record has the view too", async () => {
    const first = await serve();
    const gone = writeModel(path.join(dir, 'gone.onnx'), { layers: 3 });
    const rec = await first.startBuild({ modelPath: gone, options: sim(0.3), target: { gpu: 'LATE' } });
    await until(() => (first.getView(rec.id)?.logs ?? []).some((l) => /no live worker matches/.test(l.message)), 10_000, 'the waiting note in the view');
    fs.rmSync(gone);
    await startWorker(redis.url, 'wLate', 'gpu=LATE');
    const f = await first.waitForResult(rec.id);
    expect(f.status).toBe('failed');
    expect(f.error).toMatch(/gone\.onnx/);
    const stored = await finalRecordStored(rec.id);
    expect(stored.view?.status).toBe('failed');
    await first.shutdown();

    const second = await serve();
    const view = viewOf(second, rec.id);
    expect(view).toMatchObject({ status: 'failed', seq: f.seq, outcome: { status: 'failed', error: f.error } });
    expect(view.rows.open).toEqual([]);
    // The note serve wrote into the stream while the build waited is in the worker's view too.
    expect(view.logs.some((l) => /no live worker matches target gpu=LATE/.test(l.message))).toBe(true);
  }, 60_000);
});
