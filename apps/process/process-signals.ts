// SIGINT/SIGTERM for a command that runs build workers (`build`, `trtexec`, `mcp`, `serve`).
//
// Why one object per process, installed once and never removed: a signal that meets no handler
// kills the process with the default action, and with it the chance to stop its build workers
// (they would be left to notice the closed IPC channel on their own) and to print the build's
// ending. Handlers that come and go leave such windows: while the command's modules load, after
// the command removed its handler but before the process is gone, and in Node's own exit, which
// tears signal handlers down before the process ends. So:
// - the CLI's entry point (bin/trt-build-studio.js) installs the handlers on its first line, before
//   any other module loads; signals that arrive before the command listens are kept and handed to
//   it, in order, as soon as it does;
// - once the command's exit code is known (`exitOnSignal`), a signal ends the process at once
//   with that code, after the `onHardExit` hooks have killed whatever must not outlive it;
// - `exitWith` ends the process explicitly with its code (process.exit keeps the handlers to
//   the very end) instead of letting the event loop drain.
// A signal that arrives before Node runs any of the command's code cannot be caught by anything
// in the process: it ends it the default way, before any worker exists. The native launcher in
// front of Node (native/launcher/launcher.cc, users' `trt-build-studio`) sees that death and ends
// the output as the command would have (the no-build build.finished line for `build --json`).

export type SignalListener = (signal: NodeJS.Signals, count: number) => void;

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

export class ProcessSignals {
  private listener?: SignalListener;
  private early: NodeJS.Signals[] = [];
  private received = 0;
  private exitCode?: number;
  private readonly hardExitHooks = new Set<() => void>();

  constructor() {
    for (const s of SIGNALS) process.on(s, this.onSignal);
  }

  /** Signals received so far. */
  get count(): number {
    return this.received;
  }

  /**
   * `listener` gets every later signal with its rank (1 for the first); the signals that came
   * before are handed to it at once, in order. Replaces the previous listener.
   */
  listen(listener: SignalListener): void {
    this.listener = listener;
    const early = this.early.splice(0);
    let rank = this.received - early.length;
    for (const s of early) listener(s, ++rank);
  }

  /** Runs right before the process exits because of a signal (kill workers by PID, ...). */
  onHardExit(hook: () => void): () => void {
    this.hardExitHooks.add(hook);
    return () => this.hardExitHooks.delete(hook);
  }

  /** The command's outcome is known: a signal from now on ends the process at once with `code`. */
  exitOnSignal(code: number): void {
    this.exitCode = code;
  }

  /**
   * Ends the process with `code` on the next turn of the event loop (the caller's promise
   * callbacks settle first); a signal before then ends it at once with the same code.
   */
  exitWith(code: number): void {
    this.exitOnSignal(code);
    setImmediate(() => process.exit(code));
  }

  /** Ends the process now with `code`, after the hard-exit hooks (a forced stop). */
  hardExit(code: number): never {
    for (const hook of this.hardExitHooks) {
      try {
        hook();
      } catch {
        // The exit must happen whatever a hook does.
      }
    }
    process.exit(code);
  }

  /** Removes the handlers (for an embedding host or a test; a command keeps them to the end). */
  close(): void {
    for (const s of SIGNALS) process.off(s, this.onSignal);
  }

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.exitCode !== undefined) this.hardExit(this.exitCode);
    this.received++;
    if (this.listener) this.listener(signal, this.received);
    else this.early.push(signal);
  };
}

let instance: ProcessSignals | undefined;

/** The process's one ProcessSignals, installed on the first call. */
export function processSignals(): ProcessSignals {
  instance ??= new ProcessSignals();
  return instance;
}
