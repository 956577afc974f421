// What the kernel says about a build worker's memory: its cgroup's memory limit and out-of-memory
// kill counter (issue 21), and the host's available memory. Linux only; elsewhere every figure
// is simply unknown and nothing fails.
//
// cgroup v2: /proc/<pid>/cgroup has "0::/path"; the folder /sys/fs/cgroup/<path> has memory.max
// ("max" = none) and memory.events (line "oom_kill N": processes of this cgroup killed by an OOM
// killer). cgroup v1: the "memory" controller's line "N:memory:/path"; the folder
// /sys/fs/cgroup/memory/<path> has memory.limit_in_bytes (a huge value = none) and
// memory.oom_control (line "oom_kill N", kernel 4.13+). A limit may be set on any ancestor, so the
// effective limit is the smallest along the path. Without a readable counter in the cgroup, the
// host-wide /proc/vmstat "oom_kill" stands in (it rises for any process, so it is only used when
// the worker died by SIGKILL, and said to be host-wide).
//
// TBS_CGROUP_DIR names the worker's cgroup folder instead (tests point it at a fake folder; an
// operator at a cgroup the service does not run in), TBS_PROC_ROOT replaces /proc.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface CgroupMemory {
  /** The cgroup folder the figures come from; undefined when none was found. */
  dir?: string;
  version?: 1 | 2;
  /** The smallest memory limit along the cgroup's path, bytes; undefined when none is set. */
  limitBytes?: number;
  /** OOM kills counted so far; undefined when no counter could be read. */
  oomKills?: number;
  /** Where `oomKills` came from: the cgroup, or the host-wide /proc/vmstat. */
  oomKillSource?: 'cgroup' | 'host';
  /**
   * The most memory the cgroup has held (v2 memory.peak, kernel 5.19+; v1
   * memory.max_usage_in_bytes), bytes: it catches a peak the heartbeats missed (a worker killed
   * within its first second). Every process of the cgroup counts.
   */
  peakBytes?: number;
}

/** v1 writes "no limit" as the largest page-aligned signed 64-bit value; anything this large is none. */
const V1_UNLIMITED = 2 ** 60;

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function procRoot(env: NodeJS.ProcessEnv): string {
  return env.TBS_PROC_ROOT || '/proc';
}

/** The cgroup folder of `pid` (memory controller on v1), or undefined. */
export function cgroupDirOf(pid: number | 'self', env: NodeJS.ProcessEnv = process.env): { dir: string; version: 1 | 2 } | undefined {
  if (env.TBS_CGROUP_DIR) {
    const dir = env.TBS_CGROUP_DIR;
    return { dir, version: fs.existsSync(path.join(dir, 'memory.limit_in_bytes')) ? 1 : 2 };
  }
  const text = read(path.join(procRoot(env), String(pid), 'cgroup'));
  if (!text) return undefined;
  const mount = env.TBS_CGROUP_MOUNT || '/sys/fs/cgroup';
  for (const line of text.split('\n')) {
    const [, controllers, p] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined) continue;
    if (controllers.split(',').includes('memory')) return { dir: path.join(mount, 'memory', p), version: 1 };
  }
  const v2 = /^0::(.*)$/m.exec(text);
  return v2 ? { dir: path.join(mount, v2[1]), version: 2 } : undefined;
}

function counter(text: string | undefined, key: string): number | undefined {
  const m = text ? new RegExp(`^${key}\\s+(\\d+)`, 'm').exec(text) : null;
  return m ? Number(m[1]) : undefined;
}

function limitIn(dir: string, version: 1 | 2): number | undefined {
  const raw = read(path.join(dir, version === 2 ? 'memory.max' : 'memory.limit_in_bytes'))?.trim();
  if (!raw || raw === 'max' || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return version === 1 && n >= V1_UNLIMITED ? undefined : n;
}

/** The memory facts of a cgroup folder: the smallest limit up to the mount point, and its OOM counter. */
export function readCgroupMemory(where: { dir: string; version: 1 | 2 } | undefined, env: NodeJS.ProcessEnv = process.env): CgroupMemory {
  const out: CgroupMemory = {};
  if (where) {
    out.dir = where.dir;
    out.version = where.version;
    const mount = env.TBS_CGROUP_DIR ? where.dir : env.TBS_CGROUP_MOUNT || '/sys/fs/cgroup';
    // Up the tree: a limit on an ancestor binds this cgroup too.
    for (let d = where.dir; ; d = path.dirname(d)) {
      const l = limitIn(d, where.version);
      if (l !== undefined && (out.limitBytes === undefined || l < out.limitBytes)) out.limitBytes = l;
      if (d === mount || !d.startsWith(mount) || path.dirname(d) === d) break;
    }
    const peak = read(path.join(where.dir, where.version === 2 ? 'memory.peak' : 'memory.max_usage_in_bytes'))?.trim();
    if (peak && /^\d+$/.test(peak)) out.peakBytes = Number(peak);
    const kills = counter(read(path.join(where.dir, where.version === 2 ? 'memory.events' : 'memory.oom_control')), 'oom_kill');
    if (kills !== undefined) {
      out.oomKills = kills;
      out.oomKillSource = 'cgroup';
    }
  }
  if (out.oomKills === undefined) {
    const host = counter(read(path.join(procRoot(env), 'vmstat')), 'oom_kill');
    if (host !== undefined) {
      out.oomKills = host;
      out.oomKillSource = 'host';
    }
  }
  return out;
}

/** MemAvailable of /proc/meminfo in bytes, or undefined. */
export function memAvailableBytes(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(read(path.join(procRoot(env), 'meminfo')) ?? '');
  return m ? Number(m[1]) * 1024 : undefined;
}

/** The share of what a worker may use that `--max-host-memory auto` allows. */
export const AUTO_LIMIT_SHARE = 0.9;

/**
 * `--max-host-memory auto`: 90 % of what a worker started now may use, the cgroup's limit or
 * MemAvailable, whichever is lower; with its basis in words. Undefined when neither is known.
 */
export function autoHostLimit(env: NodeJS.ProcessEnv = process.env): { bytes: number; basis: string } | undefined {
  const a = availableHostMemory(env);
  return a && { bytes: Math.floor(a.bytes * AUTO_LIMIT_SHARE), basis: `90 % of ${a.what}` };
}

/**
 * What a worker started now (in this process's cgroup) may use: the cgroup's limit or
 * MemAvailable, whichever is lower, and which one it is; undefined when neither is known.
 */
export function availableHostMemory(env: NodeJS.ProcessEnv = process.env): { bytes: number; what: string } | undefined {
  const cg = readCgroupMemory(cgroupDirOf('self', env), env);
  const avail = memAvailableBytes(env);
  const options: Array<{ bytes: number; what: string }> = [];
  if (cg.limitBytes !== undefined) options.push({ bytes: cg.limitBytes, what: 'the cgroup memory limit' });
  if (avail !== undefined) options.push({ bytes: avail, what: 'the memory available at start' });
  if (options.length === 0) return undefined;
  return options.reduce((a, b) => (b.bytes < a.bytes ? b : a));
}
