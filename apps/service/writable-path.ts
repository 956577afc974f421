// Checks that a file can be written where it is asked for, made before a build is queued so a
// build never fails at its end for want of a folder: the folder exists, is a folder nobody else
// can swap the file in, can be written to, and the path itself (a symbolic link followed) is
// absent or a regular file (output-target.ts). Used for engines and timing caches alike.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ServiceError } from './api.js';
import { resolveWriteTarget } from './output-target.js';

const bad = (msg: string) => new ServiceError('bad_input', msg);

/** Throws bad_input unless a file can be created in `dir` (tried with a probe file, removed again). */
export function probeWritable(dir: string, what: string): void {
  const probe = path.join(dir, `.tbs-probe-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
  try {
    fs.writeFileSync(probe, '', { flag: 'wx' });
    fs.unlinkSync(probe);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(`${what} directory ${dir} is not writable (${code ?? (e as Error).message})`);
  }
}

/**
 * The folder of `file` exists, is a folder the user can trust, and `file` (a symbolic link
 * followed) is absent or a regular file. Returns the file that writing `file` replaces.
 */
export function checkParentDir(file: string, what: string): string {
  return resolveWriteTarget(file, what);
}

/** The user name of `uid` from /etc/passwd, when it has one. */
function userName(uid: number): string | undefined {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f.length > 3 && Number(f[2]) === uid) return f[0];
    }
  } catch {
    // no passwd file: the uid alone
  }
  return undefined;
}

/**
 * In a shared sticky folder (world-writable with the sticky bit, such as /tmp), anything already
 * at `file` that belongs neither to this user nor to the folder's owner was planted by someone
 * else: a symbolic link would make the build write where they chose, a FIFO would hang a reader,
 * a file of theirs would be replaced by one of ours. Refused before any write, as the kernel's
 * protected_symlinks / protected_fifos / protected_regular refuse to follow or open them (root is
 * not exempt there either). `what` names the file in the one-line error.
 */
export function refusePlanted(file: string, what: string): void {
  const dir = path.dirname(file);
  let dst: fs.Stats;
  let lst: fs.Stats;
  try {
    dst = fs.statSync(dir);
    lst = fs.lstatSync(file);
  } catch {
    return; // nothing there (or no folder: checked elsewhere)
  }
  if ((dst.mode & 0o1002) !== 0o1002) return;
  const me = typeof process.geteuid === 'function' ? process.geteuid() : 0;
  if (lst.uid === me || lst.uid === dst.uid) return;
  const kind = lst.isSymbolicLink() ? 'a symbolic link' : lst.isFIFO() ? 'a FIFO' : lst.isFile() ? 'a file' : 'an entry';
  const name = userName(lst.uid);
  throw bad(
    `${what} ${file} is ${kind} owned by another user (${name ? `${name}, ` : ''}uid ${lst.uid}) in the shared sticky folder ${dir}: refused, nothing was written (it could send the build's writes where they chose); remove it or write elsewhere`,
  );
}

/** checkParentDir, after refusing anything planted at `file` or at the files written with it (`related`: its manifest, its lock). */
export function checkWritePaths(file: string, what: string, related: ReadonlyArray<{ path: string; what: string }> = []): string {
  refusePlanted(file, what);
  for (const r of related) refusePlanted(r.path, r.what);
  const target = checkParentDir(file, what);
  // A link of ours may still point into a sticky folder at someone else's file.
  if (target !== file) refusePlanted(target, what);
  return target;
}
