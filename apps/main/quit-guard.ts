// Quitting while a build runs must not leave a worker behind (a utility process keeps the GPU
// busy and may hold the engine's temp file). The first quit is held back, the service cancels
// every build with reason "shutdown" and waits for its workers to exit; if that takes too long
// the remaining workers are killed outright; then the quit goes ahead.
import type { BuildServiceApi } from '../service/api.js';

export interface QuitApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
}

export interface QuitGuardDeps {
  app: QuitApp;
  service: Pick<BuildServiceApi, 'shutdown'>;
  /** Kills what is still running and resolves once those processes have exited. */
  killWorkers(): Promise<void>;
  /** Time given to a graceful cancel; TensorRT stops at the next step boundary. */
  graceMs?: number;
  onStateChange?(state: 'stopping' | 'done'): void;
  log?(m: string): void;
}

export function installQuitGuard(deps: QuitGuardDeps): { readonly done: Promise<void> } {
  let state: 'idle' | 'stopping' | 'done' = 'idle';
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));

  deps.app.on('before-quit', (event) => {
    if (state === 'done') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    deps.onStateChange?.('stopping');
    void (async () => {
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
      state = 'done';
      deps.onStateChange?.('done');
      resolveDone();
      deps.app.quit();
    })();
  });
  return { done };
}
