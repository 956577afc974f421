// Leftover temporary engines in the engines folder. The native layer writes an engine (and a
// timing cache) as `<target>.tmp-<pid>-<n>` and renames it at the end (ATOMIC_TEMP_SUFFIX_MAX_BYTES
// in apps/shared/file-names.ts); the service removes a crashed worker's files by its pid. What is
// left after the host itself died (session logout, SIGKILL, power loss) was never removed: each is
// as large as an engine (gigabytes). The desktop app sweeps them at start.
//
// A file is removed only when all hold: its name is exactly the atomic-write temp pattern, it is a
// regular file (not a link), it belongs to this user, it was last written before `olderThanMs`
// (the sweeping process's start: no build of ours can have written it since), and the pid in its
// name is not a live process (a build run by the CLI or `serve` into the same folder is left be).
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** `<target>.tmp-<pid>-<n>`: pid a pid_t (≤ 10 digits), n a uint64 counter (≤ 20 digits). */
export const ATOMIC_TEMP_NAME = /^(.+)\.tmp-(\d{1,10})-(\d{1,20})$/;

export interface TempSweepOptions {
  /** Only files last modified before this time (ms since the epoch) are removed. */
  olderThanMs: number;
  /** Only files of this user (default: the calling process's uid). */
  uid?: number;
  /** Whether a pid is a running process (default: signal 0). */
  isAlive?(pid: number): boolean;
  log?(message: string): void;
}

export interface TempSweepResult {
  removed: string[];
  bytes: number;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, owned by someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes leftover temp engines from `dir` (not recursive); a missing folder sweeps nothing. */
export async function sweepTempEngines(dir: string, opts: TempSweepOptions): Promise<TempSweepResult> {
  const uid = opts.uid ?? process.getuid?.();
  const isAlive = opts.isAlive ?? pidAlive;
  const result: TempSweepResult = { removed: [], bytes: 0 };
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return result;
    throw e;
  }
  for (const name of names) {
    const m = ATOMIC_TEMP_NAME.exec(name);
    if (!m) continue;
    const file = path.join(dir, name);
    const st = await fs.lstat(file).catch(() => null);
    if (!st?.isFile()) continue;
    if (uid !== undefined && st.uid !== uid) continue;
    if (st.mtimeMs >= opts.olderThanMs) continue;
    if (isAlive(Number(m[2]))) continue;
    try {
      await fs.unlink(file);
      result.removed.push(name);
      result.bytes += st.size;
    } catch (e) {
      opts.log?.(`could not remove leftover temp engine ${file}: ${(e as Error).message}`);
    }
  }
  if (result.removed.length > 0) {
    const gb = (result.bytes / 1e9).toFixed(result.bytes >= 1e9 ? 1 : 3);
    opts.log?.(`removed ${result.removed.length} leftover temp engine file(s), ${gb} GB, from ${dir}: ${result.removed.join(', ')}`);
  }
  return result;
}
