// The engine store behind `build --reuse`: entries by key, verified on lookup, evicted least
// recently used first past the size limit, never half written. Real files in a temp folder; the
// build path through it (a second build --reuse) is tested in engine-reuse.test.ts.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineManifest, normalizeOptions } from '../../shared/engine-manifest.js';
import { defaultStoreDir, EngineReuseStore, reuseKey, USED } from '../engine-reuse-store.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

let dir: string;
const MiB = 1024 * 1024;

beforeAll(() => {
  dir = tempDir('tbs-reuse-store-');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** An engine of `bytes` random bytes at `file`, and a manifest naming it. */
function engine(file: string, bytes: number): EngineManifest {
  const data = crypto.randomBytes(bytes);
  fs.writeFileSync(file, data);
  return EngineManifest.parse({
    formatVersion: 1,
    tool: { name: 'trt-build-studio', version: '0.1.0' },
    buildId: path.basename(file),
    createdAt: new Date().toISOString(),
    backend: 'simulated',
    tensorrt: { version: '10.16.0', adapterHeaderVersion: null, simulator: 'sim-1' },
    gpu: { name: null, computeCapability: null, uuid: null, device: null },
    driverVersion: null,
    cudaVersion: null,
    options: normalizeOptions({ backend: 'simulated' }),
    compatibility: { hardwareCompatibility: 'none', versionCompatible: false },
    pluginLibraries: [],
    model: { path: '/m.onnx', fileName: 'm.onnx', sha256: 'c'.repeat(64), bytes: 1, externalData: [], inputs: [], outputs: [] },
    timingCache: null,
    build: { wallMs: 1, phases: [] },
    engine: { file: path.basename(file), bytes, sha256: crypto.createHash('sha256').update(data).digest('hex') },
  });
}

const key = (n: number) => crypto.createHash('sha256').update(`k${n}`).digest('hex');

describe('engine reuse store', () => {
  it('lives in $XDG_CACHE_HOME/trt-build-studio/engines', () => {
    expect(defaultStoreDir({ XDG_CACHE_HOME: '/c' })).toBe('/c/trt-build-studio/engines');
    expect(defaultStoreDir({ XDG_CACHE_HOME: 'relative' })).toMatch(/\.cache\/trt-build-studio\/engines$/);
  });

  it('gives back the same bytes it was given, under its key only', async () => {
    const store = new EngineReuseStore(path.join(dir, 's1'));
    const src = path.join(dir, 'a.engine');
    const m = engine(src, 4096);
    expect(await store.put(key(1), src, m)).toBe(true);
    const hit = await store.lookup(key(1));
    expect(hit?.manifest).toEqual(m);
    expect(fs.readFileSync(hit!.enginePath).equals(fs.readFileSync(src))).toBe(true);
    expect(await store.lookup(key(2))).toBeUndefined();
    // No temp folders left.
    expect(fs.readdirSync(store.dir)).toEqual([key(1)]);
  });

  it("a lookup marks the entry used without touching the engine file, which may be the build's own output (a hard link)", async () => {
    const store = new EngineReuseStore(path.join(dir, 's5'));
    const src = path.join(dir, 'linked.engine');
    const m = engine(src, 2048);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(src, old, old);
    const before = fs.statSync(src).mtimeMs;
    await store.put(key(1), src, m);
    const usedAtPut = fs.statSync(path.join(store.dir, key(1), USED)).mtimeMs;
    fs.utimesSync(path.join(store.dir, key(1), USED), old, old);
    expect(await store.lookup(key(1))).toBeDefined();
    expect(fs.statSync(src).mtimeMs).toBe(before);
    expect(fs.statSync(path.join(store.dir, key(1), USED)).mtimeMs).toBeGreaterThan(old.getTime());
    expect(usedAtPut).toBeGreaterThan(old.getTime());
  });

  it('drops an entry whose engine no longer matches its manifest instead of handing it out', async () => {
    const store = new EngineReuseStore(path.join(dir, 's2'));
    const src = path.join(dir, 'b.engine');
    await store.put(key(1), src, engine(src, 1000));
    const stored = path.join(store.dir, key(1), 'engine');
    // Replace (not modify) the stored bytes: the source engine, a hard link, stays as it is.
    fs.rmSync(stored);
    fs.writeFileSync(stored, 'not the engine');
    expect(await store.lookup(key(1))).toBeUndefined();
    expect(fs.existsSync(path.join(store.dir, key(1)))).toBe(false);
    fs.mkdirSync(path.join(store.dir, key(2)));
    fs.writeFileSync(path.join(store.dir, key(2), 'manifest.json'), '{');
    expect(await store.lookup(key(2))).toBeUndefined();
    expect(fs.existsSync(path.join(store.dir, key(2)))).toBe(false);
  });

  it('evicts the least recently used entries past its size limit; a lookup counts as use', async () => {
    const store = new EngineReuseStore(path.join(dir, 's3'), 3); // 3 MiB
    for (const n of [1, 2, 3]) {
      const src = path.join(dir, `e${n}.engine`);
      await store.put(key(n), src, engine(src, MiB));
      // Distinct use times even on a coarse clock.
      const t = new Date(Date.now() - (10 - n) * 1000);
      fs.utimesSync(path.join(store.dir, key(n), USED), t, t);
    }
    expect(store.entries().map((e) => e.key)).toEqual([key(1), key(2), key(3)]);
    // Using 1 makes 2 the least recently used.
    expect(await store.lookup(key(1))).toBeDefined();
    const src4 = path.join(dir, 'e4.engine');
    await store.put(key(4), src4, engine(src4, MiB));
    const later = new Date(Date.now() + 1000);
    fs.utimesSync(path.join(store.dir, key(4), USED), later, later);
    expect(new Set(store.entries().map((e) => e.key))).toEqual(new Set([key(1), key(3), key(4)]));
    // A smaller limit evicts more, the least recently used first (3, then 1: used before 4 was put); the entry just put stays.
    const src5 = path.join(dir, 'e5.engine');
    await store.put(key(5), src5, engine(src5, MiB), 2 * MiB);
    expect(
      store
        .entries()
        .map((e) => e.key)
        .sort(),
    ).toEqual([key(4), key(5)].sort());
  });

  it('does not keep an engine larger than the whole limit', async () => {
    const store = new EngineReuseStore(path.join(dir, 's4'), 1);
    const src = path.join(dir, 'big.engine');
    expect(await store.put(key(1), src, engine(src, 2 * MiB))).toBe(false);
    expect(store.entries()).toEqual([]);
  });

  it('the key changes with every option that shapes the engine, the model and the versions, not with logging', () => {
    const base = {
      backend: 'simulated' as const,
      tensorrt: { version: '10.16.0', adapterHeaderVersion: null, simulator: 'sim-1' },
      gpu: { name: 'A100', computeCapability: '8.0' },
      options: normalizeOptions({ backend: 'simulated' }),
      modelSha256: 'a'.repeat(64),
      pluginLibraries: [],
    };
    const k = reuseKey(base);
    expect(reuseKey({ ...base, options: normalizeOptions({ backend: 'simulated', optLevel: 4 }) })).not.toBe(k);
    expect(reuseKey({ ...base, options: normalizeOptions({ backend: 'simulated', shapes: { x: { min: [1], opt: [2], max: [3] } } }) })).not.toBe(k);
    expect(reuseKey({ ...base, modelSha256: 'b'.repeat(64) })).not.toBe(k);
    expect(reuseKey({ ...base, tensorrt: { ...base.tensorrt, version: '10.16.1' } })).not.toBe(k);
    expect(reuseKey({ ...base, pluginLibraries: [{ sha256: 'c'.repeat(64) }] })).not.toBe(k);
    expect(reuseKey({ ...base, gpu: { name: 'A30', computeCapability: '8.0' } })).not.toBe(k);
    expect(reuseKey({ ...base, options: normalizeOptions({ backend: 'auto', verboseLog: true, simDuration: 3 }) })).toBe(k);
    // Hardware-compatible engines: the GPU model stops mattering (and with ampere_plus, the capability too).
    const same = normalizeOptions({ backend: 'simulated', hardwareCompatibility: 'same_compute_capability' });
    expect(reuseKey({ ...base, options: same, gpu: { name: 'A30', computeCapability: '8.0' } })).toBe(reuseKey({ ...base, options: same }));
    const amp = normalizeOptions({ backend: 'simulated', hardwareCompatibility: 'ampere_plus' });
    expect(reuseKey({ ...base, options: amp, gpu: { name: 'H100', computeCapability: '9.0' } })).toBe(reuseKey({ ...base, options: amp }));
  });
});
