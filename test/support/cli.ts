// Runs the real `trt-build-studio` command (bin/ → dist/) in a child process, for tests of every
// layer that sits on the CLI. The dist/ build must exist: tests run after `npm run build:ts`.
//
//   const r = await runCli(['inspect', model, '--json']);   // { code, signal, stdout, stderr }
//   const p = spawnCli(['build', ...]);                       // ChildProcess, for signals/streams
//   const l = spawnLauncher(['build', ...]);                  // the same through the native launcher
//                                                             // (build/native/trt-build-studio)
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

// From the sources (vitest) this file is test/support/; compiled (a bench run as dist/bench/*.js)
// it is dist/test/support/, one folder deeper.
const ABOVE = path.resolve(__dirname, '../..');
export const REPO_ROOT = path.basename(ABOVE) === 'dist' ? path.dirname(ABOVE) : ABOVE;
export const CLI_BIN = path.join(REPO_ROOT, 'bin', 'trt-build-studio.js');
/** The command users run (package.json "bin"): native/launcher/launcher.cc, built by build:native. */
export const LAUNCHER = path.join(REPO_ROOT, 'build', 'native', 'trt-build-studio');

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

/**
 * The CLI through the native launcher, as a user's `trt-build-studio` runs it: the launcher is the
 * child (its pid is the one signals go to), Node its child. For the tests of the launcher and of
 * the first moments after a start; other tests keep spawnCli (one process fewer to count).
 */
export function spawnLauncher(args: string[], opts: SpawnOptions = {}): ChildProcess {
  requireBuilt();
  if (!fs.existsSync(LAUNCHER)) throw new Error(`${path.relative(REPO_ROOT, LAUNCHER)} is missing: run \`npm run build:native\` before these tests`);
  const child = spawn(LAUNCHER, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** The signals `pid` blocks (its SigBlk in /proc), or undefined once it is gone. */
function blockedSignals(pid: number): bigint | undefined {
  try {
    const m = /^SigBlk:\s*([0-9a-f]+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? BigInt(`0x${m[1]}`) : undefined;
  } catch {
    return undefined;
  }
}

function hasChildren(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim() !== '';
  } catch {
    return false;
  }
}

/**
 * Resolves once the launcher runs its main. From its first line it blocks SIGINT, so from there
 * on no signal ends it the default way; /proc shows it as SigBlk until it starts Node, then as a
 * child (while it waits in sigwaitinfo the kernel lists the awaited signals as unblocked). Before
 * main (the exec and its C library's start: microseconds of CPU but, on a busy machine, a few ms
 * before the new process gets a CPU) nothing of the product runs yet, and a signal there ends it
 * as it would end any program. "After the start" in the tests means after this.
 */
export async function launcherStarted(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (child.pid === undefined) await new Promise((r) => child.once('spawn', r));
  const pid = child.pid!;
  const sigint = 1n << 1n;
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the launcher (pid ${pid}) ended before it started`);
    const blocked = blockedSignals(pid);
    if (blocked === undefined) throw new Error(`the launcher (pid ${pid}) ended before it started`);
    if (blocked & sigint || hasChildren(pid)) return;
    if (Date.now() - t0 > timeoutMs) throw new Error(`the launcher (pid ${pid}) did not reach main within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
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
