// Words for Electron's 'child-process-gone' reasons, for the build's failure message: "exited
// without a result (exit code 9)" alone does not tell the user the worker ran out of memory.
// exitCode is a raw wait status on Linux and macOS; it is decoded like every other exit.
// On Linux a kernel out-of-memory kill arrives as 'killed' (SIGKILL), never 'oom': the service
// tells those apart by the cgroup's OOM-kill counter, not by this reason.
import { describeExit, fromWaitStatus } from '../service/exit-status.js';
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
