// The farm view, live (GET /api/farm/events on a real `serve --queue`, a real redis-server and
// real worker processes): the status at connect, then a new one as each thing it shows changes (a
// worker joins, a build starts, waits, ends, a worker dies), with no client polling. And the feed
// behind it on its own: changes in a burst make one status, an unchanged one is not sent again.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { collect as collectCli, spawnCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { SseParser } from '../../service/http/sse-parser.js';
import type { FarmStatus } from '../../shared/farm-status.js';
import { FARM_STREAM_EVENT, farmStatusProblem } from '../../shared/farm-stream.js';
import { FarmStatusFeed } from '../farm-status-feed.js';
import { keys } from '../keys.js';
import { killProc, LOSS_HEARTBEAT, rmDir, startRedis, startWorker, stopAll, type RedisServer } from './harness.js';

const sim = (simDuration: number) => ({ backend: 'simulated' as const, simDuration, simSeed: 3 });

let dir: string;
let model: string;
let redis: RedisServer;

beforeAll(async () => {
  dir = tempDir('tbs-farm-stream-');
  fs.mkdirSync(path.join(dir, 'redis'));
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
  redis = await startRedis(path.join(dir, 'redis'));
}, 60_000);

afterAll(async () => {
  await stopAll();
  if (dir) rmDir(dir);
});

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

/** Follows GET /api/farm/events; `next(pred)` resolves with the first status (from now on) that satisfies it. */
async function farmStream(base: string) {
  const statuses: Array<{ version: number; status: FarmStatus }> = [];
  const waiters: Array<{ pred: (s: FarmStatus) => boolean; resolve: (s: FarmStatus) => void }> = [];
  const abort = new AbortController();
  const res = await fetch(`${base}/api/farm/events`, { headers: { authorization: 'Bearer tok' }, signal: abort.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const parser = new SseParser((m) => {
    expect(m.event).toBe(FARM_STREAM_EVENT);
    const status = JSON.parse(m.data) as FarmStatus;
    expect(farmStatusProblem(status)).toBeUndefined();
    statuses.push({ version: Number(m.id), status });
    for (const w of waiters.splice(0)) {
      if (w.pred(status)) w.resolve(status);
      else waiters.push(w);
    }
  });
  void (async () => {
    const reader = res.body!.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        parser.push(value);
      }
    } catch {
      // aborted at the end of the test
    }
  })();
  return {
    statuses,
    next(pred: (s: FarmStatus) => boolean, what: string, ms = 30_000): Promise<FarmStatus> {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no farm status with ${what} within ${ms} ms; last: ${JSON.stringify(statuses.at(-1)?.status)}`)), ms);
        waiters.push({ pred, resolve: (s) => (clearTimeout(t), resolve(s)) });
      });
    },
    close: () => abort.abort(),
  };
}

describe('the farm view as a live stream', () => {
  it('sends the status at connect and a new one at every change: a worker joins, builds start, wait and end, a worker dies', async () => {
    // With serve's own Redis limits (serve-args.test.ts parses them): the cap travels with each build.
    const srv = spawnCli(['serve', '--queue', redis.url, '--port', '0', '--token', 'tok', '--farm-events-per-build', '3000', '--farm-history', '500']);
    const exited = collectCli(srv);
    let stream: Awaited<ReturnType<typeof farmStream>> | undefined;
    try {
      const base = await serveUrl(srv);
      const api = (p: string, body?: unknown) =>
        fetch(`${base}${p}`, { method: 'POST', headers: { authorization: 'Bearer tok', 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
      stream = await farmStream(base);
      const first = await stream.next(() => true, 'anything');
      expect(first.workers).toEqual([]);

      // A worker joins: its first heartbeat is published, the stream says so.
      // The generous TTL: with 1.5 s, a busy machine let serve call wS lost under its running build
      // (ending it "worker lost", not cancelled). Its loss below is driven by the test.
      const w = await startWorker(redis.url, 'wS', 'gpu=L4,trt=10.16.0');
      const joined = await stream.next((s) => s.workers.some((x) => x.id === 'wS'), 'worker wS');
      expect(joined.workers.find((x) => x.id === 'wS')).toMatchObject({ labels: { gpu: 'L4', trt: '10.16.0' }, slots: 1, running: [] });

      // A build starts on it; one whose target nobody matches waits, and says why.
      const { id: long } = (await (await api('/api/builds', { modelPath: model, options: sim(60), target: { gpu: 'L4' } })).json()) as { id: string };
      const { id: stuck } = (await (await api('/api/builds', { modelPath: model, options: sim(1), target: { gpu: 'V100' } })).json()) as { id: string };
      const busy = await stream.next((s) => s.running.some((r) => r.id === long && r.worker === 'wS') && s.pools.some((p) => p.queued.some((q) => q.id === stuck)), 'both builds');
      expect(busy.workers.find((x) => x.id === 'wS')?.running).toEqual([long]);
      const raw = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      try {
        expect(await raw.hget(keys.build(long), 'maxEvents')).toBe('3000');
      } finally {
        raw.disconnect();
      }
      expect(busy.pools.find((p) => p.target.gpu === 'V100')?.queued[0].waiting).toMatch(/no live worker matches target gpu=V100/);

      // Stop: the endings appear.
      expect((await api(`/api/builds/${long}/cancel`)).status).toBe(202);
      expect((await api(`/api/builds/${stuck}/cancel`)).status).toBe(202);
      const ended = await stream.next((s) => [long, stuck].every((id) => s.recent.some((r) => r.id === id && r.state === 'cancelled')), 'both endings');
      expect(ended.running).toEqual([]);

      // A worker killed: no message from it; its heartbeat key expires (here at once, as its TTL
      // would) and serve sees it.
      await killProc(w.proc, 'SIGKILL');
      const expire = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      try {
        await expire.pexpire(keys.worker('wS'), 1);
      } finally {
        expire.disconnect();
      }
      await stream.next((s) => !s.workers.some((x) => x.id === 'wS'), 'wS gone', 20_000);

      // Versions only grow; no two messages in a row say the same thing.
      const versions = stream.statuses.map((s) => s.version);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      expect(new Set(versions).size).toBe(versions.length);
    } finally {
      stream?.close();
      await killProc(srv, 'SIGTERM');
      await exited;
    }
  }, 120_000);

  it('a serve that builds locally has no farm stream (404)', async () => {
    const out = path.join(dir, 'engines');
    fs.mkdirSync(out, { recursive: true });
    const srv = spawnCli(['serve', '--port', '0', '--token', 'tok', '--output-dir', out]);
    const exited = collectCli(srv);
    try {
      const base = await serveUrl(srv);
      const res = await fetch(`${base}/api/farm/events`, { headers: { authorization: 'Bearer tok' } });
      expect(res.status).toBe(404);
      expect(await res.text()).toMatch(/not on a build farm/);
    } finally {
      await killProc(srv, 'SIGTERM');
      await exited;
    }
  }, 60_000);
});

describe('farm status --watch', () => {
  it('prints the status at once and again as the farm changes: a worker joins, then dies without a word', async () => {
    const cli = spawnCli(['farm', 'status', '--queue', redis.url, '--watch', '--json']);
    const exited = collectCli(cli);
    const lines: FarmStatus[] = [];
    let buf = '';
    cli.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        lines.push(JSON.parse(buf.slice(0, nl)) as FarmStatus);
        buf = buf.slice(nl + 1);
      }
    });
    /** Index of the first line from `from` on that satisfies `pred`. */
    const seen = async (pred: (s: FarmStatus) => boolean, what: string, from = 0, ms = 20_000): Promise<number> => {
      const end = Date.now() + ms;
      for (;;) {
        const i = lines.findIndex((l, j) => j >= from && pred(l));
        if (i >= 0) return i;
        if (Date.now() > end) throw new Error(`farm status --watch printed no status with ${what}; last: ${JSON.stringify(lines.at(-1))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await seen(() => true, 'anything');
      const w = await startWorker(redis.url, 'wWatch', 'gpu=T4', LOSS_HEARTBEAT);
      const joined = await seen((s) => s.workers.some((x) => x.id === 'wWatch'), 'worker wWatch');
      // The worker dies without a word: the watch notices when its heartbeat (1.5 s) expires.
      await killProc(w.proc, 'SIGKILL');
      await seen((s) => !s.workers.some((x) => x.id === 'wWatch'), 'wWatch gone', joined + 1);
      // Each line is a complete status, as GET /api/farm gives it.
      for (const l of lines) expect(farmStatusProblem(l)).toBeUndefined();
    } finally {
      cli.kill('SIGINT');
      const r = await exited;
      // Ctrl-C ends it like any command with no builds to stop.
      expect(r.code ?? r.signal).toBe(130);
    }
  }, 90_000);
});

