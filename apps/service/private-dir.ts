// Folders the product creates for itself (the default engine folder and its parent under the
// temporary folder, the engine store given with --output-dir, crash records, the state folder):
// created 0700, and an existing one is used only if it is the user's own and nobody else can
// write into it. Otherwise another local user who created it first (it sits in a shared temporary
// folder) could replace an engine after the build, and engines are deserialized later: a
// code-execution path around the service's token.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ServiceError } from './api.js';

const myUid = () => (typeof process.geteuid === 'function' ? process.geteuid() : undefined);

/**
 * Why `dir` (existing) is not a private folder of this user, or undefined. Root's folders are
 * root's own: a service run as root accepts only folders root owns.
 */
export function notPrivate(dir: string, what: string): string | undefined {
  const me = myUid();
  if (me === undefined) return undefined; // no owners to compare (not POSIX)
  const lst = fs.lstatSync(dir);
  if (lst.isSymbolicLink() && lst.uid !== me) {
    return `the ${what} folder ${dir} is a symbolic link owned by another user (uid ${lst.uid}); remove it (it is created again, private) or choose another folder`;
  }
  const st = fs.statSync(dir);
  if (!st.isDirectory()) return `the ${what} folder ${dir} is not a folder; remove it or choose another folder`;
  if (st.uid !== me) {
    return `the ${what} folder ${dir} belongs to another user (uid ${st.uid}), who could replace what is written there; remove it (it is created again, private) or choose another folder`;
  }
  if ((st.mode & 0o022) !== 0) {
    const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
    return `the ${what} folder ${dir} is writable by other users (mode ${mode}), who could replace what is written there; run chmod 700 ${dir}`;
  }
  return undefined;
}

/**
 * Creates `dir` (with missing parents) mode 0700, or checks the existing one; throws
 * ServiceError('bad_input') saying what to do when it is not private. `levels` > 1 checks that
 * many folders up too (e.g. `trt-build-studio/engines` under the temporary folder: both are ours).
 */
export function ensurePrivateDir(dir: string, what: string, levels = 1): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let d = dir;
  for (let i = 0; i < levels; i++, d = path.dirname(d)) {
    const why = notPrivate(d, what);
    if (why) throw new ServiceError('bad_input', why);
  }
}
