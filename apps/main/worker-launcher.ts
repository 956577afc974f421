// The build service's WorkerLauncher for the desktop app: each build runs in an Electron
// utilityProcess (a Chromium-managed Node child; the worker talks through process.parentPort).
// A native crash there ends that process only; the service sees the exit and reports `crashed`.
//
// Two Electron behaviours shape this module:
// - UtilityProcess.pid is undefined until 'spawn' and again once 'exit' has been emitted. The
//   service cleans up the worker's temp files (`<target>.tmp-<pid>-N`) after the exit, so the
//   channel remembers the pid from 'spawn' and keeps answering with it.
// - How a utility process died (out of memory, killed, crashed) is only told through the app's
//   'child-process-gone' event, matched here by the process name we give each worker.
// - 'exit' carries the plain exit code after the worker's process.exit, but child-process-gone's
//   exitCode is a raw wait status: the end is decoded from the latter when it comes
//   (child-gone.ts, utilityExit), so exit(1) is "exit code 1" and a segfault "signal SIGSEGV".
// - Electron removes the stdout/stderr listeners in the same turn it emits 'exit', so what a dying
//   worker printed last never arrives through the pipe. With `stderrDir`, each worker writes fd 2
//   to a file of its own there (apps/worker/stderr-file.ts) and the tail is read from the file.
//
// Not run here: this machine has no Electron binary, so the module is tested against a fake
// utilityProcess (apps/main/test/worker-launcher.test.ts) and an emulated one backed by a Node
// child (apps/main/test/emulated-utility-process.ts); the real fork is unexercised.
import { utilityProcess, type UtilityProcess } from 'electron';
import type { WorkerChannel, WorkerLauncher } from '../service/worker-host.js';
import { WORKER_STDERR_FILE_ENV, type WorkerToParent } from '../worker/messages.js';
import { describeGone, utilityExit, type ChildGoneDetails } from './child-gone.js';
import { StderrFiles } from './stderr-files.js';

const STDERR_TAIL_BYTES = 4096;
/** Electron delivers 'exit' and 'child-process-gone' separately; how long to wait for the second. */
const GONE_WAIT_MS = 200;
export const WORKER_SERVICE_NAME = 'TRT Build Studio worker';

export interface UtilityLauncherOptions {
  workerPath: string;
  /**
   * Extra environment for the worker (TBS_ADDON_PATH in a packaged app, TBS_TRT_LIB_DIR from the
   * app's TensorRT location); a function is asked at each launch, so a changed setting applies
   * to the next worker.
   */
  env?: Record<string, string> | (() => Record<string, string>);
  log?(m: string): void;
  /** For tests; defaults to Electron's utilityProcess.fork. */
  fork?: (modulePath: string, args: string[], options: Electron.ForkOptions) => UtilityProcess;
  /** For tests; sends SIGKILL by pid. */
  killPid?: (pid: number) => void;
  /** Electron's app, for 'child-process-gone' (why a worker died); optional in tests. */
  app?: { on(event: 'child-process-gone', listener: (event: unknown, details: ChildGoneDetails) => void): unknown };
  /** How long an abnormal exit waits for its 'child-process-gone' before being reported. */
  goneWaitMs?: number;
  /** A private folder for the workers' stderr files (the newest few are kept for the user). */
  stderrDir?: string;
  /** For tests; defaults to process.platform (wait statuses are decoded except on Windows). */
  platform?: NodeJS.Platform;
}

export interface UtilityLauncher {
  launch: WorkerLauncher;
  /** Workers still running. */
  readonly live: number;
  /** Kills every live worker and resolves once all have exited (or after `timeoutMs`). */
  killAll(timeoutMs?: number): Promise<void>;
}

interface Worker {
  child: UtilityProcess;
  /** The pid from 'spawn'; kept after exit, when Electron's own pid is gone. */
  pid: number | undefined;
  exited: boolean;
  /** A kill asked for before 'spawn': carried out as soon as there is a pid. */
  killPending: boolean;
  /** Electron's account of the death, from 'child-process-gone'. */
  gone: ChildGoneDetails | null;
  goneArrived?: () => void;
  done: Promise<void>;
}

