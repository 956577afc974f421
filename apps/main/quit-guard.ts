// Quitting while a build runs must neither lose the build by accident nor leave a worker behind
// (a utility process keeps the GPU busy and may hold the engine's temp file).
// - A quit the user asked for (the menu, Ctrl+Q, closing the window) while a build runs first
//   asks, as VS Code does with a running task: "Stop it and quit" or "Keep building". Keeping it
//   leaves everything as it was. A quit from a signal (session manager, `kill`) does not ask.
// - Once decided, the quit is held back, the service cancels every build with reason "shutdown"
//   and waits for its workers to exit; if that takes too long the remaining workers are killed
//   outright; then the quit goes ahead.
// - A relaunch while that happens (the window is already gone, so the app looks closed) is not
//   swallowed: the app relaunches once the quit is done.
import type { BuildServiceApi } from '../service/api.js';

export interface QuitApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
  /** Electron's app.relaunch: a new instance starts once this one has quit. */
  relaunch?(): void;
}

export type QuitState = 'idle' | 'asking' | 'stopping' | 'done';

export interface QuitGuardDeps {
  app: QuitApp;
  service: Pick<BuildServiceApi, 'shutdown'>;
  /** Kills what is still running and resolves once those processes have exited. */
  killWorkers(): Promise<void>;
  /** Whether a build runs now (a quit then asks first). */
  isBuilding?(): boolean;
  /** Asks the user; true: stop the builds and quit, false: keep building. */
  confirmStop?(): Promise<boolean>;
  /** Time given to a graceful cancel; TensorRT stops at the next step boundary. */
  graceMs?: number;
  onStateChange?(state: QuitState): void;
  log?(m: string): void;
}

export interface QuitGuard {
  readonly done: Promise<void>;
  readonly state: QuitState;
  /** Quits without asking: the user already said so (closing the window) or a signal came. */
  quitConfirmed(): void;
  /** A relaunch asked for while quitting: true when it will happen once the quit is done. */
  requestRelaunch(): boolean;
}

export function installQuitGuard(deps: QuitGuardDeps): QuitGuard {
  let state: QuitState = 'idle';
  let confirmed = false;
  let relaunch = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const setState = (s: QuitState) => {
    state = s;
    deps.onStateChange?.(s);
  };

  const stopAndQuit = async () => {
    setState('stopping');
    const grace = deps.graceMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), grace)));
    try {
      const outcome = await Promise.race([deps.service.shutdown().then(() => 'ok' as const), timedOut]);
      if (outcome === 'timeout') deps.log?.(`builds did not stop within ${grace} ms; killing workers`);
    } catch (err) {
      deps.log?.(`shutdown failed: ${(err as Error).message}; killing workers`);
    } finally {
      clearTimeout(timer);
    }
    // Always: harmless when nothing is left, and the only guarantee if shutdown misbehaved.
    await deps.killWorkers().catch((err: Error) => deps.log?.(`killing workers failed: ${err.message}`));
    setState('done');
    resolveDone();
    if (relaunch) deps.app.relaunch?.();
    deps.app.quit();
  };

  deps.app.on('before-quit', (event) => {
    if (state === 'done') return;
    event.preventDefault();
    if (state !== 'idle') return;
    if (!confirmed && deps.confirmStop && deps.isBuilding?.()) {
      setState('asking');
      void deps.confirmStop().then(
        (stop) => {
          if (!stop) return setState('idle');
          confirmed = true;
          void stopAndQuit();
        },
        (err: Error) => {
          // A dialog that fails must not quit a running build behind the user's back.
          deps.log?.(`could not ask before quitting: ${err.message}; the build keeps running`);
          setState('idle');
        },
      );
      return;
    }
    void stopAndQuit();
  });

  return {
    done,
    get state() {
      return state;
    },
    quitConfirmed() {
      confirmed = true;
      deps.app.quit();
    },
    requestRelaunch() {
      if (state !== 'stopping' && state !== 'done') return false;
      relaunch = true;
      return true;
    },
  };
}
