// CPU time of a process tree from /proc (Linux): what a benchmark's processes cost, a figure that
// holds on a shared machine where wall-clock rates drift with the load of others. A process's
// own utime+stime plus cutime+cstime (its children that exited and were waited for), summed over
// the live descendants, so a worker that came and went during the run is still counted in its
// parent. Returns NaN where /proc cannot be read (not Linux).
import * as fs from 'node:fs';
import * as path from 'node:path';

const TICKS_PER_S = 100; // USER_HZ: 100 on every Linux Node supports.

interface Stat {
  ppid: number;
  /** utime + stime + cutime + cstime, in ticks. */
  ticks: number;
  /** cutime + cstime: children that exited and were waited for. */
  waited: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
    const waited = Number(f[13]) + Number(f[14]);
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + waited, waited };
  } catch {
    return undefined;
  }
}

/** What a process is, for the breakdown: Chromium's --type= (renderer, gpu-process, utility), else its program's name. */
function kindOf(pid: number): string {
  try {
    // Chromium rewrites its command line as one space-separated string: search the whole text.
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    const type = /--type=([\w-]+)/.exec(cmd);
    if (type) return type[1];
    if (/worker\.js\b/.test(cmd)) return 'worker';
    if (/chrom/i.test(cmd.split(' ')[0])) return 'browser';
    return path.basename(cmd.split(' ')[0]) || '?';
  } catch {
    return '?';
  }
}

/**
 * CPU seconds used so far by `root` and every live descendant (with their waited-for children);
 * `skip`: descendants left out with their own trees (counted elsewhere), `self`: false leaves out
 * root's own time (a benchmark counting only the processes it started).
 */
export function treeCpuSeconds(root: number, skip: readonly number[] = [], self = true): number {
  return treeCpu(root, skip, self).total;
}

/** As treeCpuSeconds, with the seconds by kind of process too (see kindOf). */
export function treeCpu(root: number, skip: readonly number[] = [], self = true): { total: number; byKind: Record<string, number> } {
  let pids: number[];
  try {
    pids = fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return { total: NaN, byKind: {} };
  }
  const children = new Map<number, number[]>();
  const stats = new Map<number, Stat>();
  for (const pid of pids) {
    const st = readStat(pid);
    if (!st) continue;
    stats.set(pid, st);
    const list = children.get(st.ppid);
    if (list) list.push(pid);
    else children.set(st.ppid, [pid]);
  }
  if (!stats.has(root)) return { total: NaN, byKind: {} };
  let ticks = 0;
  const byKind: Record<string, number> = {};
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    if (pid !== root || self) {
      const st = stats.get(pid);
      ticks += st?.ticks ?? 0;
      const k = kindOf(pid);
      // Its own time apart from its exited children's (a build worker that has ended).
      byKind[k] = (byKind[k] ?? 0) + ((st?.ticks ?? 0) - (st?.waited ?? 0)) / TICKS_PER_S;
      if (st?.waited) byKind[`${k}'s exited children`] = (byKind[`${k}'s exited children`] ?? 0) + st.waited / TICKS_PER_S;
    }
    for (const c of children.get(pid) ?? []) if (!skip.includes(c)) todo.push(c);
  }
  return { total: ticks / TICKS_PER_S, byKind };
}
