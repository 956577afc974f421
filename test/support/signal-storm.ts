// Signals sent to a real process at chosen moments, for tests that must prove no moment of a
// command's life lets a signal kill it by default or leave a worker behind.
import type { ChildProcess } from 'node:child_process';

/**
 * Sends the `signals` in turn, the first one at once and then one every `everyMs`, until the
 * process is gone, so that every window of its start, its work and its shutdown gets one. Returns
 * how many were sent so far. The first signal goes out synchronously: a caller that starts the
 * storm the moment it sees an output line hits the window right after that line, which a timer's
 * first tick (several ms later on a busy machine) would often miss as the process exits.
 */
export function signalStorm(proc: ChildProcess, signals: NodeJS.Signals[], everyMs = 3): () => number {
  let sent = 0;
  // eslint-disable-next-line prefer-const -- stop() reads it before it is assigned (the first send may end the storm)
  let timer: NodeJS.Timeout | undefined;
  const stop = () => clearInterval(timer);
  const send = () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return stop();
    try {
      if (proc.kill(signals[sent % signals.length])) sent++;
    } catch {
      stop();
    }
  };
  send();
  timer = setInterval(send, everyMs);
  proc.once('exit', stop);
  return () => sent;
}

/** Resolves once `pred` holds (polled), rejects after `timeoutMs` naming `what`. */
export async function until(what: string, pred: () => boolean, timeoutMs = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
