// The farm `worker` command under signals: the real command (bin → dist) against a real
// redis-server, a real build worker process, real signals; serve is the queue service in this
// process. First signal: stop taking builds, stop the running one and hand it back (with no retry
// left, as here, it ends failed "worker shut down"; worker-handback.test.ts has the retries),
// leave the farm, exit 0. A second while that waits: kill the build workers by PID and exit.
// Whatever the moment: never killed by the signal once its code runs, no build worker left, no
// engine or timing-cache temp file in the shared folder, serve sees the build end, and never as
// cancelled (nobody stopped it).
import type { ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, killLiveClis, leftoverMarked, processesMarked, ProcessMarks, spawnCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { signalStorm, until } from '../../../test/support/signal-storm.js';
import { SharedFolderArtifacts } from '../artifacts.js';
import { Redis } from 'ioredis';
import { FarmStore } from '../farm-store.js';
import { QueueBuildService } from '../queue-service.js';
import { GENEROUS_HEARTBEAT_MS, rmDir, startRedis, stopAll, type RedisServer } from './harness.js';

let dir: string;
let model: string;
let redis: RedisServer;
let artifacts: SharedFolderArtifacts;
let svc: QueueBuildService;
const marks = new ProcessMarks();

beforeAll(async () => {
  dir = tempDir('tbs-worker-signals-');
  fs.mkdirSync(path.join(dir, 'redis'));
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 4 });
  artifacts = new SharedFolderArtifacts(path.join(dir, 'artifacts'));
  artifacts.ensure();
  redis = await startRedis(path.join(dir, 'redis'));
  svc = await QueueBuildService.create({ url: redis.url, artifacts, checkMs: 250, heartbeatTtlMs: 1500, log: () => undefined });
}, 60_000);

afterEach(() => {
  killLiveClis();
  marks.killAll();
});

afterAll(async () => {
  await svc?.shutdown().catch(() => undefined);
  await stopAll();
  if (dir) rmDir(dir);
});

interface WorkerProcess {
  id: string;
  child: ChildProcess;
  done: Promise<CliResult>;
  mark: string;
  stderr(): string;
  /** Processes of this farm worker other than itself: its build workers. */
  workers(): number[];
}

/**
 * A worker with the generous heartbeat TTL (harness.ts): none of these tests means serve to call a
 * worker lost, and with a 1.5 s TTL a busy machine did, ending the build "worker lost" before it ran.
 */
function startWorker(name: string): WorkerProcess {
  const id = `${name}-${crypto.randomBytes(3).toString('hex')}`;
  const mark = marks.next();
  const hb = String(GENEROUS_HEARTBEAT_MS);
  const child = spawnCli(['worker', '--queue', redis.url, '--id', id, '--labels', `gpu=${id}`, '--heartbeat-ms', hb, '--artifacts', artifacts.root], {
    env: { ...process.env, [mark]: '1' },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = collect(child);
  return { id, child, done, mark, stderr: () => stderr, workers: () => processesMarked(mark).filter((p) => p !== child.pid) };
}

/** A long build on this worker; resolves once its build worker runs phases. */
async function runningBuild(w: WorkerProcess): Promise<{ id: string; workers: number[] }> {
  await until(`worker ${w.id} ready (stderr: ${w.stderr()})`, () => new RegExp(`${w.id} ready`).test(w.stderr()), 30_000);
  const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 30, simSeed: 5 }, target: { gpu: w.id } });
  await until(`the build to run (stderr: ${w.stderr()})`, () => (svc.getView(rec.id)?.rows.rows.length ?? 0) > 2 && w.workers().length > 0, 30_000);
  return { id: rec.id, workers: w.workers() };
}

/** Every file under the shared folder (engines, timing caches and their sidecars). */
function sharedFiles(): string[] {
  return (fs.readdirSync(artifacts.root, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(artifacts.root, f)).isFile());
}

/** No engine of a build that did not succeed, and no temp file of any writer. */
function expectNothingHalfWritten(buildId: string): void {
  const files = sharedFiles();
  expect(
    files.filter((f) => /\.tmp-|farm-tmp/.test(f)),
    files.join(', '),
  ).toEqual([]);
  const out = svc.getBuild(buildId)?.outputPath;
  if (out) expect(fs.existsSync(out), out).toBe(false);
}

