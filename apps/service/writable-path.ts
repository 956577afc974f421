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