export function createUtilityLauncher(opts: UtilityLauncherOptions): UtilityLauncher {
  const fork = opts.fork ?? ((p, a, o) => utilityProcess.fork(p, a, o));
  const killPid = opts.killPid ?? ((pid) => process.kill(pid, 'SIGKILL'));
  const goneWaitMs = opts.goneWaitMs ?? GONE_WAIT_MS;
  const platform = opts.platform ?? process.platform;
  const stderrFiles = opts.stderrDir ? new StderrFiles(opts.stderrDir, opts.log) : undefined;
  const live = new Set<Worker>();
  const byName = new Map<string, Worker>();
  let counter = 0;

  opts.app?.on('child-process-gone', (_event, details) => {
    if (details.type !== 'Utility' || !details.name) return;
    const w = byName.get(details.name);
    if (!w) return;
    w.gone = details;
    w.goneArrived?.();
  });

  /** SIGKILL now when the pid is known (UtilityProcess.kill is SIGTERM, SIGKILL only 2 s later). */
  const killNow = (w: Worker) => {
    if (w.exited) return;
    if (w.pid === undefined) {
      // Not spawned yet: Electron's kill() would do nothing, so remember to do it at 'spawn'.
      w.killPending = true;
      return;
    }
    try {
      killPid(w.pid);
    } catch {
      // Already gone, or not ours to signal: fall back to Electron's own kill.
      w.child.kill();
    }
  };

  const launch: WorkerLauncher = (): WorkerChannel => {
    // A name per worker, so 'child-process-gone' (which carries no pid) can be matched to it.
    const serviceName = `${WORKER_SERVICE_NAME} ${++counter}`;
    const stderrFile = stderrFiles?.next(counter);
    const child = fork(opts.workerPath, [], {
      serviceName,
      stdio: 'pipe',
      env: {
        ...(process.env as Record<string, string>),
        ...(typeof opts.env === 'function' ? opts.env() : opts.env),
        ...(stderrFile ? { [WORKER_STDERR_FILE_ENV]: stderrFile } : {}),
      },
    });
    let tail = '';
    const keep = (chunk: Buffer | string) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL_BYTES);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const exitListeners: Array<(code: number | null, signal: string | null) => void> = [];
    let resolveDone!: () => void;
    const w: Worker = {
      child,
      pid: child.pid,
      exited: false,
      killPending: false,
      gone: null,
      done: new Promise<void>((r) => (resolveDone = r)),
    };
    live.add(w);
    byName.set(serviceName, w);

    child.once('spawn', () => {
      w.pid = child.pid ?? w.pid;
      if (w.killPending) killNow(w);
    });
    child.once('exit', (status) => {
      // Electron clears child.pid right after this event; ours stays.
      w.pid ??= child.pid;
      w.exited = true;
      live.delete(w);
      resolveDone();
      const report = () => {
        const exit = utilityExit(status, w.gone, platform);
        w.goneArrived = undefined;
        byName.delete(serviceName);
        // What came through the pipe before the worker redirected fd 2, then everything after.
        if (stderrFile) tail = `${tail}${stderrFiles!.tail(stderrFile, STDERR_TAIL_BYTES)}`.slice(-STDERR_TAIL_BYTES);
        if (w.gone) tail = `${tail.trimEnd()}\nthe worker process ${describeGone(w.gone, platform)}`.slice(-STDERR_TAIL_BYTES);
        for (const cb of exitListeners) cb(exit.code, exit.signal);
      };
      // A clean exit has no 'child-process-gone'; an abnormal one may bring it just after.
      if (status === 0 || w.gone || !opts.app) return report();
      const timer = setTimeout(report, goneWaitMs);
      w.goneArrived = () => {
        clearTimeout(timer);
        report();
      };
    });
    child.on('error', (type, location) => opts.log?.(`build worker ${type} at ${location}`));

    return {
      get pid() {
        return w.pid;
      },
      send(msg) {
        // Posting to an exited utility process crashed the main process in some Electron
        // releases (electron/electron#53293); the service may still try to cancel a dead worker.
        if (!w.exited) child.postMessage(msg);
      },
      onMessage(cb) {
        child.on('message', (m: unknown) => cb(m as WorkerToParent));
      },
      onExit(cb) {
        exitListeners.push(cb);
      },
      kill() {
        killNow(w);
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
      const waits = [...live].map((w) => {
        killNow(w);
        return w.done;
      });
      if (waits.length === 0) return;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
      await Promise.race([Promise.all(waits), timeout]);
      clearTimeout(timer);
    },
  };
}
