// The Redis pieces on their own, against a real redis-server: event numbering and fencing, the
// distributed lock, labels.
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/onnx-gen.js';
import { PROTOCOL_VERSION, type BuildEvent } from '../../shared/protocol.js';
import { FarmStore } from '../farm-store.js';
import { canonicalTarget, keys, poolQueueName } from '../keys.js';
import { checkTarget, matches, parseLabels, probeLabels } from '../labels.js';
import { acquireLock } from '../redis-lock.js';
import { queuedRecord, logEvent } from './records.js';
import { rmDir, startRedis, stopAll, type RedisServer } from './harness.js';

let dir: string;
let server: RedisServer;
let redis: Redis;
let store: FarmStore;

const fin = (buildId: string): BuildEvent => ({ v: PROTOCOL_VERSION, buildId, seq: 99, t: 1, type: 'build.finished', status: 'succeeded', durationMs: 1 });

beforeAll(async () => {
  dir = tempDir('tbs-farm-store-');
  server = await startRedis(dir);
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  store = new FarmStore(redis, { streamMaxLen: 50, historyMax: 3 });
});

afterAll(async () => {
  redis?.disconnect();
  await stopAll();
  if (dir) rmDir(path.resolve(dir));
});

describe('farm store', () => {
  it('Stop in one call: a queued build is claimed; a running one is counted and published with its count, and as the bare id', async () => {
    const queued = await store.nextBuildId();
    await store.createBuild(queuedRecord(queued), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
    expect(await store.requestStop(queued, 'serve-cancel', 'user')).toBe(0);
    expect(await store.getBuildFields(queued)).toMatchObject({ state: 'cancelling', owner: 'serve-cancel' });

    const running = await store.nextBuildId();
    await store.createBuild(queuedRecord(running), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
    expect(await store.claim(running, 'w1/t')).toBe(1);
    const sub = redis.duplicate();
    const got: Array<[string, string]> = [];
    sub.on('message', (ch: string, m: string) => got.push([ch, m]));
    await sub.subscribe(keys.stopChannel, keys.cancelChannel);
    try {
      expect(await store.requestStop(running, 'serve-cancel', 'user')).toBe(1);
      expect(await store.requestStop(running, 'serve-cancel', 'timeout')).toBe(2);
      expect(await store.cancelRequests(running)).toEqual({ n: 2, reason: 'timeout' });
      await new Promise((r) => setTimeout(r, 200));
      // In this order on one connection: each message with its count, then its bare-id twin.
      expect(got.map(([ch, m]) => [ch, ch === keys.stopChannel ? JSON.parse(m) : m])).toEqual([
        [keys.stopChannel, { id: running, n: 1, reason: 'user' }],
        [keys.cancelChannel, running],
        [keys.stopChannel, { id: running, n: 2, reason: 'timeout' }],
        [keys.cancelChannel, running],
      ]);
      expect((await store.getBuildFields(running)).state).toBe('running');
    } finally {
      sub.disconnect();
      // Unfinished builds are never trimmed: out of the way of the history test below.
      await redis.zrem(keys.history, queued, running);
    }
  });

  it('numbers events across writers, refuses a stale owner and anything after build.finished', async () => {
    const id = await store.nextBuildId();
    await store.createBuild(queuedRecord(id), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
    expect((await store.append(id, [logEvent(id, 'serve note')], ''))!.map((e) => e.seq)).toEqual([0]);
    expect(await store.claim(id, 'w1/t')).toBe(1);
    expect(await store.claim(id, 'w2/t')).toBe(0); // already taken
    expect((await store.append(id, [logEvent(id, 'a'), logEvent(id, 'b')], 'w1/t'))!.map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.append(id, [logEvent(id, 'x')], 'w2/t')).toBeUndefined();
    // Serve takes the build from w1 (lost): w1's later writes go nowhere.
    expect(await store.takeover(id, 'w1/t', 'serve-lost')).toBe(true);
    expect(await store.append(id, [logEvent(id, 'late')], 'w1/t')).toBeUndefined();
    expect(await store.putRecord({ ...queuedRecord(id), state: 'running' }, 'w1/t')).toBe(false);
    const end = await store.append(id, [fin(id), logEvent(id, 'after the end')], 'serve-lost');
    expect(end!.map((e) => e.type)).toEqual(['build.finished']);
    expect(await store.putRecord({ ...queuedRecord(id), state: 'crashed' }, 'serve-lost')).toBe(true);
    expect(await store.putRecord({ ...queuedRecord(id), state: 'succeeded' }, 'serve-lost')).toBe(false); // final stays final
    expect(await store.append(id, [logEvent(id, 'x')], '')).toBeUndefined();
    const all = await store.eventsAfter(id, -1);
    expect(all.map((e) => [e.seq, e.type === 'log' ? e.message : e.type])).toEqual([
      [0, 'serve note'],
      [1, 'a'],
      [2, 'b'],
      [3, 'build.finished'],
    ]);
    expect((await store.eventsAfter(id, 1)).map((e) => e.seq)).toEqual([2, 3]);
  });

  it('keeps a bounded history, dropping the oldest finished builds with their streams', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await store.nextBuildId();
      ids.push(id);
      await store.createBuild(queuedRecord(id), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
      await store.claim(id, 'o');
      await store.append(id, [fin(id)], 'o');
      await store.putRecord({ ...queuedRecord(id), state: 'succeeded' }, 'o');
    }
    const kept = await store.historyIds();
    expect(kept).toHaveLength(3);
    expect(kept).toEqual(ids.slice(-3));
    expect(await redis.exists(`tbs:events:${ids[0]}`)).toBe(0);
  });
});

describe("serve's event cap travels with each build", () => {
  it('a worker whose own default is larger still trims the stream to the cap serve created the build with', async () => {
    const serveSide = new FarmStore(redis, { streamMaxLen: 100, historyMax: 10 });
    const workerSide = new FarmStore(redis.duplicate(), { streamMaxLen: 20_000, historyMax: 10 });
    const id = await serveSide.nextBuildId();
    await serveSide.createBuild(queuedRecord(id), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
    expect(await redis.hget(keys.build(id), 'maxEvents')).toBe('100');
    await workerSide.claim(id, 'w');
    for (let i = 0; i < 10; i++) {
      await workerSide.append(
        id,
        Array.from({ length: 200 }, (_, j) => logEvent(id, `e${i * 200 + j}`)),
        'w',
      );
    }
    // MAXLEN ~ trims whole stream nodes (100 entries each by default): at most one node over.
    const len = await redis.xlen(keys.events(id));
    expect(len).toBeGreaterThanOrEqual(100);
    expect(len).toBeLessThanOrEqual(200);
    // Numbering is unaffected by trimming: the last event is still the 2,000th.
    const tail = await workerSide.eventsAfter(id, 1990);
    expect(tail.map((e) => e.seq)).toEqual([1991, 1992, 1993, 1994, 1995, 1996, 1997, 1998, 1999]);
    workerSide.redis.disconnect();
  });

  it("a build without a cap of its own (an older serve's) gets the appending worker's", async () => {
    const id = await store.nextBuildId();
    await store.createBuild(queuedRecord(id), { input: { modelPath: '/m.onnx' }, target: {}, retries: 0 });
    await redis.hdel(keys.build(id), 'maxEvents');
    await store.claim(id, 'w');
    for (let i = 0; i < 5; i++)
      await store.append(
        id,
        Array.from({ length: 100 }, (_, j) => logEvent(id, `e${j}`)),
        'w',
      );
    expect(await redis.xlen(keys.events(id))).toBeLessThanOrEqual(150);
  });
});

describe('distributed lock', () => {
  it('excludes a second holder until release, and only the holder releases it', async () => {
    const a = await acquireLock(redis, 'cache:/x', { ttlMs: 2000 });
    expect(a?.held).toBe(true);
    expect(await acquireLock(redis, 'cache:/x', { ttlMs: 2000, waitMs: 300 })).toBeUndefined();
    const waiting = acquireLock(redis, 'cache:/x', { ttlMs: 2000, waitMs: 5000, pollMs: 20 });
    await new Promise((r) => setTimeout(r, 100));
    await a!.release();
    const b = await waiting;
    expect(b?.held).toBe(true);
    // A's token is gone: releasing again must not free B's lock.
    await a!.release();
    expect(await acquireLock(redis, 'cache:/x', { ttlMs: 2000, waitMs: 100 })).toBeUndefined();
    await b!.release();
  });

  it('is renewed while held, and expires when its holder stops renewing', async () => {
    const a = await acquireLock(redis, 'cache:/y', { ttlMs: 300 });
    await new Promise((r) => setTimeout(r, 700)); // longer than the TTL: renewal keeps it
    expect(await acquireLock(redis, 'cache:/y', { ttlMs: 300, waitMs: 50 })).toBeUndefined();
    // A holder that died: simulate by deleting nothing and letting renewal stop.
    await a!.release();
    await redis.set('tbs:lock:cache:/z', 'dead-holder', 'PX', 200);
    const b = await acquireLock(redis, 'cache:/z', { ttlMs: 1000, waitMs: 2000, pollMs: 20 });
    expect(b?.held).toBe(true);
    await b!.release();
  });
});

describe('labels and targets', () => {
  it('parses, matches and names pools independently of key order', () => {
    expect(parseLabels('gpu=A100, cc=8.0,trt=10.16.0')).toEqual({ gpu: 'A100', cc: '8.0', trt: '10.16.0' });
    expect(() => parseLabels('gpu')).toThrow(/"gpu" is not key=value/);
    expect(() => parseLabels('gpu=')).toThrow(/label "gpu" needs a value/);
    expect(() => checkTarget({ gpu: 5 }, 'targets[1]')).toThrow(/targets\[1\]\.gpu must be a string/);
    expect(matches({ gpu: 'A100', cc: '8.0' }, { gpu: 'A100' })).toBe(true);
    expect(matches({ gpu: 'A100' }, { gpu: 'A100', cc: '8.0' })).toBe(false);
    expect(matches({ gpu: 'L4' }, {})).toBe(true);
    expect(canonicalTarget({ gpu: 'A', cc: '8' })).toBe('cc=8,gpu=A');
    expect(poolQueueName({ gpu: 'A', cc: '8' })).toBe(poolQueueName({ cc: '8', gpu: 'A' }));
    expect(poolQueueName({ gpu: 'A' })).not.toBe(poolQueueName({ gpu: 'B' }));
    expect(poolQueueName({})).toBe('tbs-pool-any');
  });

  it('labels a machine from the TensorRT probe, and not from the simulator', () => {
    expect(
      probeLabels([
        {
          name: 'tensorrt',
          available: true,
          version: '10.16.0',
          library: { path: '/l', version: '10.16.1' },
          gpu: { name: 'NVIDIA A100-SXM4-80GB', computeCapability: '8.0', device: 0 },
        },
      ]),
    ).toEqual({ gpu: 'NVIDIA_A100-SXM4-80GB', cc: '8.0', trt: '10.16.1' });
    expect(probeLabels([{ name: 'simulated', available: true, version: 'sim-1' }])).toEqual({});
  });
});
