// Manifests that real builds write (the build service, real worker processes, the addon's
// simulated backend), and `check` on them: fits after a build here; needs a rebuild naming both
// versions when the simulator emulates another TensorRT; naming the model when one byte changed;
// unknown when the manifest is missing, broken or describes other bytes. No TensorRT or GPU here:
// the TensorRT-only reasons (compute capability, GPU model, driver) are covered by the pure check's
// tests (apps/shared/test/engine-manifest.test.ts).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EngineManifest, manifestPathFor } from '../../shared/engine-manifest.js';
import { createBuildService, type BuildService } from '../build-service.js';
import { checkEngine } from '../engine-check.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const services: BuildService[] = [];

function service(): BuildService {
  const s = createBuildService({ outputDir: path.join(dir, 'engines'), profiles: null });
  services.push(s);
  return s;
}

const sim = (extra: Record<string, unknown> = {}) => ({ backend: 'simulated' as const, simDuration: 0.2, simSeed: 7, ...extra });
const sha = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

async function build(out: string, options = sim(), modelPath = model) {
  const svc = service();
  const rec = await svc.startBuild({ modelPath, outputPath: out, options });
  const fin = await svc.waitForResult(rec.id);
  return { svc, fin, id: rec.id };
}

function check(enginePath: string, extra: { modelPath?: string; options?: unknown } = {}) {
  const svc = service();
  return checkEngine({ enginePath, ...extra }, () => svc.listBackends());
}

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-manifest-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
});
afterEach(async () => {
  delete process.env.TBS_SIM_TRT_VERSION;
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the manifest a build writes', () => {
  it('records a version-compatible build, which a later 10.x then fits and an older one does not', async () => {
    const out = path.join(dir, 'vc.engine');
    const { fin } = await build(out, sim({ versionCompatible: true }));
    expect(fin.status).toBe('succeeded');
    const m = EngineManifest.parse(JSON.parse(fs.readFileSync(fin.manifestPath!, 'utf8')));
    expect(m.compatibility).toEqual({ hardwareCompatibility: 'none', versionCompatible: true });
    expect(m.options).toMatchObject({ versionCompatible: true, excludeLeanRuntime: false });
    process.env.TBS_SIM_TRT_VERSION = '10.17.0';
    const later = await check(out);
    expect(later.verdict).toBe('fits');
    expect(later.notes.join('\n')).toMatch(/version-compatible/);
    process.env.TBS_SIM_TRT_VERSION = '10.9.0';
    const older = await check(out);
    expect(older.reasons.map((r) => [r.kind, r.was, r.now])).toEqual([['tensorrt-version', '10.16.0', '10.9.0']]);
  });

  it('is beside the engine before build.finished, valid, and describes exactly those bytes', async () => {
    const out = path.join(dir, 'a.engine');
    const cache = path.join(dir, 'a.cache');
    const { fin, id } = await build(out, sim({ timingCache: cache, optLevel: 4, shapes: undefined }));
    expect(fin.status).toBe('succeeded');
    expect(fin.manifestPath).toBe(manifestPathFor(out));
    const m = EngineManifest.parse(JSON.parse(fs.readFileSync(fin.manifestPath!, 'utf8')));
    expect(m.engine).toEqual({ file: 'a.engine', bytes: fs.statSync(out).size, sha256: sha(out) });
    expect(m.model).toMatchObject({ path: model, sha256: sha(model), bytes: fs.statSync(model).size, externalData: [] });
    expect(m.model.inputs.length).toBeGreaterThan(0);
    expect(m).toMatchObject({ buildId: id, backend: 'simulated', tensorrt: { version: '10.16.0', simulator: 'sim-1' } });
    // Every option, defaults included, in canonical form.
    expect(m.options).toMatchObject({ optLevel: 4, tf32: true, precision: [], hardwareCompatibility: 'none', simSeed: 7, workspaceMiB: null });
    expect(m.compatibility).toEqual({ hardwareCompatibility: 'none', versionCompatible: false });
    expect(m.pluginLibraries).toEqual([]);
    // No cache file before; the build created one.
    expect(m.timingCache).toMatchObject({ path: cache, sha256Before: null, sha256After: sha(cache) });
    expect(m.timingCache!.misses).toBeGreaterThan(0);
    expect(m.build.wallMs).toBe(fin.durationMs);
    expect(m.build.phases.length).toBeGreaterThan(0);
    for (const p of m.build.phases) expect(p.ms).toBeGreaterThanOrEqual(0);
    expect(m.build.rows).toBeUndefined();
    // Nothing else left in the folder (no temp files).
    // The simulated build's layer information beside it, named with its sha256; nothing else (no temp files).
    expect(m.layerInfo).toEqual({ file: 'a.engine.layers.json', sha256: sha(`${out}.layers.json`), source: 'simulated' });
    expect(
      fs
        .readdirSync(dir)
        .filter((f) => f.startsWith('a.engine'))
        .sort(),
    ).toEqual(['a.engine', 'a.engine.layers.json', 'a.engine.manifest.json']);
  });

  it('holds every phase row when the build asks for it (the manifestRows option), and the same top-level phases', async () => {
    const out = path.join(dir, 'rows.engine');
    const { fin } = await build(out, sim({ manifestRows: true }));
    const m = EngineManifest.parse(JSON.parse(fs.readFileSync(fin.manifestPath!, 'utf8')));
    const rows = m.build.rows!;
    expect(rows.length).toBeGreaterThan(m.build.phases.length);
    // The top-level rows are the phases, in the same order with the same times.
    expect(rows.filter((r) => r.path.length === 1).map(({ name, ms, count }) => ({ name, ms, count }))).toEqual(m.build.phases);
    // Depth first: every nested row follows its parent.
    rows.forEach((r, i) => {
      if (r.path.length > 1)
        expect(
          rows.slice(0, i).some((p) => JSON.stringify(p.path) === JSON.stringify(r.path.slice(0, -1))),
          r.path.join(' › '),
        ).toBe(true);
      expect(r.name).toBe(r.path.at(-1));
    });
  });

  it('records the timing cache as it was before the build, and its hits', async () => {
    const out = path.join(dir, 'warm.engine');
    const cache = path.join(dir, 'warm.cache');
    await build(out, sim({ timingCache: cache }));
    const before = sha(cache);
    const { fin } = await build(out, sim({ timingCache: cache }));
    const m = EngineManifest.parse(JSON.parse(fs.readFileSync(fin.manifestPath!, 'utf8')));
    expect(m.timingCache).toMatchObject({ sha256Before: before, sha256After: sha(cache) });
    expect(m.timingCache!.hits).toBeGreaterThan(0);
  });

  it('a failed build leaves neither engine nor manifest', async () => {
    const out = path.join(dir, 'failed.engine');
    const { fin } = await build(out, sim({ simFault: 'fail' }));
    expect(fin.status).toBe('failed');
    expect(fin.manifestPath).toBeUndefined();
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.existsSync(manifestPathFor(out))).toBe(false);
  });

  it('deleting an engine from the output folder deletes its manifest', async () => {
    const svc = service();
    const rec = await svc.startBuild({ modelPath: model, options: sim() });
    const fin = await svc.waitForResult(rec.id);
    const name = path.basename(fin.outputPath!);
    expect(fs.existsSync(manifestPathFor(fin.outputPath!))).toBe(true);
    // The listing shows engines only, not their manifests; another program's engine in the same
    // folder (no manifest of this product beside it) is not listed.
    fs.writeFileSync(path.join(path.dirname(fin.outputPath!), 'someone-else.engine'), 'not ours');
    expect(svc.listEngines().map((e) => e.name)).toEqual([name]);
    expect(svc.deleteEngines([name]).deleted).toEqual([name]);
    expect(fs.existsSync(manifestPathFor(fin.outputPath!))).toBe(false);
    expect(fs.existsSync(`${fin.outputPath!}.layers.json`)).toBe(false);
  });
});

