// Words for Electron's 'child-process-gone' reasons, for the build's failure message: "exited
// without a result (exit code 9)" alone does not tell the user the worker ran out of memory.
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

/** "ran out of memory (Electron: oom, exit code 9)". */
export function describeGone(details: ChildGoneDetails): string {
  const words = REASONS[details.reason] ?? `ended (${details.reason})`;
  return `${words} (Electron: ${details.reason}, exit code ${details.exitCode})`;
}
