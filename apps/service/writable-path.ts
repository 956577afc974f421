// Checks that a file can be written where it is asked for, made before a build is queued so a
// build never fails at its end for want of a folder: the folder exists, is a folder, can be
// written to, and the path itself is not a folder. Used for engines and timing caches alike.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ServiceError } from './api.js';

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

/** Throws bad_input unless the folder of `file` exists and `file` is not itself a folder. */
export function checkParentDir(file: string, what: string): void {
  const dir = path.dirname(file);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw bad(`${what} directory does not exist: ${dir}`);
  }
  if (!st.isDirectory()) throw bad(`${what} directory is not a directory: ${dir}`);
  try {
    if (fs.statSync(file).isDirectory()) throw bad(`${what} path is a directory: ${file}`);
  } catch (e) {
    if (e instanceof ServiceError) throw e;
  }
}
