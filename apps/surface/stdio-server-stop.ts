// How a stdio server (`mcp`, `lsp`) stops, the same for both: the first stop (a signal, stdin
// closed, the client's shutdown) cancels running builds and waits for their workers; a second
// stop while that runs cancels again and kills the workers by PID, then exits within a bound; any
// later one exits at once. A graceful stop that hangs is ended by a watchdog (exit code 1).
import type { BuildServiceApi } from '../service/api.js';
import type { LiveWorkers } from '../service/live-workers.js';
import type { ProcessSignals } from '../process/process-signals.js';
import type { CancelReasons } from './cancel-reasons.js';

/** A forced stop waits this long for the killed workers' exits to be seen, then exits anyway. */
export const FORCE_EXIT_MS = 3000;
/** A graceful stop that has not finished after this long kills the workers and exits (code 1). */
export const SHUTDOWN_WATCHDOG_MS = 20_000;

export interface StdioServerStopDeps {
  service: Pick<BuildServiceApi, 'listBuilds' | 'cancelBuild'>;
  workers: LiveWorkers;
  signals: ProcessSignals;
  log: (line: string) => void;
  /** The server's record of stop requests (cancel-reasons.ts): a forced stop is noted there too. */
  reasons?: CancelReasons;
  /** The server's orderly shutdown: cancel its builds and wait for them. */
  shutdown: () => Promise<void>;
  /** Then: close the protocol connection and give stdin/stdout back. */
  release: () => void | Promise<void>;
}

export interface StdioServerStop {
  /** The first stop: graceful. Later calls of close() do nothing. */
  close(why: string): Promise<void>;
  /** A stop request that escalates: graceful, then forced, then an immediate exit. */
  stop(why: string): void;
  /** The exit code, once the server has stopped. */
  readonly done: Promise<number>;
}

/**
 * Listening from the very start: a signal that comes before the server can stop is kept
 * (`pending`, to act on once it is up); once `attach` has given it its stop, signals go there.
 */
export function listenForStop(signals: ProcessSignals): { attach(stop: (why: string) => void): void; readonly pending: string | undefined } {
  let stop: ((why: string) => void) | undefined;
  let pending: string | undefined;
  signals.listen((signal) => (stop ? stop(signal) : (pending ??= signal)));
  return {
    attach: (s) => (stop = s),
    get pending() {
      return pending;
    },
  };
}

export function stdioServerStop(deps: StdioServerStopDeps): StdioServerStop {
  const { service, workers, signals, log } = deps;
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let phase: 'serving' | 'closing' | 'forcing' = 'serving';

  const close = async (why: string) => {
    if (phase !== 'serving') return;
    phase = 'closing';
    log(`${why}: cancelling running builds and stopping their workers (a second signal kills them now)`);
    // The service kills workers that ignore a cancel after ~10 s; this is the last resort.
    const watchdog = setTimeout(() => {
      log(`workers did not stop in time; killing them (pids ${workers.pids().join(', ') || 'none'}) and exiting`);
      workers.killAll();
      resolveDone(1);
    }, SHUTDOWN_WATCHDOG_MS);
    watchdog.unref();
    let code = 0;
    try {
      await deps.shutdown();
    } catch (e) {
      log(`shutdown error: ${(e as Error).message}`);
      code = 1;
    }
    clearTimeout(watchdog);
    await deps.release();
    resolveDone(code);
  };

  const force = (why: string) => {
    phase = 'forcing';
    // A second cancel kills a build's worker (the service then sees its exit and removes its
    // partial output); killAll also ends workers that run no build (a backends query).
    for (const b of service.listBuilds()) {
      if (deps.reasons) deps.reasons.request(service, b.id, 'shutdown', 'shutdown');
      else service.cancelBuild(b.id, 'shutdown');
    }
    const pids = workers.killAll();
    log(`${why} again: killed the build workers now (pids ${pids.join(', ') || 'none'})`);
    // close() finishes as soon as the service has seen those exits; this bounds the wait.
    setTimeout(() => signals.hardExit(0), FORCE_EXIT_MS).unref();
  };

  const stop = (why: string) => {
    if (phase === 'serving') void close(why);
    else if (phase === 'closing') force(why);
    else signals.hardExit(0);
  };

  return { close, stop, done };
}
