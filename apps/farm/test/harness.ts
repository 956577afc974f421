// A real Redis and real farm worker processes for the farm tests. Everything started here is
// stopped by PID (also when a test fails): call stopAll() in afterAll.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { spawnCli } from '../../../test/support/cli.js';

const started = new Set<ChildProcess>();

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function waitFor(child: ChildProcess, stream: 'stdout' | 'stderr', re: RegExp, ms: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${what} not ready in ${ms} ms; output: ${buf.slice(-2000)}`)), ms);
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) {
        clearTimeout(timer);
        child[stream]?.off('data', onData);
        resolve(m[0]);
      }
    };
    child[stream]?.on('data', onData);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${sig ?? code}) before it was ready; output: ${buf.slice(-2000)}`));
    });
  });
}

export interface RedisServer {
  port: number;
  url: string;
  proc: ChildProcess;
  /** Stops it by PID (SIGKILL: nothing gets a chance to save beyond the append-only file). */
  kill(): Promise<void>;
  /** Starts it again on the same port and data folder (append-only file: the data survives). */
  restart(): Promise<void>;
}

/** redis-server on a free loopback port, persisting to an append-only file like a production farm should. */
export async function startRedis(dir: string): Promise<RedisServer> {
  const port = await freePort();
  const launch = async () => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir, '--protected-mode', 'yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    started.add(proc);
    await waitFor(proc, 'stdout', /Ready to accept connections/, 15_000, 'redis-server');
    return proc;
  };
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    proc: await launch(),
    async kill() {
      await killProc(server.proc);
    },
    async restart() {
      server.proc = await launch();
    },
  };
  return server;
}

export async function killProc(p: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) {
    started.delete(p);
    return;
  }
  const gone = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill(signal);
  await gone;
  started.delete(p);
}

export interface WorkerProc {
  id: string;
  proc: ChildProcess;
  stderr: () => string;
}

/**
 * Heartbeat TTLs for test workers. A live worker whose beat is late by its TTL is called lost and
 * its build ends crashed, so a short TTL on a worker a test does not mean to lose turns a busy
 * machine (a 2-core box running the whole suite beside other work stalls a Node process for
 * seconds) into spurious "worker lost" endings. Workers get GENEROUS_HEARTBEAT_MS unless the test
 * kills them on purpose (SIGKILL: the loss is driven by the test, not by load) and needs serve to
 * see it quickly: those pass LOSS_HEARTBEAT (and only those).
 */
export const GENEROUS_HEARTBEAT_MS = 20_000;
export const LOSS_HEARTBEAT_MS = 1500;
export const LOSS_HEARTBEAT = ['--heartbeat-ms', String(LOSS_HEARTBEAT_MS)];

export async function startWorker(url: string, id: string, labels: string, extra: string[] = []): Promise<WorkerProc> {
  const ttl = extra.includes('--heartbeat-ms') ? [] : ['--heartbeat-ms', String(GENEROUS_HEARTBEAT_MS)];
  const proc = spawnCli(['worker', '--queue', url, '--id', id, '--labels', labels, ...ttl, '--cancel-kill-ms', '3000', ...extra]);
  started.add(proc);
  let err = '';
  proc.stderr?.on('data', (d) => (err += d));
  await waitFor(proc, 'stderr', new RegExp(`${id} ready`), 30_000, `worker ${id}`);
  return { id, proc, stderr: () => err };
}

export async function stopAll(): Promise<void> {
  // Workers first (they leave the farm cleanly on SIGTERM), Redis last.
  const procs = [...started];
  const workers = procs.filter((p) => p.spawnfile !== 'redis-server');
  await Promise.all(workers.map((p) => stopGently(p)));
  await Promise.all(procs.filter((p) => p.spawnfile === 'redis-server').map((p) => killProc(p)));
}

async function stopGently(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const gone = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 8000);
  await gone;
  clearTimeout(t);
  started.delete(p);
}

export function rmDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export const until = async (cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

export { path };
