// Runs the real `trt-build-studio` command (bin/ → dist/) in a child process, for tests of every
// layer that sits on the CLI. The dist/ build must exist: tests run after `npm run build:ts`.
//
//   const r = await runCli(['inspect', model, '--json']);   // { code, signal, stdout, stderr }
//   const p = spawnCli(['build', ...]);                       // ChildProcess, for signals/streams
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

// From the sources (vitest) this file is test/support/; compiled (a bench run as dist/bench/*.js)
// it is dist/test/support/, one folder deeper.
const ABOVE = path.resolve(__dirname, '../..');
export const REPO_ROOT = path.basename(ABOVE) === 'dist' ? path.dirname(ABOVE) : ABOVE;
export const CLI_BIN = path.join(REPO_ROOT, 'bin', 'trt-build-studio.js');

/** Fails with a clear message when dist/ is missing, instead of a confusing MODULE_NOT_FOUND. */
export function requireBuilt(): void {
  for (const f of ['dist/apps/cli/main.js', 'dist/apps/worker/worker.js']) {
    if (!fs.existsSync(path.join(REPO_ROOT, f))) throw new Error(`${f} is missing: run \`npm run build:ts\` before these tests`);
  }
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** CLIs started here and not yet exited: killed when the test process exits, pass or fail. */
const live = new Set<ChildProcess>();

/** SIGKILLs every CLI this process started that is still running (their workers follow them). */
export function killLiveClis(): void {
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
  live.clear();
}
process.once('exit', killLiveClis);

export function spawnCli(args: string[], opts: SpawnOptions = {}): ChildProcess {
  requireBuilt();
  const child = spawn(process.execPath, [CLI_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Pids of processes whose environment carries `mark` (a CLI's workers inherit it). */
export function processesMarked(mark: string): number[] {
  const pids: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (fs.readFileSync(`/proc/${p}/environ`, 'utf8').includes(mark)) pids.push(Number(p));
    } catch {
      // Gone or not ours to read.
    }
  }
  return pids;
}

/**
 * The processes still carrying `mark` after a grace of up to `graceMs` (a worker that notices its
 * host has gone and exits on its own): [] is the answer a test wants.
 */
export async function leftoverMarked(mark: string, graceMs = 5000): Promise<number[]> {
  const t0 = Date.now();
  while (processesMarked(mark).length > 0 && Date.now() - t0 < graceMs) await new Promise((r) => setTimeout(r, 50));
  return processesMarked(mark);
}

/**
 * Environment marks for the processes a test starts, so that every one of them (a CLI, and the
 * build workers it spawns, which inherit the mark) can be found and killed after the test, however
 * it ended. `next()` gives a fresh mark (an environment variable name set to "1").
 */
export class ProcessMarks {
  private readonly marks: string[] = [];

  next(): string {
    const m = `TBS_MARK_${crypto.randomBytes(6).toString('hex')}`;
    this.marks.push(m);
    return m;
  }

  /** SIGKILLs whatever still carries a mark handed out since the last call. */
  killAll(): void {
    for (const m of this.marks.splice(0)) {
      for (const pid of processesMarked(m)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
  }
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export function runCli(args: string[], opts: SpawnOptions = {}): Promise<CliResult> {
  return collect(spawnCli(args, opts));
}

/** NDJSON stdout → objects (throws on a line that is not JSON: --json output must be pure). */
export function parseNdjson(stdout: string): unknown[] {
  return stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l, i) => {
      try {
        return JSON.parse(l);
      } catch {
        throw new Error(`stdout line ${i + 1} is not JSON: ${l.slice(0, 200)}`);
      }
    });
}
