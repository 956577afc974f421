// The farm worker's forwarder under a stalled Redis, against a real redis-server stopped with
// SIGSTOP (it answers nothing, the connection stays up: what a swapping or overloaded Redis looks
// like): what waits for the next append stays within its byte bound (steps coalesced, the build
// held through push()'s promise), and once Redis goes on, the stream still ends with
// build.finished, with every phase start and finish and every log line, in order.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { eventBytes } from '../../shared/event-bytes.js';
import { PROTOCOL_VERSION, type BuildEvent, type BuildRecord } from '../../shared/protocol.js';
import { Forwarder } from '../event-forwarder.js';
import { FarmStore } from '../farm-store.js';
import { QueueBuildService } from '../queue-service.js';
import { queuedRecord } from './records.js';
import { rmDir, startRedis, startWorker, stopAll, until, type RedisServer } from './harness.js';

let dir: string;
let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  dir = tempDir('tbs-farm-bound-');
  fs.mkdirSync(path.join(dir, 'redis'));
  server = await startRedis(path.join(dir, 'redis'));
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
}, 60_000);

afterAll(async () => {
  if (server?.proc.pid) process.kill(server.proc.pid, 'SIGCONT');
  redis?.disconnect();
  await stopAll();
  if (dir) rmDir(dir);
});

const L = 'local-1';
let seq = 0;
const ev = (e: Record<string, unknown>): BuildEvent => ({ v: PROTOCOL_VERSION, buildId: L, seq: seq++, t: seq, ...e }) as BuildEvent;

