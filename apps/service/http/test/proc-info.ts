// What /proc says about processes, for tests that must prove no worker outlived its server.
import * as fs from 'node:fs';

/** Direct children of a process. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // the process went away while we looked
    }
  }
  return out;
}

/** Running (a zombie waiting to be reaped counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}
