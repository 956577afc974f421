// Engines used to be written under the configuration folder (<userData>/engines, i.e.
// ~/.config/TRT Build Studio/engines): gigabytes each in a folder that desktops sync and back up.
// They now live in the data folder (app-paths.ts enginesDir). Existing ones are moved once, at
// start: a rename on the same filesystem, a copy then delete across filesystems; a name that
// already exists at the destination is left where it is, never overwritten.
import { promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';

export interface MoveResult {
  moved: string[];
  /** Left in the old folder because the new one already has a file of that name. */
  kept: string[];
}

export async function moveLegacyEngines(from: string, to: string, log?: (m: string) => void): Promise<MoveResult> {
  const result: MoveResult = { moved: [], kept: [] };
  if (path.resolve(from) === path.resolve(to)) return result;
  let entries: Dirent[];
  try {
    entries = await fs.readdir(from, { withFileTypes: true });
  } catch {
    return result; // nothing to move
  }
  if (entries.length === 0) {
    await fs.rmdir(from).catch(() => undefined);
    return result;
  }
  await fs.mkdir(to, { recursive: true, mode: 0o700 });
  for (const e of entries) {
    if (!e.isFile()) continue;
    const src = path.join(from, e.name);
    const dest = path.join(to, e.name);
    try {
      // A hard link never replaces an existing name (EEXIST), unlike rename.
      await linkNoReplace(src, dest);
      await fs.unlink(src);
      result.moved.push(e.name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') log?.(`could not move ${src} to ${to}: ${(err as Error).message}`);
      result.kept.push(e.name);
    }
  }
  if (result.kept.length === 0) await fs.rmdir(from).catch(() => undefined);
  if (result.moved.length) log?.(`moved ${result.moved.length} engine file(s) from ${from} to ${to}`);
  return result;
}

/** `dest` becomes `src`'s content, whole, unless `dest` exists (then EEXIST, nothing changed). */
async function linkNoReplace(src: string, dest: string): Promise<void> {
  try {
    await fs.link(src, dest);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Another filesystem, or one without hard links: copy beside the destination, then link.
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw err;
  }
  const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.${process.pid}.moving`);
  try {
    await fs.copyFile(src, tmp);
    const fh = await fs.open(tmp, 'r+');
    await fh.sync().finally(() => fh.close());
    await fs.link(tmp, dest);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}