describe('the farm forwarder with Redis stalled', () => {
  it('holds the build past its byte bound instead of growing; nothing but superseded steps is lost once Redis goes on', async () => {
    const store = new FarmStore(redis);
    const id = await store.nextBuildId();
    await store.createBuild(queuedRecord(id), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
    expect(await store.claim(id, 'w1/t')).toBe(1);
    const base = (await store.getRecord(id))!;
    const bound = 128 * 1024;
    const fwd = new Forwarder(store, id, 'w1/t', base, { id: 'w1', labels: {} }, 0, 1, () => undefined, bound);
    const local: BuildRecord = { ...base, state: 'running' };

    // The build's first phase reaches Redis; then Redis stops answering.
    let phase = 0;
    fwd.push(
      [ev({ type: 'log', severity: 'info', message: 'starting' }), ev({ type: 'phase.start', id: phase, parentId: null, name: `Phase ${phase}`, nbSteps: 300, instance: 0 })],
      () => local,
    );
    await until(async () => (await store.eventsAfter(id, -1)).length === 2, 10_000, 'the first events in Redis');
    process.kill(server.proc.pid!, 'SIGSTOP');

    // A build that honours push()'s promise (as the local build worker does through pacesBuild):
    // 3000 local batches, each three steps and a log line, a new phase every 100.
    const logs: string[] = [];
    let batches = 0;
    let held = 0;
    let peakWaiting = 0;
    let biggestBatch = 0;
    const build = (async () => {
      for (let i = 0; i < 3000; i++) {
        const batch: BuildEvent[] = [];
        if (i > 0 && i % 100 === 0) {
          batch.push(ev({ type: 'phase.finish', id: phase, stepsDone: 300, early: false }));
          phase++;
          batch.push(ev({ type: 'phase.start', id: phase, parentId: null, name: `Phase ${phase}`, nbSteps: 300, instance: 0 }));
        }
        for (let k = 0; k < 3; k++) batch.push(ev({ type: 'phase.step', id: phase, step: 3 * (i % 100) + k, stepsDone: 3 * (i % 100) + k + 1 }));
        const message = `line ${i} ${'x'.repeat(300)}`;
        logs.push(message);
        batch.push(ev({ type: 'log', severity: 'info', message }));
        biggestBatch = Math.max(
          biggestBatch,
          batch.reduce((n, e) => n + eventBytes(e), 0),
        );
        const room = fwd.push(batch, () => local);
        peakWaiting = Math.max(peakWaiting, fwd.waitingBytes);
        batches++;
        if (room) {
          held++;
          await room;
        }
      }
    })();

    try {
      // Stalled: the build is held well before its end, and what waits stays within the bound.
      await until(() => held > 0, 10_000, 'the forwarder to hold the build');
      await new Promise((r) => setTimeout(r, 1000));
      const stalledAt = batches;
      expect(stalledAt).toBeLessThan(3000);
      await new Promise((r) => setTimeout(r, 500));
      expect(batches, 'no batch taken while Redis is stopped and the bound is reached').toBe(stalledAt);
      expect(peakWaiting).toBeLessThanOrEqual(bound + biggestBatch);
      expect(fwd.waitingBytes).toBeLessThanOrEqual(bound + biggestBatch);
    } finally {
      process.kill(server.proc.pid!, 'SIGCONT');
    }
    await build;
    expect(peakWaiting).toBeLessThanOrEqual(bound + biggestBatch);
    const finished = ev({ type: 'build.finished', status: 'succeeded', durationMs: 1 });
    fwd.push([ev({ type: 'phase.finish', id: phase, stepsDone: 300, early: false }), finished], () => local);
    await fwd.flush({ ...local, state: 'succeeded', outcome: finished as BuildRecord['outcome'] });

    const stored = await store.eventsAfter(id, -1);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i));
    expect(stored.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded', buildId: id });
    // Every phase started and finished, in order; every log line, in order.
    const phases = stored.filter((e) => e.type === 'phase.start' || e.type === 'phase.finish').map((e) => `${e.type} ${(e as { id: number }).id}`);
    expect(phases).toEqual(Array.from({ length: 30 }, (_, k) => [`phase.start ${k}`, `phase.finish ${k}`]).flat());
    expect(stored.filter((e) => e.type === 'log').map((e) => (e as Extract<BuildEvent, { type: 'log' }>).message)).toEqual(['starting', ...logs]);
    // Steps that waited were coalesced (the latest of a phase kept), not all 9000 written.
    expect(stored.filter((e) => e.type === 'phase.step').length).toBeLessThan(9000);
  }, 60_000);

  it('a real farm build (worker process, simulated backend) with Redis stopped mid-build ends succeeded, its stream whole', async () => {
    // The pacesBuild wiring end to end: the build is held or goes on while Redis answers nothing,
    // and once it does, the stream ends with build.finished, every phase started is finished.
    // Heartbeats outlive the stop (a stopped Redis expires keys by its clock when it goes on).
    const model = writeModel(path.join(dir, 'model.onnx'), { layers: 8 });
    await startWorker(server.url, 'wStall', 'gpu=stall', ['--heartbeat-ms', '60000']);
    const svc = await QueueBuildService.create({ url: server.url, checkMs: 250, heartbeatTtlMs: 60_000, log: () => undefined });
    try {
      const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 3, simSeed: 3 }, target: { gpu: 'stall' } });
      await until(() => (svc.getView(rec.id)?.rows.rows.length ?? 0) > 2, 30_000, 'the build to run');
      const stoppedAt = Date.now();
      process.kill(server.proc.pid!, 'SIGSTOP');
      try {
        await new Promise((r) => setTimeout(r, 2000));
      } finally {
        process.kill(server.proc.pid!, 'SIGCONT');
      }
      const f = await svc.waitForResult(rec.id);
      expect(f.status).toBe('succeeded');
      // It was running when Redis stopped, not over before.
      expect(Date.parse(svc.getBuild(rec.id)!.finishedAt!)).toBeGreaterThan(stoppedAt);
      const stored = await new FarmStore(redis).eventsAfter(rec.id, -1);
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i));
      expect(stored.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
      const started = stored.filter((e) => e.type === 'phase.start').map((e) => (e as { id: number }).id);
      const finished = stored.filter((e) => e.type === 'phase.finish').map((e) => (e as { id: number }).id);
      expect(started.length).toBeGreaterThan(3);
      expect([...finished].sort((a, b) => a - b)).toEqual([...started].sort((a, b) => a - b));
    } finally {
      await svc.shutdown();
    }
  }, 120_000);
});
