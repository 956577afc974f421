// A real memory cgroup for out-of-memory tests (issue 21): a child of the v2 hierarchy at
// /sys/fs/cgroup (when it has the memory controller) or of the v1 memory controller at
// /sys/fs/cgroup/memory, with a limit; processes are moved in by pid. Needs root and a writable
// cgroup filesystem (our test VM has both); elsewhere `makeMemoryCgroup` says why not, and the
// tests that need it are skipped with that reason. Linux only.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface MemoryCgroup {
  dir: string;
  version: 1 | 2;
  /** Moves a process in (its later allocations count against the limit). */
  add(pid: number): void;
  /** Removes the cgroup once its processes are gone (waits up to `waitMs` for them). */
  remove(waitMs?: number): Promise<void>;
}

function tryWrite(file: string, text: string): boolean {
  try {
    fs.writeFileSync(file, text);
    return true;
  } catch {
    return false;
  }
}

/** A fresh memory cgroup limited to `limitBytes`, or a string saying why there is none. */
export function makeMemoryCgroup(limitBytes: number): MemoryCgroup | string {
  const name = `tbs-test-${process.pid}-${Date.now()}`;
  const candidates: Array<{ root: string; version: 1 | 2; limitFile: string }> = [];
  const v2 = '/sys/fs/cgroup';
  if (fs.existsSync(path.join(v2, 'cgroup.controllers')) && fs.readFileSync(path.join(v2, 'cgroup.controllers'), 'utf8').includes('memory')) {
    candidates.push({ root: v2, version: 2, limitFile: 'memory.max' });
  }
  if (fs.existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes')) candidates.push({ root: '/sys/fs/cgroup/memory', version: 1, limitFile: 'memory.limit_in_bytes' });
  if (candidates.length === 0) return 'no cgroup v2 hierarchy with the memory controller and no cgroup v1 memory controller under /sys/fs/cgroup';
  const why: string[] = [];
  for (const c of candidates) {
    const dir = path.join(c.root, name);
    try {
      if (c.version === 2) tryWrite(path.join(c.root, 'cgroup.subtree_control'), '+memory');
      fs.mkdirSync(dir);
    } catch (e) {
      why.push(`${c.root}: ${(e as Error).message}`);
      continue;
    }
    if (!tryWrite(path.join(dir, c.limitFile), String(limitBytes)) || !fs.existsSync(path.join(dir, c.version === 2 ? 'memory.events' : 'memory.oom_control'))) {
      why.push(`${dir}: could not set ${c.limitFile} or no OOM counter`);
      fs.rmdirSync(dir);
      continue;
    }
    // No swap to escape into: the limit is on memory alone (v1 swappiness; v2 swap.max).
    if (c.version === 1) tryWrite(path.join(dir, 'memory.swappiness'), '0');
    else tryWrite(path.join(dir, 'memory.swap.max'), '0');
    return {
      dir,
      version: c.version,
      add: (pid) => fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid)),
      async remove(waitMs = 5000) {
        const until = Date.now() + waitMs;
        for (;;) {
          try {
            fs.rmdirSync(dir);
            return;
          } catch (e) {
            if (Date.now() > until) throw new Error(`could not remove the test cgroup ${dir}: ${(e as Error).message}`, { cause: e });
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      },
    };
  }
  return `cannot make a memory cgroup: ${why.join('; ')}`;
}
