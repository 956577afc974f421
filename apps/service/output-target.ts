// What a file the product writes (an engine, a timing cache) may be, checked before any work:
// absent or a regular file, never a device node, a FIFO, a socket or a directory, in a folder the
// user can trust to keep it. A symbolic link is followed: the file written is its target (the
// native writer puts its temp file beside the target and renames over it, so the link stays a
// link). The native atomic writer (native/src/core/atomic_file.cc) makes the same checks again at
// the moment of creating and renaming, on an open directory descriptor; these up-front ones give
// the clear message before a build is queued.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ServiceError } from './api.js';

const bad = (msg: string) => new ServiceError('bad_input', msg);

/** What a file that is not a regular file is, in words. */
export function kindOf(st: fs.Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

const myUid = () => (typeof process.geteuid === 'function' ? process.geteuid() : 0);

/**
 * Why `dir` cannot be trusted to keep a file written into it, or undefined: it must be owned by
 * the user (or by root, who can replace anything anyway) and not writable by others unless it
 * has the sticky bit (in a sticky folder such as /tmp, others cannot rename or remove what they
 * do not own). Otherwise another local user could replace the engine after the build, and
 * engines are deserialized later.
 */
export function untrustedFolder(dir: string, st: fs.Stats): string | undefined {
  if (st.uid !== myUid() && st.uid !== 0) {
    return `folder ${dir} belongs to another user (uid ${st.uid}), who could replace the file after it is written; write into a folder of your own`;
  }
  if ((st.mode & 0o002) !== 0 && (st.mode & 0o1000) === 0) {
    const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
    return `folder ${dir} is writable by every user (mode ${mode}) without the sticky bit, so anyone could replace the file after it is written; run chmod o-w ${dir} (or chmod +t), or write into a folder of your own`;
  }
  return undefined;
}

/**
 * The file that writing `file` replaces: `file` itself, or the target of the symbolic link
 * `file` is. Throws ServiceError('bad_input') naming the problem when that is not a regular file
 * (or a link to nothing), or its folder is missing, not a folder, or not one to trust.
 * `what` names the file in messages ("output", "timing cache").
 */
export function resolveWriteTarget(file: string, what: string): string {
  let target = file;
  let link = '';
  let lst: fs.Stats | undefined;
  try {
    lst = fs.lstatSync(file);
  } catch {
    // Absent (or its folder is): the folder checks below say which.
  }
  if (lst?.isSymbolicLink()) {
    try {
      target = fs.realpathSync(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw bad(
        code === 'ENOENT'
          ? `${what} path ${file} is a symbolic link to a missing file (${fs.readlinkSync(file)}); it is left as it is. Give the path of the file itself`
          : `${what} path ${file} is a symbolic link that cannot be followed (${code ?? (e as Error).message})`,
      );
    }
    link = ` (the target of the symbolic link ${file})`;
    try {
      lst = fs.lstatSync(target);
    } catch {
      lst = undefined;
    }
  }
  if (lst && !lst.isFile()) {
    if (lst.isDirectory()) throw bad(`${what} path is a directory: ${target}${link}`);
    throw bad(`${what} path ${target}${link} is ${kindOf(lst)}, not a regular file; it is left untouched. Give the path of a regular file or a new name`);
  }
  const dir = path.dirname(target);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw bad(`${what} directory does not exist: ${dir}`);
  }
  if (!st.isDirectory()) throw bad(`${what} directory is not a directory: ${dir}`);
  const why = untrustedFolder(dir, st);
  if (why) throw bad(`cannot write the ${what} ${target}${link}: ${why}`);
  return target;
}