async function liveWorkerIds(): Promise<string[]> {
  const r = new Redis(redis.url);
  try {
    return (await new FarmStore(r).liveWorkers()).map((w) => w.id);
  } finally {
    r.disconnect();
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('farm worker: the first signal stops gracefully', () => {
  it('stops the running build and hands it back (no retry left: failed "worker shut down"), the worker leaves the farm, exit 0', async () => {
    const w = startWorker('graceful');
    const { id, workers } = await runningBuild(w);
    w.child.kill('SIGTERM');
    const r = await w.done;
    expect({ code: r.code, signal: r.signal }, w.stderr()).toEqual({ code: 0, signal: null });
    expect(w.stderr()).toMatch(/SIGTERM, stopping running builds, handing them back to the queue and leaving the farm/);
    expect(w.stderr()).not.toMatch(/again: killed/);
    expect(workers.filter(isAlive)).toEqual([]);
    expect(await leftoverMarked(w.mark)).toEqual([]);
    // Ended by the worker itself (not called lost by serve later).
    const f = await svc.waitForResult(id);
    expect({ status: f.status, error: f.error }).toEqual({ status: 'failed', error: 'worker shut down' });
    expect(svc.getView(id)?.cancelling).toBeUndefined();
    expect((await liveWorkerIds()).includes(w.id), 'still registered as live').toBe(false);
    expectNothingHalfWritten(id);
  }, 60_000);
});

describe('farm worker: a second signal forces the stop', () => {
  it('while the stop waits on a build worker that cannot answer: kills it by PID, exits 0 in seconds, the build ends', async () => {
    const w = startWorker('force');
    const { id, workers } = await runningBuild(w);
    // A stopped build worker reads no cancel: the graceful stop would wait for the 10 s kill timer.
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    w.child.kill('SIGTERM');
    await until('the graceful stop to begin', () => /SIGTERM, stopping running builds/.test(w.stderr()));
    await new Promise((r) => setTimeout(r, 500));
    expect(w.child.exitCode, 'still waiting on the stopped build worker').toBeNull();
    const t0 = Date.now();
    w.child.kill('SIGINT');
    const r = await w.done;
    expect({ code: r.code, signal: r.signal }, w.stderr()).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(w.stderr()).toMatch(new RegExp(`SIGINT again: killed the build workers now \\(pids [^)]*${workers[0]}`));
    expect(workers.filter(isAlive)).toEqual([]);
    expect(await leftoverMarked(w.mark)).toEqual([]);
    // Killed, and still handed back: the build's end says why, not "cancelled".
    const f = await svc.waitForResult(id);
    expect({ status: f.status, error: f.error }).toEqual({ status: 'failed', error: 'worker shut down' });
    expectNothingHalfWritten(id);
  }, 60_000);
});

describe('farm worker: storms of signals', () => {
  it('during a running build: exits 0, never by a signal, no build worker, nothing half-written, the build ends', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const w = startWorker(`storm-${i}`);
      const { id } = await runningBuild(w);
      const sent = signalStorm(w.child, i ? ['SIGINT'] : ['SIGTERM', 'SIGINT']);
      const r = await w.done;
      expect({ code: r.code, signal: r.signal }, w.stderr()).toEqual({ code: 0, signal: null });
      expect(sent()).toBeGreaterThan(0);
      expect(await leftoverMarked(w.mark)).toEqual([]);
      ids.push(id);
    }
    // A storm's third signal exits at once: the end the worker wrote, or serve's "worker lost",
    // which comes a heartbeat TTL (20 s) after the exit; the two storms' endings are awaited
    // together, so the TTLs overlap.
    for (const f of await Promise.all(ids.map((id) => svc.waitForResult(id)))) {
      expect((f.status === 'failed' && f.error === 'worker shut down') || (f.status === 'crashed' && f.error === 'worker lost'), JSON.stringify(f)).toBe(true);
      expectNothingHalfWritten(f.buildId);
    }
  }, 180_000);

  it('from the spawn: exits 0, or by the signal only before any of its code ran; no process left', async () => {
    let handled = 0;
    // On a busy machine Node itself may take longer than 700 ms to reach the CLI's first line, and
    // every storm up to there kills it the default way (allowed): later storms, until one meets
    // the worker's own code, so that the assertion below is about the handlers, not the load.
    const later = [1200, 2000, 3500, 6000, 10_000];
    for (const delayMs of [0, 40, 80, 150, 250, 400, 700, ...later]) {
      if (delayMs > 700 && handled > 0) break;
      const w = startWorker(`spawn-${delayMs}`);
      await new Promise((r) => w.child.once('spawn', r));
      await new Promise((r) => setTimeout(r, delayMs));
      signalStorm(w.child, ['SIGINT', 'SIGTERM'], 2);
      const r = await w.done;
      expect(await leftoverMarked(w.mark)).toEqual([]);
      if (r.signal !== null) {
        expect(w.stderr(), `killed by ${r.signal} after ${delayMs} ms`).toBe('');
        continue;
      }
      expect(r.code, w.stderr()).toBe(0);
      handled++;
    }
    expect(handled, 'storms that met the worker running').toBeGreaterThan(0);
  }, 180_000);
});
