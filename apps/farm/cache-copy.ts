// A farm build's private working copy of a shared timing cache, so that builds sharing one
// (GPU, TensorRT version) cache run side by side and hold the farm-wide lock only while the shared
// file is replaced.
//
// The native layer saves a cache by re-reading the file under a file lock, merging and renaming
// (and, when it cannot get the lock, by writing its entries to a sidecar "<cache>.pending-<pid>-<n>"
// that every later load reads and every later save folds in). That merge happens inside the build
// worker process at the end of the build, with no hook for the farm to take a Redis lock around
// it, and only native code can merge (TensorRT's format is opaque). So instead of letting the build
// touch the shared file, the farm:
//   1. check-out (no lock): copies the shared file and its pending sidecars into a private folder;
//      the build loads and saves that copy (its own file lock there is uncontended and local);
//   2. publish, under the Redis lock: if the shared file still has the bytes that were copied,
//      the build's copy holds all of it plus its own entries, so it replaces the shared file
//      (temp + fsync + rename) and the sidecars it folded in are removed; if another build
//      published meanwhile, the copy is added as a new sidecar instead (link(2): never replaces
//      anything), which every load reads and the next publication or native save folds in.
// Either way no measured entry is lost. Reading without the lock is safe because every writer
// renames whole files into place. The replacement also holds the native layer's own file lock
// ("<cache>.lock", through util-linux flock(1)), so a build that saves into the shared file
// directly (outside the farm, or a worker with --cache-lock off) is never undone by it. Sidecar names made here use a first number above Linux's
// largest pid (2^22), so they never collide with one the native layer makes on any machine.
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Above PID_MAX_LIMIT (2^22): sidecar names from here never equal a native "<pid>-<n>" name. */
const FARM_SIDECAR_BASE = 2 ** 22 + 1;
const PENDING = /^\.pending-(\d+-\d+)$/;

export interface WorkingCopy {
  /** The shared cache the build stands for. */
  readonly shared: string;
  /** The private file the build loads and saves. */
  readonly path: string;
  readonly dir: string;
  /** sha256 of the shared file as copied; null when it did not exist. */
  readonly copiedHash: string | null;
  /** The shared file's sidecars that were copied: suffix ("<pid>-<n>") → sha256. */
  readonly copiedSidecars: Map<string, string>;
}

export type Published = { kind: 'nothing' } | { kind: 'replaced'; foldedSidecars: number; sidecars: string[] } | { kind: 'sidecar'; sidecars: string[]; why: string };

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/**
 * The bytes of a regular file; undefined when there is none. Opened without blocking and checked
 * to be a regular file first: a FIFO swapped in at a cache's path must not hang the worker.
 */
function readIfFile(p: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error(`${p} is not a regular file`);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Pending sidecars of `file`: suffix → full path. */
function sidecarsOf(file: string): Map<string, string> {
  const out = new Map<string, string>();
  const dir = path.dirname(file);
  const base = path.basename(file);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    if (!n.startsWith(base)) continue;
    const m = PENDING.exec(n.slice(base.length));
    if (m) out.set(m[1], path.join(dir, n));
  }
  return out;
}

