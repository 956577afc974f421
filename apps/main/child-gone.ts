// Words for Electron's 'child-process-gone' reasons, for the build's failure message: "exited
// without a result (exit code 9)" alone does not tell the user the worker ran out of memory.
// Electron reports a utility process's end two ways, and they differ on Linux and macOS:
// - 'child-process-gone' (every end but a clean exit(0)): exitCode is the raw wait status
//   Chromium's base::GetTerminationStatus took from waitpid (exit(1) is 256, SIGSEGV is 11).
// - the UtilityProcess 'exit' event: when the worker ended through Node's process.exit, Electron's
//   NodeService hands the plain exit code over its Mojo pipe ("process_exit_termination") and
//   that is what 'exit' carries (1 is exit code 1); only when the process died some other way
//   (a signal, a native _exit) does 'exit' carry the raw wait status.
// So the exit event's number alone cannot tell exit(11) from SIGSEGV: the gone details decide.
// On Linux a kernel out-of-memory kill arrives as 'killed' (SIGKILL), never 'oom': the service
// tells those apart by the cgroup's OOM-kill counter, not by this reason.
import { describeExit, fromWaitStatus, type ExitStatus } from '../service/exit-status.js';
export interface ChildGoneDetails {
  type: string;
  reason: string;
  exitCode: number;
  serviceName?: string;
  name?: string;
}

const REASONS: Record<string, string> = {
  'abnormal-exit': 'exited abnormally',
  killed: 'was killed (by a signal from outside the app, or by the system)',
  crashed: 'crashed',
  oom: 'ran out of memory',
  'launch-failed': 'could not be started',
  'integrity-failure': 'failed a code integrity check',
  'memory-eviction': 'was ended to free memory',
};

/** "crashed (Electron: crashed, signal SIGSEGV)". */
export function describeGone(details: ChildGoneDetails, platform: NodeJS.Platform = process.platform): string {
  const words = REASONS[details.reason] ?? `ended (${details.reason})`;
  return `${words} (Electron: ${details.reason}, ${describeExit(fromWaitStatus(details.exitCode, platform))})`;
}

/**
 * How a utility process ended: from 'child-process-gone' when Electron sent one (its exitCode is
 * a wait status), else the 'exit' event's number as the exit code it is after process.exit.
 */
export function utilityExit(exitEventCode: number, gone: ChildGoneDetails | null, platform: NodeJS.Platform = process.platform): ExitStatus {
  if (gone) return fromWaitStatus(gone.exitCode, platform);
  // No account from Electron (it always sends one for an abnormal end, so this is rare): an exit
  // code never exceeds 255, so a larger number can only be a wait status.
  if (exitEventCode > 255) return fromWaitStatus(exitEventCode, platform);
  return { code: exitEventCode, signal: null };
}
