// Lists and deletes the engines in the service's default output folder, and nothing else: a name
// is one plain file name inside that folder, never a path, so a client cannot reach other files.
import fs from 'node:fs';
import path from 'node:path';
import type { DeleteEnginesResult, EngineFile } from '../shared/engine-files.js';
import { ServiceError } from './api.js';
import { manifestPathFor, removeManifest } from './engine-manifest-file.js';

export type { DeleteEnginesResult, EngineFile } from '../shared/engine-files.js';

const SIM_HEADER = 'TRT-BUILD-STUDIO SIMULATED ENGINE';
/** Deleting many at once is a client bug or an attack, not a cleanup. */
export const MAX_DELETE_NAMES = 1000;

/** The file names a listing shows: finished engines (temp files end in ".tmp-<pid>-<n>"). */
export function isEngineName(name: string): boolean {
  return name.endsWith('.engine') && name.length > '.engine'.length;
}

function readHead(file: string): string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(SIM_HEADER.length);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('latin1');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

const myUid = () => (typeof process.geteuid === 'function' ? process.geteuid() : undefined);

/**
 * Engines in `dir`, newest first: this user's (owned by this uid) and this product's (a build of
 * it writes `<engine>.manifest.json` beside every engine), so another program's `.engine` files,
 * or another user's, put in the same folder are not offered (nor deleted from here).
 * `writtenBy` maps a full path (and its stat) to the build that wrote it, when the file is still
 * the one that build wrote. A missing folder lists nothing (no build has written to it yet).
 */
export function listEngineFiles(dir: string, writtenBy: (file: string, st: fs.Stats) => string | undefined): EngineFile[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: Array<EngineFile & { mtimeMs: number }> = [];
  for (const e of entries) {
    if (!e.isFile() || !isEngineName(e.name)) continue;
    const file = path.join(dir, e.name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue; // deleted between readdir and stat
    }
    if (!st.isFile()) continue;
    const me = myUid();
    if (me !== undefined && st.uid !== me) continue;
    if (!fs.existsSync(manifestPathFor(file))) continue;
    const buildId = writtenBy(file, st);
    out.push({
      name: e.name,
      bytes: st.size,
      modifiedAt: st.mtime.toISOString(),
      ...(buildId !== undefined ? { buildId } : {}),
      simulated: readHead(file) === SIM_HEADER,
      mtimeMs: st.mtimeMs,
    });
  }
  out.sort((a, b) => b.mtimeMs - a.mtimeMs || a.name.localeCompare(b.name));
  return out.map(({ mtimeMs: _m, ...f }) => f);
}

/** Checks the request shape; throws ServiceError('bad_input') naming `names`. */
export function checkEngineNames(names: unknown): string[] {
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) {
    throw new ServiceError('bad_input', 'names must be an array of engine file names');
  }
  if (names.length === 0) throw new ServiceError('bad_input', 'names must name at least one engine file');
  if (names.length > MAX_DELETE_NAMES) throw new ServiceError('bad_input', `names may hold at most ${MAX_DELETE_NAMES} file names`);
  return names as string[];
}

/**
 * Deletes the named engines from `dir`. Each name is refused, with a reason, unless it is a plain
 * engine file name of a regular file that no unfinished build writes (`busy`).
 */
export function deleteEngineFiles(dir: string, names: unknown, busy: (file: string) => boolean): DeleteEnginesResult {
  const list = checkEngineNames(names);
  const result: DeleteEnginesResult = { deleted: [], refused: [] };
  const seen = new Set<string>();
  for (const name of list) {
    if (seen.has(name)) continue;
    seen.add(name);
    const refuse = (reason: string) => result.refused.push({ name, reason });
    if (name === '' || name === '.' || name === '..' || /[\\/\u0000]/.test(name) || path.basename(name) !== name) {
      refuse('not a plain file name');
      continue;
    }
    if (!isEngineName(name)) {
      refuse('not an engine file (.engine)');
      continue;
    }
    const file = path.join(dir, name);
    if (busy(file)) {
      refuse('a running or queued build writes this file');
      continue;
    }
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      refuse('no such file');
      continue;
    }
    if (!st.isFile()) {
      refuse('not a regular file');
      continue;
    }
    try {
      fs.unlinkSync(file);
      // Removed together: a manifest without its engine describes nothing.
      removeManifest(file);
      result.deleted.push(name);
    } catch (e) {
      refuse((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `cannot delete: ${(e as Error).message}`);
    }
  }
  return result;
}
