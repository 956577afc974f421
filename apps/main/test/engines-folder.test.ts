import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enginesDir } from '../app-paths.js';
import { moveLegacyEngines } from '../engines-folder.js';

const dirs: string[] = [];
const temp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-engines-folder-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('where the desktop app keeps engines', () => {
  it('is the XDG data folder, never the configuration folder', () => {
    expect(enginesDir({}, '/home/u')).toBe('/home/u/.local/share/trt-build-studio/engines');
    expect(enginesDir({ XDG_DATA_HOME: '/data/u' }, '/home/u')).toBe('/data/u/trt-build-studio/engines');
    // A relative XDG_DATA_HOME is invalid by the spec and ignored.
    expect(enginesDir({ XDG_DATA_HOME: 'rel' }, '/home/u')).toBe('/home/u/.local/share/trt-build-studio/engines');
    expect(enginesDir({ TBS_ENGINES_DIR: '/big/disk' }, '/home/u')).toBe('/big/disk');
  });

  it('moves engines from the old configuration folder once, keeping a name that exists at the destination', async () => {
    const root = temp();
    const from = path.join(root, 'config', 'engines');
    const to = path.join(root, 'data', 'trt-build-studio', 'engines');
    fs.mkdirSync(from, { recursive: true });
    fs.writeFileSync(path.join(from, 'a.engine'), 'A');
    fs.writeFileSync(path.join(from, 'b.engine'), 'B-old');
    fs.mkdirSync(to, { recursive: true });
    fs.writeFileSync(path.join(to, 'b.engine'), 'B-new');
    const r = await moveLegacyEngines(from, to);
    expect(r).toEqual({ moved: ['a.engine'], kept: ['b.engine'] });
    expect(fs.readFileSync(path.join(to, 'a.engine'), 'utf8')).toBe('A');
    expect(fs.readFileSync(path.join(to, 'b.engine'), 'utf8')).toBe('B-new');
    expect(fs.readFileSync(path.join(from, 'b.engine'), 'utf8')).toBe('B-old');
    // Once moved, a second start has nothing to do.
    fs.rmSync(path.join(from, 'b.engine'));
    expect(await moveLegacyEngines(from, to)).toEqual({ moved: [], kept: [] });
    expect(fs.existsSync(from)).toBe(false);
  });

  it('creates the new folder private to the user, and does nothing when there was no old folder', async () => {
    const root = temp();
    const to = path.join(root, 'data', 'engines');
    expect(await moveLegacyEngines(path.join(root, 'none'), to)).toEqual({ moved: [], kept: [] });
    expect(fs.existsSync(to)).toBe(false);
    const from = path.join(root, 'old');
    fs.mkdirSync(from);
    fs.writeFileSync(path.join(from, 'x.engine'), 'X');
    await moveLegacyEngines(from, to);
    expect(fs.statSync(to).mode & 0o777).toBe(0o700);
  });
});
