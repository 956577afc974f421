// Folders the product creates for itself: created 0700; an existing one that belongs to another
// user or that others can write into is refused with a message that says what to do.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../api.js';
import { createBuildService } from '../build-service.js';
import { ensurePrivateDir } from '../private-dir.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('tbs-private-dir-');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const mode = (p: string) => fs.statSync(p).mode & 0o777;
function refusal(f: () => void): ServiceError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as ServiceError).code).toBe('bad_input');
    return e as ServiceError;
  }
  throw new Error('expected a refusal');
}

describe('ensurePrivateDir', () => {
  it('creates the folder and its missing parents 0700, whatever the umask', () => {
    const old = process.umask(0o000);
    try {
      const d = path.join(dir, 'made', 'engines');
      ensurePrivateDir(d, 'engine', 2);
      expect(mode(d)).toBe(0o700);
      expect(mode(path.dirname(d))).toBe(0o700);
    } finally {
      process.umask(old);
    }
  });

  it('refuses an existing folder others can write into, naming the fix, and changes nothing', () => {
    const d = path.join(dir, 'open');
    fs.mkdirSync(d);
    fs.chmodSync(d, 0o777);
    expect(refusal(() => ensurePrivateDir(d, 'engine')).message).toBe(
      `the engine folder ${d} is writable by other users (mode 0777), who could replace what is written there; run chmod 700 ${d}`,
    );
    expect(mode(d)).toBe(0o777);
    // The parent counts when asked for: trt-build-studio/engines under the temporary folder.
    fs.chmodSync(d, 0o1777); // even sticky: the product's own folder is nobody else's to write into
    expect(refusal(() => ensurePrivateDir(path.join(d, 'engines'), 'engine', 2)).message).toMatch(/open is writable by other users \(mode 1777\)/);
  });

  it.runIf(process.geteuid?.() === 0)('refuses a folder, or a symbolic link, that belongs to another user (needs root to chown)', () => {
    const theirs = path.join(dir, 'theirs');
    fs.mkdirSync(theirs, { mode: 0o700 });
    fs.chownSync(theirs, 65534, 65534);
    expect(refusal(() => ensurePrivateDir(theirs, 'engine')).message).toMatch(
      /the engine folder .*theirs belongs to another user \(uid 65534\), who could replace what is written there; remove it \(it is created again, private\) or choose another folder/,
    );
    const mine = path.join(dir, 'mine');
    fs.mkdirSync(mine, { mode: 0o700 });
    const link = path.join(dir, 'planted-link');
    fs.symlinkSync(mine, link);
    fs.lchownSync(link, 65534, 65534);
    expect(refusal(() => ensurePrivateDir(link, 'state')).message).toMatch(/is a symbolic link owned by another user \(uid 65534\)/);
  });
});

describe('the build service', () => {
  it('refuses to build into an engine folder others can write into, before any worker runs', async () => {
    const engines = path.join(dir, 'shared-engines');
    fs.mkdirSync(engines);
    fs.chmodSync(engines, 0o777);
    const model = writeModel(path.join(dir, 'model.onnx'), { layers: 2 });
    const svc = createBuildService({ outputDir: engines, profiles: null });
    try {
      await expect(svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.1 } })).rejects.toThrow(
        /the engine folder .*shared-engines is writable by other users \(mode 0777\).*chmod 700/,
      );
      expect(fs.readdirSync(engines)).toEqual([]);
      expect(svc.listBuilds()).toEqual([]);
    } finally {
      await svc.shutdown();
    }
  });
});