describe('check on what a build wrote', () => {
  it('fits right after the build on the same machine, options given as built', async () => {
    const out = path.join(dir, 'fits.engine');
    await build(out, sim({ optLevel: 2 }));
    const r = await check(out, { modelPath: model, options: sim({ optLevel: 2 }) });
    expect(r).toMatchObject({ verdict: 'fits', reasons: [], missing: [] });
  });

  it('needs a rebuild naming both versions when the simulator emulates another TensorRT', async () => {
    const out = path.join(dir, 'version.engine');
    await build(out);
    process.env.TBS_SIM_TRT_VERSION = '11.1.0';
    const r = await check(out);
    expect(r.verdict).toBe('rebuild');
    expect(r.reasons).toEqual([{ kind: 'tensorrt-version', what: 'TensorRT version', was: '10.16.0', now: '11.1.0' }]);
  });

  it('needs a rebuild naming the model when one byte of it changed', async () => {
    const m2 = path.join(dir, 'changing.onnx');
    fs.copyFileSync(model, m2);
    const out = path.join(dir, 'model-changed.engine');
    await build(out, sim(), m2);
    const before = sha(m2);
    const bytes = fs.readFileSync(m2);
    // One byte of the graph's name (the file stays a valid model).
    const at = bytes.indexOf(Buffer.from('graph'));
    expect(at).toBeGreaterThan(0);
    bytes[at] = 'G'.charCodeAt(0);
    fs.writeFileSync(m2, bytes);
    for (const r of [await check(out), await check(out, { modelPath: m2 })]) {
      expect(r.verdict).toBe('rebuild');
      expect(r.reasons).toEqual([{ kind: 'model', what: `model ${m2} (sha256 of the graph and its external data)`, was: before, now: sha(m2) }]);
    }
  });

  it('needs a rebuild naming an option or a shape range that changed', async () => {
    const dyn = writeModel(path.join(dir, 'dynamic.onnx'), { layers: 4, dynamic: true });
    const out = path.join(dir, 'dyn.engine');
    const shapes = ['input:1x3x32x32/2x3x32x32/4x3x32x32'];
    const { fin } = await build(out, sim({ shapes }), dyn);
    expect(fin.status, fin.error).toBe('succeeded');
    const r = await check(out, { options: sim({ shapes: ['input:1x3x32x32/2x3x32x32/8x3x32x32'], optLevel: 5 }) });
    expect(r.reasons).toEqual([
      { kind: 'option', what: 'option optLevel', was: '3', now: '5' },
      { kind: 'shape-range', what: 'shape range of input input', was: '1x3x32x32/2x3x32x32/4x3x32x32', now: '1x3x32x32/2x3x32x32/8x3x32x32' },
    ]);
  });

  it('is unknown without an engine, without a manifest, with a broken one, or one that describes other bytes', async () => {
    const out = path.join(dir, 'unknown.engine');
    expect((await check(out)).missing.map((m) => m.kind)).toEqual(['no-engine']);
    await build(out);
    const mp = manifestPathFor(out);
    const good = fs.readFileSync(mp, 'utf8');
    fs.writeFileSync(mp, '{"formatVersion": 1');
    expect(await check(out)).toMatchObject({ verdict: 'unknown', missing: [{ kind: 'bad-manifest' }] });
    fs.writeFileSync(mp, JSON.stringify({ ...JSON.parse(good), backend: 'quantum' }));
    const bad = await check(out);
    expect(bad.missing[0].kind).toBe('bad-manifest');
    expect(bad.missing[0].message).toMatch(/backend/);
    fs.rmSync(mp);
    expect(await check(out)).toMatchObject({ verdict: 'unknown', missing: [{ kind: 'no-manifest' }] });
    fs.writeFileSync(mp, good);
    expect((await check(out)).verdict).toBe('fits');
    // Another engine at the path, its manifest not (yet) written: the old manifest speaks for other bytes.
    fs.appendFileSync(out, 'x');
    const r = await check(out);
    expect(r).toMatchObject({ verdict: 'unknown', missing: [{ kind: 'manifest-mismatch' }] });
  });

  it('refuses bad input with a clear error', async () => {
    await expect(check('')).rejects.toThrow(/engine is required/);
    await expect(check(path.join(dir, 'x.engine'), { options: { optLevel: 9 } })).rejects.toThrow(/invalid options: optLevel/);
  });
});
