// How the service reaches a build worker. The service only sees a WorkerChannel; a launcher makes
// one. Node hosts (CLI, HTTP service, MCP) use childProcessLauncher below; Electron main passes
// its own utilityProcess launcher of the same shape (apps/main).
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ParentToWorker, WorkerToParent } from '../worker/messages.js';

export interface WorkerChannel {
  send(msg: ParentToWorker): void;
  /** Raw messages as they arrive; the service validates them (launchers need not). */
  onMessage(cb: (msg: WorkerToParent) => void): void;
  onExit(cb: (code: number | null, signal: string | null) => void): void;
  /** Ends the worker now (SIGKILL where the platform has it). */
  kill(): void;
  readonly pid?: number;
  /** The last lines the worker wrote to stderr, when the launcher captures them (crash reports). */
  stderrTail?(): string;
}

export type WorkerLauncher = () => WorkerChannel;

const STDERR_TAIL_BYTES = 4096;

/** dist/apps/worker/worker.js, whether this module runs from dist/ or from source (tests). */
export function workerScriptPath(): string {
  const candidates = [path.resolve(__dirname, '../worker/worker.js'), path.resolve(__dirname, '../../dist/apps/worker/worker.js')];
  for (const p of candidates) if (fs.existsSync(p)) return p;
  throw new Error(`build worker not found (looked at ${candidates.join(', ')}); run \`npm run build:ts\` first`);
}

/** Extra Node flags for the worker from TBS_WORKER_NODE_ARGS (see childProcessLauncher). */
export function workerNodeArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.TBS_WORKER_NODE_ARGS ?? '').split(' ').filter((a) => a.length > 0);
}

export const childProcessLauncher: WorkerLauncher = () => {
  const child = fork(workerScriptPath(), [], {
    // 'advanced' (structured clone) moves large event batches faster than JSON.
    serialization: 'advanced',
    // Not the parent's flags: under a test runner they may name loaders the worker cannot use.
    // A small young generation: the worker turns every native batch into short-lived objects
    // at up to ~10^5 events/s, and with the default (semi-spaces grown on demand) that garbage
    // alone was a large part of its RSS; 1 MiB semi-spaces keep the worker small at no
    // measurable cost in throughput (scavenges of a small space are cheap; the figures are in
    // docs/benchmarks.md).
    // TBS_WORKER_NODE_ARGS (debugging and benchmarks only): more Node flags for the worker, split
    // on spaces, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it (NODE_OPTIONS refuses
    // --cpu-prof).
    execArgv: ['--max-semi-space-size=1', ...workerNodeArgs()],
    // The worker's stdout must never reach ours: the CLI's --json stdout carries events only.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // Own process group: a terminal's Ctrl-C reaches the host only, which turns it into a cancel.
    // The worker still exits with its host: it stops its build when the IPC channel closes.
    detached: true,
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    if (process.env.TBS_WORKER_STDERR === 'inherit') process.stderr.write(chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exitCbs: Array<(code: number | null, signal: string | null) => void> = [];
  let ended = false;
  const end = (code: number | null, signal: string | null) => {
    if (ended) return;
    ended = true;
    for (const cb of exitCbs) cb(code, signal);
  };
  // 'close' (not 'exit'): stdio is drained by then, so stderrTail() has the last words.
  child.on('close', (code, signal) => end(code, signal));
  child.on('error', (err) => {
    // A send racing the worker's exit fails with EPIPE/ERR_IPC_CHANNEL_CLOSED; 'close' reports
    // that. A worker that never started (no pid) gets no 'close' to rely on: end it here.
    if (child.pid === undefined) {
      tail = `could not start the worker: ${err.message}`;
      end(null, null);
    }
  });
  return {
    pid: child.pid,
    send(msg) {
      if (child.connected) child.send(msg, (err) => void err);
    },
    onMessage(cb) {
      child.on('message', (m) => cb(m as WorkerToParent));
    },
    onExit(cb) {
      exitCbs.push(cb);
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    stderrTail: () => tail.trim(),
  };
};
