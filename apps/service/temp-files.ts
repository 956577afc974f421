// The temp files written beside an output before they are renamed over it, and their clean-up.
// Their names are one contract between the writers (the native layer's AtomicFile for the engine
// and the timing cache, engine-manifest-file.ts for the manifest, engine-reuse.ts placing a stored
// engine) and those who clean up after a writer that failed or was killed (build-session.ts for
// its own worker, output-claim.ts for a dead holder's build): `<file>.tmp-<pid>-<n>`, and
// `<file>.tmp-<pid>-reuse-<n>` for a stored engine being placed.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What comes before the counter in the name of a temp file process `pid` writes for `file`. */
export function tempPrefix(file: string, pid: number, kind: 'write' | 'reuse' = 'write'): string {
  return `${file}.tmp-${pid}-${kind === 'reuse' ? 'reuse-' : ''}`;
}

/** `name` is `prefix` followed by a counter, and nothing else. */
export function isTempName(name: string, prefix: string): boolean {
  return name.startsWith(prefix) && /^\d{1,20}$/.test(name.slice(prefix.length));
}

/**
 * Removes the entries of `dir` whose names `byName` picks that are regular files of this user (a
 * link is not followed; a FIFO, a folder, another user's file are never touched) and, when given,
 * pass `byStat` too. A failure to remove one is told to `failed`; a folder that cannot be read
 * holds nothing to remove.
 */
export function removeOwnFiles(dir: string, byName: (name: string) => boolean, failed: (file: string, e: unknown) => void, byStat?: (name: string, st: fs.Stats) => boolean): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  const uid = typeof process.geteuid === 'function' ? process.geteuid() : undefined;
  for (const name of names) {
    if (!byName(name)) continue;
    const p = path.join(dir, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (byStat && !byStat(name, st))) continue;
    try {
      fs.unlinkSync(p);
    } catch (e) {
      failed(p, e);
    }
  }
}
