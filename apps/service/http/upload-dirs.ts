// The upload folder of `serve` and the sweep of folders that dead servers left behind. A server
// killed with SIGKILL cannot remove its folder, and uploads are models of up to 2 GiB each, so the
// next server to start removes it. A folder's name carries its owner's PID and that process's start
// time (from /proc/<pid>/stat), so a PID reused by another process does not keep a stale folder
// alive, and the folder of a server that is still running is never touched.
import * as fs from 'node:fs';
import * as path from 'node:path';

const PREFIX = 'tbs-uploads-';
/** tbs-uploads-<pid>-<start time in clock ticks, or "x" without /proc>-<random from mkdtemp>. */
const OWNED = /^tbs-uploads-(\d+)-(\d+|x)-[A-Za-z0-9]{6}$/;

/** The start time of a process in clock ticks since boot, or undefined (no /proc, or no such process). */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = fields[19];
    return start && /^\d+$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, it is just not ours to signal.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates this process's upload folder (mode 0700) under `base`. */
export function createUploadDir(base: string): Promise<string> {
  const start = processStartTime(process.pid) ?? 'x';
  return fs.promises.mkdtemp(path.join(base, `${PREFIX}${process.pid}-${start}-`));
}

/** Whether the server that owns a folder of this name is gone; undefined when the name has no owner marker. */
export function ownerGone(name: string): boolean | undefined {
  const m = OWNED.exec(name);
  if (!m) return undefined;
  const pid = Number(m[1]);
  if (pid === process.pid) return false;
  if (!pidAlive(pid)) return true;
  if (m[2] === 'x') return false;
  const now = processStartTime(pid);
  // Alive with another start time: the PID was reused, the owner is gone.
  return now !== undefined && now !== m[2];
}

/**
 * Removes the upload folders under `base` whose owner is gone. Only folders of this user, with the
 * owner marker, that are real directories (not symlinks) are considered. Returns the removed paths.
 */
export async function removeStaleUploadDirs(base: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.promises.readdir(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(PREFIX) || ownerGone(name) !== true) continue;
    const full = path.join(base, name);
    try {
      const st = await fs.promises.lstat(full);
      if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid())) continue;
      await fs.promises.rm(full, { recursive: true, force: true });
      removed.push(full);
    } catch {
      // Gone meanwhile, or not ours to remove: either way, nothing to do.
    }
  }
  return removed;
}

/** Removes the upload directory and everything in it; used on shutdown. */
export async function removeUploadDir(dir: string): Promise<void> {
  await fs.promises.rm(dir, { recursive: true, force: true });
}

/**
 * Build farm: uploads live in the shared artifact folder (`<artifacts>/uploads`, 0700) so that a
 * build queued from an upload still finds its model after serve restarts; they are removed by
 * age, not by a shutdown. Removes this serve's user's `upload-*.onnx` files there older than
 * `maxAgeMs` (by modification time) and returns their paths. 0 keeps everything.
 */
export async function pruneUploads(dir: string, maxAgeMs: number, now = Date.now()): Promise<string[]> {
  if (maxAgeMs <= 0) return [];
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!/^upload-[0-9a-f]+\.onnx$/.test(name)) continue;
    const full = path.join(dir, name);
    try {
      const st = await fs.promises.lstat(full);
      if (!st.isFile() || (process.getuid && st.uid !== process.getuid())) continue;
      if (now - st.mtimeMs < maxAgeMs) continue;
      await fs.promises.rm(full, { force: true });
      removed.push(full);
    } catch {
      // Gone meanwhile: nothing to do.
    }
  }
  return removed;
}
