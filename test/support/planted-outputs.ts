// Things that appear at a build's output path while it runs and that the build did not create:
// every ending (cancel, failure, kill, crash) must leave them as they were. Shared by the
// clean-up tests, each adding the cases only it can plant.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';

export type Planted = { what: string; plant: (out: string, folder: string) => void; check: (out: string, folder: string) => void };

export const SYMLINK_FIFO_FOLDER: Planted[] = [
  {
    what: "a symbolic link to another file (the target's bytes stay)",
    plant: (out, folder) => {
      fs.writeFileSync(path.join(folder, 'victim'), 'precious');
      fs.symlinkSync(path.join(folder, 'victim'), out);
    },
    check: (out, folder) => {
      expect(fs.lstatSync(out).isSymbolicLink()).toBe(true);
      expect(fs.readFileSync(path.join(folder, 'victim'), 'utf8')).toBe('precious');
    },
  },
  {
    what: 'a FIFO',
    plant: (out) => execFileSync('mkfifo', [out]),
    check: (out) => expect(fs.lstatSync(out).isFIFO()).toBe(true),
  },
  {
    what: 'a folder (no EISDIR out of the clean-up)',
    plant: (out) => {
      fs.mkdirSync(out);
      fs.writeFileSync(path.join(out, 'inside'), 'x');
    },
    check: (out) => expect(fs.readFileSync(path.join(out, 'inside'), 'utf8')).toBe('x'),
  },
];