function writeSynced(file: string, bytes: Buffer): void {
  const fd = fs.openSync(file, 'wx', 0o644);
  try {
    fs.writeSync(fd, bytes);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function tempBeside(target: string): string {
  return `${target}.farm-tmp-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
}

/** The file a replacement goes to: a symlinked cache keeps its link (as the native save does). */
function realTarget(shared: string): string {
  try {
    return fs.realpathSync(shared);
  } catch {
    return shared;
  }
}

/** Copies the shared cache and its pending sidecars into a new private folder. */
export function checkOut(shared: string, tmpRoot = os.tmpdir()): WorkingCopy {
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'tbs-farm-cache-'));
  const file = path.join(dir, path.basename(shared));
  try {
    const bytes = readIfFile(shared);
    if (bytes) writeSynced(file, bytes);
    const copiedSidecars = new Map<string, string>();
    for (const [suffix, p] of sidecarsOf(shared)) {
      let side: Buffer | undefined;
      try {
        side = readIfFile(p);
      } catch {
        continue; // not a regular file, unreadable: the native load skips it too, and leaves it
      }
      if (!side) continue; // folded in and removed since the listing
      writeSynced(`${file}.pending-${suffix}`, side);
      copiedSidecars.set(suffix, sha(side));
    }
    return { shared, path: file, dir, copiedHash: bytes ? sha(bytes) : null, copiedSidecars };
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Adds `bytes` as a new sidecar of `shared`, under a name nobody else makes; never replaces a file. */
export function addSidecar(shared: string, bytes: Buffer): string {
  const target = realTarget(shared);
  const tmp = tempBeside(target);
  writeSynced(tmp, bytes);
  try {
    for (;;) {
      const first = FARM_SIDECAR_BASE + crypto.randomInt(2 ** 31 - FARM_SIDECAR_BASE);
      const name = `${target}.pending-${first}-${crypto.randomInt(2 ** 31)}`;
      try {
        fs.linkSync(tmp, name);
        return name;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Keeps the damaged shared file beside it (as the native save does) before it is replaced. */
function keepCorrupt(target: string): string | undefined {
  for (let n = 0; n < 1000; n++) {
    const copy = `${target}${n === 0 ? '.corrupt' : `.corrupt-${n}`}`;
    try {
      fs.linkSync(target, copy);
      return copy;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
    }
  }
  return undefined;
}

/**
 * Takes the exclusive flock(2) the native layer takes on "<cache>.lock" (core/file_lock.cc), held
 * by a flock(1) child running `cat` until release closes its stdin (so it also ends with this
 * process). Resolves with the release, undefined when not had within `waitMs`, or 'unavailable'
 * when flock(1) is not installed.
 */
export function fileLock(lockPath: string, waitMs: number): Promise<(() => Promise<void>) | 'unavailable' | undefined> {
  return new Promise((resolve) => {
    const child = spawn('flock', ['-w', String(Math.max(0, waitMs) / 1000), lockPath, 'cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    let held = false;
    const exited = new Promise<void>((r) => child.once('close', () => r()));
    child.once('error', (e) => resolve((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'unavailable' : undefined));
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (held || !out.includes('held\n')) return;
      held = true;
      resolve(async () => {
        child.stdin.end();
        await exited;
      });
    });
    // cat echoes this only once flock has the lock and started it.
    child.stdin.write('held\n');
    child.once('close', () => {
      if (!held) resolve(undefined);
    });
  });
}

/**
 * Publishes what the build added to its copy into the shared cache (see the top of this file).
 * `lock` takes the farm-wide lock on the shared cache and returns its release, or undefined when
 * it could not be had (then the copy goes to a sidecar: nothing waits forever, nothing is lost).
 */
export async function publish(wc: WorkingCopy, lock: () => Promise<(() => Promise<void>) | undefined>, opts: { fileLockWaitMs?: number } = {}): Promise<Published> {
  const mine = readIfFile(wc.path);
  const mineHash = mine ? sha(mine) : null;
  const left = sidecarsOf(wc.path);
  // Sidecars in the copy that the build made itself (its save could not take the copy's lock).
  const newSidecars = [...left].filter(([suffix]) => !wc.copiedSidecars.has(suffix)).map(([, p]) => p);
  const extra = newSidecars.map((p) => addSidecar(wc.shared, fs.readFileSync(p)));
  if (!mine || mineHash === wc.copiedHash) {
    // The build saved nothing into the copy (no entries, optimisation level 0, failed early).
    return extra.length ? { kind: 'sidecar', sidecars: extra, why: 'the build could not save into its working copy' } : { kind: 'nothing' };
  }
  const release = await lock();
  if (!release) {
    return { kind: 'sidecar', sidecars: [addSidecar(wc.shared, mine), ...extra], why: 'the farm-wide lock on the shared cache could not be had' };
  }
  let releaseFile: (() => Promise<void>) | undefined;
  try {
    const target = realTarget(wc.shared);
    const file = await fileLock(`${target}.lock`, opts.fileLockWaitMs ?? 30_000);
    if (file === undefined) {
      return { kind: 'sidecar', sidecars: [addSidecar(wc.shared, mine), ...extra], why: `the file lock ${target}.lock could not be had` };
    }
    // Without flock(1) only the Redis lock guards the replacement: enough while the farm is the
    // only writer of its shared caches (docs/farm.md).
    if (file !== 'unavailable') releaseFile = file;
    const now = readIfFile(target);
    if ((now ? sha(now) : null) !== wc.copiedHash) {
      return { kind: 'sidecar', sidecars: [addSidecar(wc.shared, mine), ...extra], why: 'another build published into the shared cache during this one' };
    }
    // The native save kept a damaged cache as "<copy>.corrupt": the shared file has those bytes.
    if (now && fs.existsSync(`${wc.path}.corrupt`)) keepCorrupt(target);
    const tmp = tempBeside(target);
    writeSynced(tmp, mine);
    try {
      fs.renameSync(tmp, target);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw e;
    }
    // Sidecars the build folded into its copy are in the shared file now: remove the originals,
    // unless the name was reused for other content since (then it is someone else's).
    let folded = 0;
    const shared = sidecarsOf(target);
    for (const [suffix, hash] of wc.copiedSidecars) {
      if (left.has(suffix) || fs.existsSync(`${wc.path}.pending-${suffix}.rejected`)) continue;
      const p = shared.get(suffix);
      let bytes: Buffer | undefined;
      try {
        bytes = p ? readIfFile(p) : undefined;
      } catch {
        continue; // swapped for something else: not ours to remove
      }
      if (p && bytes && sha(bytes) === hash) {
        fs.rmSync(p, { force: true });
        folded++;
      }
    }
    return { kind: 'replaced', foldedSidecars: folded, sidecars: extra };
  } finally {
    await releaseFile?.();
    await release();
  }
}

export function discard(wc: WorkingCopy): void {
  fs.rmSync(wc.dir, { recursive: true, force: true });
}
