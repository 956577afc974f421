// The kernel's memory facts (cgroup-memory.ts) read from fake /proc and cgroup trees: v2 and v1
// paths, the smallest limit along the path, the OOM-kill counters, the host-wide fallback, and
// "auto" = 90 % of the lower of the cgroup limit and MemAvailable.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { autoHostLimit, cgroupDirOf, memAvailableBytes, readCgroupMemory } from '../cgroup-memory.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

const root = tempDir('tbs-cgroup-');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const MiB = 2 ** 20;

function tree(name: string, files: Record<string, string>): string {
  const base = path.join(root, name);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(base, rel)), { recursive: true });
    fs.writeFileSync(path.join(base, rel), text);
  }
  return base;
}

describe('cgroup memory', () => {
  it('v2: the folder from /proc/<pid>/cgroup, the smallest limit up the path, oom_kill from memory.events', () => {
    const base = tree('v2', {
      'proc/42/cgroup': '0::/user.slice/build.scope\n',
      'proc/vmstat': 'oom_kill 99\n',
      'cg/memory.max': 'max\n',
      'cg/user.slice/memory.max': `${8192 * MiB}\n`,
      'cg/user.slice/build.scope/memory.max': 'max\n',
      'cg/user.slice/build.scope/memory.events': 'low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n',
    });
    const env = { TBS_PROC_ROOT: path.join(base, 'proc'), TBS_CGROUP_MOUNT: path.join(base, 'cg') };
    const where = cgroupDirOf(42, env);
    expect(where).toEqual({ dir: path.join(base, 'cg/user.slice/build.scope'), version: 2 });
    expect(readCgroupMemory(where, env)).toMatchObject({ version: 2, limitBytes: 8192 * MiB, oomKills: 2, oomKillSource: 'cgroup' });
  });

  it('v1: the memory controller’s line, memory.limit_in_bytes (huge = none), memory.oom_control', () => {
    const base = tree('v1', {
      'proc/7/cgroup': '9:name=systemd:/\n4:memory:/process_api/abc\n3:cpuset:/\n0::/\n',
      'cg/memory/memory.limit_in_bytes': '9223372036854771712\n',
      'cg/memory/process_api/memory.limit_in_bytes': '9223372036854771712\n',
      'cg/memory/process_api/abc/memory.limit_in_bytes': `${300 * MiB}\n`,
      'cg/memory/process_api/abc/memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 5\n',
      'cg/memory/process_api/abc/memory.max_usage_in_bytes': `${299 * MiB}\n`,
    });
    const env = { TBS_PROC_ROOT: path.join(base, 'proc'), TBS_CGROUP_MOUNT: path.join(base, 'cg') };
    const where = cgroupDirOf(7, env);
    expect(where).toEqual({ dir: path.join(base, 'cg/memory/process_api/abc'), version: 1 });
    expect(readCgroupMemory(where, env)).toMatchObject({ version: 1, limitBytes: 300 * MiB, oomKills: 5, oomKillSource: 'cgroup', peakBytes: 299 * MiB });
  });

  it('falls back to the host-wide counter, and knows nothing without /proc', () => {
    const base = tree('none', { 'proc/1/cgroup': '0::/x\n', 'proc/vmstat': 'pgfault 1\noom_kill 4\n' });
    const env = { TBS_PROC_ROOT: path.join(base, 'proc'), TBS_CGROUP_MOUNT: path.join(base, 'cg') };
    expect(readCgroupMemory(cgroupDirOf(1, env), env)).toMatchObject({ oomKills: 4, oomKillSource: 'host' });
    expect(readCgroupMemory(cgroupDirOf(1, env), env).limitBytes).toBeUndefined();
    const nothing = { TBS_PROC_ROOT: path.join(base, 'missing') };
    expect(cgroupDirOf(1, nothing)).toBeUndefined();
    expect(readCgroupMemory(undefined, nothing)).toEqual({});
  });

  it('TBS_CGROUP_DIR names the folder directly', () => {
    const base = tree('override', { 'memory.max': `${64 * MiB}\n`, 'memory.events': 'oom_kill 0\n' });
    const env = { TBS_CGROUP_DIR: base };
    expect(readCgroupMemory(cgroupDirOf(12345, env), env)).toMatchObject({ dir: base, version: 2, limitBytes: 64 * MiB, oomKills: 0 });
  });

  it('auto: 90 % of the lower of the cgroup limit and MemAvailable, saying which', () => {
    const base = tree('auto', {
      'proc/self/cgroup': '0::/b\n',
      'proc/meminfo': 'MemTotal:       24684076 kB\nMemFree:        20000000 kB\nMemAvailable:    1048576 kB\n',
      'cg/b/memory.max': `${2048 * MiB}\n`,
    });
    const env = { TBS_PROC_ROOT: path.join(base, 'proc'), TBS_CGROUP_MOUNT: path.join(base, 'cg') };
    expect(memAvailableBytes(env)).toBe(1024 * MiB);
    expect(autoHostLimit(env)).toEqual({ bytes: Math.floor(1024 * MiB * 0.9), basis: '90 % of the memory available at start' });
    fs.writeFileSync(path.join(base, 'cg/b/memory.max'), `${512 * MiB}\n`);
    expect(autoHostLimit(env)).toEqual({ bytes: Math.floor(512 * MiB * 0.9), basis: '90 % of the cgroup memory limit' });
    expect(autoHostLimit({ TBS_PROC_ROOT: path.join(base, 'nothing') })).toBeUndefined();
  });
});
