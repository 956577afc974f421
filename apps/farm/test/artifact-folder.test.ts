// The farm's artifact folder under the same rules as any folder engines are written into: the
// farm's own folders in it are created 0700, a root or folder others control is refused, and a
// path that is not a regular file is never offered as an engine.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../service/api.js';
import { SharedFolderArtifacts } from '../artifacts.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('tbs-artifact-folder-');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function refusal(f: () => void): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('SharedFolderArtifacts.ensure', () => {
  it('creates engines/ and timing-caches/ 0700', () => {
    const a = new SharedFolderArtifacts(path.join(dir, 'fresh'));
    a.ensure();
    for (const d of ['engines', 'timing-caches']) expect(fs.statSync(path.join(a.root, d)).mode & 0o777).toBe(0o700);
  });

  it('refuses a root writable by every user without the sticky bit, and a subfolder others can write into', () => {
    const open = path.join(dir, 'open-root');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    expect(refusal(() => new SharedFolderArtifacts(open).ensure())).toMatch(/artifact folder: folder .*open-root is writable by every user \(mode 0777\) without the sticky bit/);
    expect(fs.readdirSync(open)).toEqual([]);

    const root = path.join(dir, 'root-ok');
    fs.mkdirSync(path.join(root, 'engines'), { recursive: true });
    fs.chmodSync(path.join(root, 'engines'), 0o777);
    expect(refusal(() => new SharedFolderArtifacts(root).ensure())).toMatch(/the artifact folder .*engines is writable by other users \(mode 0777\).*chmod 700/);
  });

  it('offers only regular files as engines', () => {
    const a = new SharedFolderArtifacts(path.join(dir, 'fresh'));
    const fifo = path.join(a.root, 'engines', 'x.engine');
    execFileSync('mkfifo', [fifo]);
    expect(a.locateEngine(fifo)).toBeUndefined();
    const real = path.join(a.root, 'engines', 'y.engine');
    fs.writeFileSync(real, 'engine');
    expect(a.locateEngine(real)).toBe(real);
    expect(a.locateEngine(path.join(a.root, 'engines', 'missing.engine'))).toBeUndefined();
  });
});
