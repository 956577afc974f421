// SIGTERM and SIGINT to the main process: quit at once (builds stopped as the quit guard stops
// them, no question: nobody may be there to answer), like a session manager logging out expects.
//
// Electron installs its own SIGINT/SIGTERM/SIGHUP handlers natively (sigaction, in
// ElectronBrowserMainParts' PreMainMessageLoopRun, before 'ready'); they call app.quit(), which
// would show the "A build is running" question, and they reset the signal to its default so a
// second SIGTERM kills main outright, leaving workers behind. Node's process.on(signal) installs
// libuv's sigaction only when the first listener for that signal is added, so listeners added
// after 'ready' replace Electron's handler; listeners added earlier would be replaced by it.
export const QUIT_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface SignalTarget {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  listenerCount(signal: NodeJS.Signals): number;
}

/**
 * Call at or after whenReady. `quitNow` is asked for every signal (a second one while quitting
 * is harmless: the guard is already stopping the builds).
 */
export function installQuitSignals(target: SignalTarget, quitNow: (signal: NodeJS.Signals) => void, log?: (m: string) => void): void {
  for (const sig of QUIT_SIGNALS) {
    // Another listener already owns libuv's handler, installed before Electron's: ours would
    // then never be reached. Say so rather than fail silently.
    if (target.listenerCount(sig) > 0) log?.(`${sig} already had a listener before 'ready': Electron's handler may take it`);
    target.on(sig, (s) => {
      log?.(`${s}: stopping builds and quitting`);
      quitNow(s);
    });
  }
}
