// The build service's WorkerLauncher for the desktop app: each build runs in an Electron
// utilityProcess (a Chromium-managed Node child; the worker talks through process.parentPort).
// A native crash there ends that process only; the service sees the exit and reports `crashed`.
//
// Not run here: this machine has no Electron binary, so the module is tested against a fake
// utilityProcess (apps/main/test/worker-launcher.test.ts) and the real fork is unexercised.
import { utilityProcess, type UtilityProcess } from 'electron';
import type { WorkerChannel, WorkerLauncher } from '../service/worker-host.js';
import type { WorkerToParent } from '../worker/messages.js';

const STDERR_TAIL_BYTES = 4096;

export interface UtilityLauncherOptions {
  workerPath: string;
  /** Extra environment for the worker (TBS_ADDON_PATH in a packaged app). */
  env?: Record<string, string>;
  log?(m: string): void;
  /** For tests; defaults to Electron's utilityProcess.fork. */
  fork?: (modulePath: string, args: string[], options: Electron.ForkOptions) => UtilityProcess;
  /** For tests; sends SIGKILL by pid. */
  killPid?: (pid: number) => void;
}

export interface UtilityLauncher {
  launch: WorkerLauncher;
  /** Workers still running. */
  readonly live: number;
  /** Kills every live worker and resolves once all have exited (or after `timeoutMs`). */
  killAll(timeoutMs?: number): Promise<void>;
}

export function createUtilityLauncher(opts: UtilityLauncherOptions): UtilityLauncher {
  const fork = opts.fork ?? ((p, a, o) => utilityProcess.fork(p, a, o));
  const killPid = opts.killPid ?? ((pid) => process.kill(pid, 'SIGKILL'));
  const live = new Map<UtilityProcess, Promise<void>>();

  const launch: WorkerLauncher = (): WorkerChannel => {
    const child = fork(opts.workerPath, [], {
      serviceName: 'TRT Build Studio worker',
      stdio: 'pipe',
      env: { ...(process.env as Record<string, string>), ...opts.env },
    });
    let exited = false;
    let tail = '';
    const keep = (chunk: Buffer | string) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL_BYTES);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const exitListeners: Array<(code: number | null, signal: string | null) => void> = [];
    live.set(
      child,
      new Promise<void>((resolve) => {
        child.once('exit', (code) => {
          exited = true;
          live.delete(child);
          // utilityProcess reports a waitpid code only; a signal death shows up in the code.
          for (const cb of exitListeners) cb(code, null);
          resolve();
        });
      }),
    );
    child.on('error', (type, location) => opts.log?.(`build worker ${type} at ${location}`));

    return {
      get pid() {
        return child.pid;
      },
      send(msg) {
        // Posting to an exited utility process crashed the main process in some Electron
        // releases (electron/electron#53293); the service may still try to cancel a dead worker.
        if (!exited) child.postMessage(msg);
      },
      onMessage(cb) {
        child.on('message', (m: unknown) => cb(m as WorkerToParent));
      },
      onExit(cb) {
        exitListeners.push(cb);
      },
      kill() {
        if (exited) return;
        // UtilityProcess.kill() is SIGTERM, which a worker stuck in native code may not honour.
        const pid = child.pid;
        if (pid !== undefined) {
          try {
            killPid(pid);
            return;
          } catch {
            // Already gone, or not ours to signal: fall back to Electron's own kill.
          }
        }
        child.kill();
      },
      stderrTail: () => tail.trim(),
    };
  };

  return {
    launch,
    get live() {
      return live.size;
    },
    async killAll(timeoutMs = 5000) {
      const waits = [...live.entries()].map(([child, exited]) => {
        if (child.pid !== undefined) {
          try {
            killPid(child.pid);
          } catch {
            child.kill();
          }
        } else child.kill();
        return exited;
      });
      if (waits.length === 0) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
      await Promise.race([Promise.all(waits), timeout]);
      clearTimeout(timer);
    },
  };
}
