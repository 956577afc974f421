// Starts the real `trt-build-studio serve` (bin → dist) on a free port and parses the URL line it
// prints, the way a script would.
import { spawn, type ChildProcess } from 'node:child_process';
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
}

export function startServe(args: string[], timeoutMs = 20_000): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
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
