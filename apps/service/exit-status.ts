// How a worker process ended, in words, for every launcher: Node's child_process reports
// (code, signal) already decoded, but Electron's utilityProcess reports the raw POSIX wait status
// on Linux and macOS ('exit' and 'child-process-gone' alike: exit(1) arrives as 256, a segfault
// as 11, or 139 with the core-dump bit). One decoder and one wording, so a crash reads
// "signal SIGSEGV" whichever host ran the build.
import { constants } from 'node:os';

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

// Some numbers have two names (SIGABRT and SIGIOT are both 6); the first listed is the usual one.
const SIGNAL_NAMES = new Map<number, string>();
for (const [name, n] of Object.entries(constants.signals)) if (!SIGNAL_NAMES.has(n)) SIGNAL_NAMES.set(n, name);

/** The signal's name for its number ("SIGSEGV"), or "signal 42" for one this OS does not name. */
export function signalName(n: number): string {
  return SIGNAL_NAMES.get(n) ?? `signal ${n}`;
}

/**
 * A POSIX wait status as waitpid returns it: low 7 bits the terminating signal (0: exited
 * normally, then bits 8-15 are the exit code), bit 7 the core-dump flag. On Windows the number is
 * the process's exit code itself.
 */
export function fromWaitStatus(status: number | null | undefined, platform: NodeJS.Platform = process.platform): ExitStatus {
  if (status === null || status === undefined || !Number.isInteger(status) || status < 0) return { code: status ?? null, signal: null };
  if (platform === 'win32') return { code: status, signal: null };
  const sig = status & 0x7f;
  if (sig === 0) return { code: (status >> 8) & 0xff, signal: null };
  // 0x7f in the low bits is "stopped", which an exit event never reports; read it as a code.
  if (sig === 0x7f) return { code: status, signal: null };
  return { code: null, signal: signalName(sig) };
}

/** "signal SIGSEGV" or "exit code 1"; "no exit status" when neither is known. */
export function describeExit(exit: ExitStatus): string {
  if (exit.signal) return `signal ${exit.signal}`;
  if (exit.code !== null) return `exit code ${exit.code}`;
  return 'no exit status';
}
