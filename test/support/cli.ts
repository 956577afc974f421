// Runs the real `trt-build-studio` command (bin/ → dist/) in a child process, for tests of every
// layer that sits on the CLI. The dist/ build must exist: tests run after `npm run build:ts`.
//
//   const r = await runCli(['inspect', model, '--json']);   // { code, signal, stdout, stderr }
//   const p = spawnCli(['build', ...]);                       // ChildProcess, for signals/streams
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');
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

export function spawnCli(args: string[], opts: SpawnOptions = {}): ChildProcess {
  requireBuilt();
  return spawn(process.execPath, [CLI_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
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
