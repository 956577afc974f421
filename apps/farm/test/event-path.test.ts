// The path events take through Redis, against a real redis-server: what decides how fast a farm
// build's events (build.finished after a Stop among them) reach serve's subscribers.
//  - The worker's forwarder puts everything the build emitted while an append was on its way into
//    the next append, instead of queueing one round trip per local batch behind each other.
//  - serve's blocking read of the build streams is woken when a build joins it, so a new build's
//    events are read at once, not when a read in progress gives up (no fixed poll interval).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { PROTOCOL_VERSION, type BuildEvent, type BuildRecord } from '../../shared/protocol.js';
import { Forwarder } from '../event-forwarder.js';
import { FarmStore } from '../farm-store.js';
import { QueueBuildService } from '../queue-service.js';
import { queuedRecord, logEvent } from './records.js';
import { rmDir, startRedis, stopAll, until, type RedisServer } from './harness.js';

let dir: string;
let server: RedisServer;
let redis: Redis;

/** A store that counts its appends (each one Lua call, one round trip). */
class CountingStore extends FarmStore {
  appends = 0;
  override append(id: string, events: BuildEvent[], owner: string): Promise<BuildEvent[] | undefined> {
    this.appends++;
    return super.append(id, events, owner);
  }
}

beforeAll(async () => {
  dir = tempDir('tbs-farm-events-');
  fs.mkdirSync(path.join(dir, 'redis'));
  server = await startRedis(path.join(dir, 'redis'));
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await stopAll();
  if (dir) rmDir(dir);
});

describe('farm event path', () => {
  it('the forwarder sends what piled up during an append in one append, in order, build.finished last', async () => {
    const store = new CountingStore(redis);
    const id = await store.nextBuildId();
    await store.createBuild(queuedRecord(id), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
    expect(await store.claim(id, 'w1/t')).toBe(1);
    const base = (await store.getRecord(id))!;
    const fwd = new Forwarder(store, id, 'w1/t', base, { id: 'w1', labels: {} }, 0, 1, () => undefined);
    const local: BuildRecord = { ...base, state: 'running' };
    // 500 local batches of one event each, as a build emits them while Redis is busy answering.
    for (let i = 0; i < 500; i++) fwd.push([logEvent('local-1', `line ${i}`, i)], () => local);
    const finished = { v: PROTOCOL_VERSION, buildId: 'local-1', seq: 500, t: 1, type: 'build.finished', status: 'cancelled', durationMs: 1 } as BuildEvent;
    fwd.push([finished], () => ({ ...local, state: 'cancelled', outcome: finished as BuildRecord['outcome'] }));
    await fwd.flush({ ...local, state: 'cancelled', outcome: finished as BuildRecord['outcome'] });

    const stored = await store.eventsAfter(id, -1);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 501 }, (_, i) => i));
    expect(stored.slice(0, 500).map((e) => (e as Extract<BuildEvent, { type: 'log' }>).message)).toEqual(Array.from({ length: 500 }, (_, i) => `line ${i}`));
    expect(stored[500]).toMatchObject({ type: 'build.finished', status: 'cancelled', buildId: id });
    // One round trip per local batch would be 501 appends, each waiting for the one before.
    expect(store.appends).toBeLessThan(10);
  });

  it('serve reads a build that joins while its read is blocked at once, not when the read gives up', async () => {
    const model = writeModel(path.join(dir, 'model.onnx'), { layers: 3 });
    // A read that would wait a minute: only the wake can end it early.
    const svc = await QueueBuildService.create({ url: server.url, checkMs: 250, heartbeatTtlMs: 1500, readBlockLimitMs: 60_000, log: () => undefined });
    try {
      // Let the reader block (nothing to follow yet but its wake stream).
      await new Promise((r) => setTimeout(r, 500));
      const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated' }, target: { gpu: 'nowhere' } });
      const store = new FarmStore(redis);
      // The queue service notes "no live worker matches" first; then a line of our own.
      await until(() => (svc.getBuild(rec.id)?.lastSeq ?? -1) >= 0, 10_000, 'the queued note');
      const t0 = Date.now();
      const [ev] = (await store.append(rec.id, [logEvent(rec.id, 'written by someone else')], ''))!;
      await until(() => (svc.getBuild(rec.id)?.lastSeq ?? -1) >= ev.seq, 20_000, 'serve to read the new event');
      // Well inside the minute the read would otherwise have waited.
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect(svc.getView(rec.id)!.seq).toBe(ev.seq);
    } finally {
      await svc.shutdown();
    }
  });
});
