// Starts the real `trt-build-studio serve` (bin → dist) on a free port and parses the URL line it
// prints, the way a script would.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '../../../..');
export const BIN = path.join(REPO, 'bin', 'trt-build-studio.js');

export interface ServeProcess {
  proc: ChildProcess;
  port: number;
  token: string;
  base: string;
  /** The URL line exactly as printed. */
  urlLine: string;
  uploadDir: string;
  stderr(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** How the process ended: its exit code, or the signal that killed it. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Every `serve` this module started and that has not exited yet. A test that fails before its
 * own cleanup would otherwise leave a server (and its workers) running after the test run: what
 * is still here when the test process exits is killed.
 */
const live = new Set<ChildProcess>();
/** Build profiles (predicted end) of test servers go here, not into the user's state directory. */
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-serve-state-'));
process.on('exit', () => {
  fs.rmSync(stateDir, { recursive: true, force: true });
  for (const p of live) {
    try {
      p.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/** Kills every server still running (for an afterAll/afterEach that must leave nothing behind). */
export function killLeftoverServers(): void {
  for (const p of live) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
}

export function startServe(args: string[], timeoutMs = 20_000, env: NodeJS.ProcessEnv = process.env): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
      cwd: REPO,
      env: { TBS_STATE_DIR: stateDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(proc);
    proc.on('exit', () => live.delete(proc));
    let out = '';
    let err = '';
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.on('exit', (code, signal) => r({ code, signal })));
    const exited = exit.then((e) => e.code);
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`serve did not print its URL in ${timeoutMs} ms; stderr: ${err}`));
    }, timeoutMs);
    proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^(http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+))$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      // The uploads line comes right after the URL; wait for it rather than race it.
      const waitUploads = () => {
        const u = /uploads kept in (\S+) until shutdown/.exec(err);
        if (!u) return void setTimeout(waitUploads, 10);
        resolve({
          proc,
          port: Number(m[2]),
          token: decodeURIComponent(m[3]),
          base: `http://127.0.0.1:${m[2]}`,
          urlLine: m[1],
          uploadDir: u[1],
          stderr: () => err,
          exit,
          stop(signal = 'SIGTERM') {
            if (proc.exitCode !== null) return exited;
            proc.kill(signal);
            return exited;
          },
        });
      };
      waitUploads();
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before printing its URL; stderr: ${err}`));
    });
  });
}
