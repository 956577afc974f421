// Writes that never leave a half-written file at the destination: the data goes to a temporary
// file in the same directory (same filesystem, so rename is atomic), is flushed to disk, and only
// then replaces the destination. A crash or a full disk leaves the old file (or none) in place.
//
// Nothing is replaced that is not a regular file (the rules of apps/service/output-target.ts, the
// same as for engines a build writes): a destination that is a FIFO, a device or a directory is
// refused, a symbolic link is written through (the temp file goes beside its target, the link
// stays a link), and the folder must be one others cannot swap the file in. The destination is
// looked at again right before the rename; Node has no renameat/RENAME_NOREPLACE, so that last
// look is as close to the rename as JavaScript gets (the native writer closes the gap entirely),
// and the folder check keeps other users out of it.
import { randomBytes } from 'node:crypto';
import { lstatSync, promises as fs, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { ServiceError } from '../service/api.js';
import { kindOf, resolveWriteTarget } from '../service/output-target.js';

function tempPathFor(dest: string): string {
  return path.join(path.dirname(dest), `.${path.basename(dest)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

async function fsyncFile(file: string): Promise<void> {
  const fh = await fs.open(file, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The file a write to `dest` replaces (a symbolic link followed), refusing what must not be
 * replaced. A directory or a missing folder is left to the write itself, whose error (EISDIR,
 * ENOENT) the caller words for its user.
 */
function writeTarget(dest: string): string {
  let st: Stats | undefined;
  try {
    st = lstatSync(dest);
  } catch {
    // Absent: what matters is its folder.
  }
  if (st?.isDirectory()) return dest;
  try {
    statSync(path.dirname(dest));
  } catch {
    return dest;
  }
  return resolveWriteTarget(dest, 'destination');
}

async function replaceWith(dest: string, fill: (tmp: string) => Promise<void>): Promise<void> {
  const target = writeTarget(dest);
  const tmp = tempPathFor(target);
  try {
    await fill(tmp);
    await fsyncFile(tmp);
    const now = await fs.lstat(target).catch(() => undefined);
    // A directory is left to rename(2), which refuses to put a file over it (EISDIR).
    if (now && !now.isFile() && !now.isDirectory()) throw new ServiceError('bad_input', `destination ${target} became ${kindOf(now)} while it was written; it is left untouched`);
    await fs.rename(tmp, target);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** Copies `src` to `dest` atomically; returns the bytes copied. */
export async function copyFileAtomic(src: string, dest: string): Promise<number> {
  const srcStat = await fs.stat(src);
  if (!srcStat.isFile()) throw new Error(`Cannot copy ${src}: not a regular file`);
  if (path.resolve(src) === path.resolve(dest)) return srcStat.size;
  await replaceWith(dest, (tmp) => fs.copyFile(src, tmp));
  const { size } = await fs.stat(dest);
  if (size !== srcStat.size) throw new Error(`Copy of ${src} to ${dest} is ${size} bytes, expected ${srcStat.size}`);
  return size;
}

export async function writeFileAtomic(dest: string, data: string | Uint8Array): Promise<void> {
  await replaceWith(dest, (tmp) => fs.writeFile(tmp, data));
}
