// What /proc says about the memory of the processes a memory test runs (a CLI and its build
// worker), for the stalled-reader tests. Linux only, like those tests.
import * as fs from 'node:fs';

/** A field of /proc/<pid>/status in KiB: VmRSS (now) or VmHWM (the kernel's own peak); 0 once the process is gone. */
export function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // exited between listing and reading
  }
}

/** Which of ours a process is, from its command line. */
export function processRole(pid: number): 'cli' | 'worker' | 'other' {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (argv.includes('worker.js')) return 'worker';
    if (argv.includes('trt-build-studio')) return 'cli';
  } catch {
    // Gone.
  }
  return 'other';
}