describe('FarmStatusFeed', () => {
  const status = (workers: FarmStatus['workers'], at = Date.now()): FarmStatus => ({ at: new Date(at).toISOString(), workers, pools: [], running: [], recent: [] });
  const worker = (beatAt: number, now: number): FarmStatus['workers'][number] => ({
    id: 'w',
    host: 'h',
    pid: 1,
    labels: {},
    slots: 1,
    running: [],
    lastHeartbeatMsAgo: now - beatAt,
  });

  it('folds a burst of changes into one status, sends nothing when only time passed, and a new heartbeat as a change', async () => {
    let composed = 0;
    let beatAt = 1000;
    const feed = new FarmStatusFeed(async () => {
      composed++;
      const now = Date.now();
      return status([worker(beatAt, now)], now);
    }, 100);
    const got: number[] = [];
    const off = feed.subscribe((_s, v) => got.push(v));
    await new Promise((r) => setTimeout(r, 150));
    expect(got).toEqual([1]);
    for (let i = 0; i < 50; i++) feed.changed();
    await new Promise((r) => setTimeout(r, 400));
    // The burst made one compose (or two: one may have been under way), and the same view: no message.
    expect(composed).toBeLessThanOrEqual(3);
    expect(got).toEqual([1]);
    beatAt = 2000;
    feed.changed();
    await new Promise((r) => setTimeout(r, 400));
    expect(got).toEqual([1, 2]);
    // A late subscriber gets the current status at once.
    const late: number[] = [];
    const off2 = feed.subscribe((_s, v) => late.push(v));
    await Promise.resolve();
    expect(late).toEqual([2]);
    off();
    off2();
    // Nobody watching: nothing composed.
    const before = composed;
    feed.changed();
    await new Promise((r) => setTimeout(r, 200));
    expect(composed).toBe(before);
    feed.close();
  });
});
