// Writes that never leave a half-written file at the destination: the data goes to a temporary
// file in the same directory (same filesystem, so rename is atomic), is flushed to disk, and only
// then replaces the destination. A crash or a full disk leaves the old file (or none) in place.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

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

async function replaceWith(tmp: string, dest: string, fill: (tmp: string) => Promise<void>): Promise<void> {
  try {
    await fill(tmp);
    await fsyncFile(tmp);
    await fs.rename(tmp, dest);
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
  await replaceWith(tempPathFor(dest), dest, (tmp) => fs.copyFile(src, tmp));
  const { size } = await fs.stat(dest);
  if (size !== srcStat.size) throw new Error(`Copy of ${src} to ${dest} is ${size} bytes, expected ${srcStat.size}`);
  return size;
}

export async function writeFileAtomic(dest: string, data: string | Uint8Array): Promise<void> {
  await replaceWith(tempPathFor(dest), dest, (tmp) => fs.writeFile(tmp, data));
}
