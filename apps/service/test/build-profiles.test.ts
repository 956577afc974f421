import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BuildOptions } from '../../shared/protocol.js';
import { BuildProfileStore, MAX_KINDS, PROFILES_PER_KIND, buildKind, stateDir, timingCacheState } from '../build-profiles.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-profiles-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const model = { fileBytes: 1000, graphName: 'g', nodeCount: 3, opHistogram: { Conv: 2, Relu: 1 }, inputs: [], outputs: [] };
const kindOf = (options: Record<string, unknown>, backendVersion = 'sim-1') => buildKind({ backend: 'simulated', backendVersion, model, options: BuildOptions.parse(options) });

describe('build profiles', () => {
  it('keys builds by what shapes the work, not by paths or key order', () => {
    const a = kindOf({ optLevel: 3, workspaceMiB: 512, timingCache: '/a/cache' });
    expect(kindOf({ workspaceMiB: 512, optLevel: 3, timingCache: '/b/other' })).toBe(a);
    expect(kindOf({ optLevel: 4, workspaceMiB: 512, timingCache: '/a/cache' })).not.toBe(a);
    expect(kindOf({ optLevel: 3, workspaceMiB: 512 })).not.toBe(a);
    expect(kindOf({ optLevel: 3, workspaceMiB: 512, timingCache: '/a/cache' }, 'sim-2')).not.toBe(a);
  });

  it('tells a timing cache that starts warm from one that starts cold (a warm cache shortens tactic timing)', () => {
    const dir = tmp();
    const cache = path.join(dir, 'c.cache');
    expect(timingCacheState(undefined)).toBe('none');
    expect(timingCacheState(cache)).toBe('cold');
    fs.writeFileSync(cache, '');
    expect(timingCacheState(cache)).toBe('cold');
    const cold = kindOf({ optLevel: 3, timingCache: cache });
    fs.writeFileSync(cache, 'TBSSIMTC entries');
    expect(timingCacheState(cache)).toBe('warm');
    const warm = kindOf({ optLevel: 3, timingCache: cache });
    expect(warm).not.toBe(cold);
    expect(kindOf({ optLevel: 3, timingCache: path.join(dir, 'elsewhere.cache') })).toBe(cold);
    expect(kindOf({ optLevel: 3 })).not.toBe(cold);
  });

  it('keeps the last few profiles per kind across store instances, bounded in kinds', () => {
    const dir = tmp();
    const s = new BuildProfileStore(dir);
    for (let i = 0; i < PROFILES_PER_KIND + 2; i++) s.add('k', { durationMs: i + 1, marks: { a: i } });
    const again = new BuildProfileStore(dir).profiles('k');
    expect(again.map((p) => p.durationMs)).toEqual([3, 4, 5]);
    for (let i = 0; i < MAX_KINDS + 5; i++) s.add(`kind-${i}`, { durationMs: 1, marks: {} }, 1000 + i);
    const stored = JSON.parse(fs.readFileSync(s.file, 'utf8'));
    expect(Object.keys(stored.kinds)).toHaveLength(MAX_KINDS);
    expect(stored.kinds['kind-0']).toBeUndefined();
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('treats an unreadable file as no history, and replaces it on the next save', () => {
    const dir = tmp();
    const s = new BuildProfileStore(dir);
    fs.writeFileSync(s.file, '{ not json');
    expect(s.profiles('k')).toEqual([]);
    s.add('k', { durationMs: 7, marks: {} });
    expect(s.profiles('k')).toEqual([{ durationMs: 7, marks: {} }]);
  });

  it('lives in the user state directory (XDG_STATE_HOME on Linux), overridable for tests', () => {
    expect(stateDir({ TBS_STATE_DIR: '/x/y' })).toBe('/x/y');
    if (process.platform === 'linux') {
      expect(stateDir({ XDG_STATE_HOME: '/s' })).toBe('/s/trt-build-studio');
      expect(stateDir({})).toBe(path.join(os.homedir(), '.local', 'state', 'trt-build-studio'));
    }
  });
});
