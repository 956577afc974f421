// Pinned builds (pinnedCache): built from a timing cache that must hold every tactic; the first miss
// fails the build (the simulator's equivalent of TensorRT's kERROR_ON_TIMING_CACHE_MISS), the
// cache is never written, and the manifest records the pin. Real workers, simulated backend.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineManifest } from '../../shared/engine-manifest.js';
import type { BuildOptionsInput } from '../../shared/protocol.js';
import { createBuildService, type BuildService } from '../build-service.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
let bigger: string;
let cache: string;
let svc: BuildService;

const sim = (extra: Partial<BuildOptionsInput> = {}): BuildOptionsInput => ({ backend: 'simulated', simDuration: 0.3, simSeed: 9, ...extra });
const sha = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

async function build(out: string, options: BuildOptionsInput, modelPath = model) {
  const rec = await svc.startBuild({ modelPath, outputPath: out, options });
  return svc.waitForResult(rec.id);
}

beforeAll(async () => {
  requireBuilt();
  dir = tempDir('tbs-pinned-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
  bigger = writeModel(path.join(dir, 'bigger.onnx'), { layers: 12 });
  cache = path.join(dir, 'model.cache');
  svc = createBuildService({ outputDir: path.join(dir, 'engines'), profiles: null });
  // Fill the cache with every tactic of the model.
  expect((await build(path.join(dir, 'fill.engine'), sim({ timingCache: cache }))).status).toBe('succeeded');
});
afterAll(async () => {
  await svc.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('pinned builds', () => {
  it('build from a full cache: every tactic a hit, the cache untouched, the pin in the manifest', async () => {
    const before = sha(cache);
    const fin = await build(path.join(dir, 'pinned.engine'), sim({ pinnedCache: cache }));
    expect(fin.status, fin.error).toBe('succeeded');
    expect(fin.cache).toMatchObject({ path: cache, misses: 0 });
    expect(fin.cache!.hits).toBeGreaterThan(0);
    expect(sha(cache)).toBe(before);
    const m = EngineManifest.parse(JSON.parse(fs.readFileSync(fin.manifestPath!, 'utf8')));
    expect(m.pinnedCache).toEqual({ path: cache, sha256: before });
    expect(m.timingCache).toMatchObject({ path: cache, sha256Before: before, sha256After: before });
  });

  it('fails at the first cache miss, naming it; no engine, the cache untouched', async () => {
    const before = sha(cache);
    const out = path.join(dir, 'miss.engine');
    const fin = await build(out, sim({ pinnedCache: cache }), bigger);
    expect(fin.status).toBe('failed');
    expect(fin.error).toMatch(/timing cache miss in a pinned build: .* is not in .*model\.cache/);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.existsSync(`${out}.manifest.json`)).toBe(false);
    expect(sha(cache)).toBe(before);
  });

  it('refuses a pin with timingCache too, or on a cache that is not there', async () => {
    await expect(build(path.join(dir, 'x.engine'), sim({ pinnedCache: cache, timingCache: cache }))).rejects.toThrow(/either timingCache .* or pinnedCache/);
    await expect(build(path.join(dir, 'x.engine'), sim({ pinnedCache: path.join(dir, 'none.cache') }))).rejects.toThrow(/pinnedCache: no timing cache at/);
  });
});
