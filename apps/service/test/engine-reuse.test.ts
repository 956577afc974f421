// build --reuse through the real build service (real workers, simulated backend): a second build
// with the same key returns the identical engine at once, reports reused, in under a tenth of the
// first build's time; any change of an option, a shape range, the model or the TensorRT version
// builds again; the store's size limit evicts; a damaged store entry is never handed out.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EngineManifest } from '../../shared/engine-manifest.js';
import type { BuildEvent, BuildOptionsInput } from '../../shared/protocol.js';
import { createBuildService, type BuildService } from '../build-service.js';
import { checkEngine } from '../engine-check.js';
import { EngineReuseStore } from '../engine-reuse-store.js';
import { claimOutput } from '../output-claim.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
let dynamic: string;
let storeDir: string;
const services: BuildService[] = [];

function service(): BuildService {
  const s = createBuildService({ outputDir: path.join(dir, 'engines'), profiles: null, reuseStore: new EngineReuseStore(storeDir) });
  services.push(s);
  return s;
}

const sim = (extra: Partial<BuildOptionsInput> = {}): BuildOptionsInput => ({ backend: 'simulated', simDuration: 0.3, simSeed: 2, reuse: true, ...extra });
const sha = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

async function build(svc: BuildService, out: string, options: BuildOptionsInput, modelPath = model) {
  const t0 = performance.now();
  const rec = await svc.startBuild({ modelPath, outputPath: out, options });
  const events: BuildEvent[] = [];
  svc.subscribe(rec.id, (evs) => events.push(...evs), { afterSeq: -1 });
  const fin = await svc.waitForResult(rec.id);
  return { fin, id: rec.id, wallMs: performance.now() - t0, events };
}

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-reuse-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
  dynamic = writeModel(path.join(dir, 'dynamic.onnx'), { layers: 4, dynamic: true });
});
afterEach(async () => {
  delete process.env.TBS_SIM_TRT_VERSION;
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('build --reuse', () => {
  it('a second build returns the identical engine, reports reused, and takes under a tenth of the first', async () => {
    storeDir = path.join(dir, 'store-1');
    const svc = service();
    const first = await build(svc, path.join(dir, 'first.engine'), sim({ simDuration: 3 }));
    expect(first.fin.status).toBe('succeeded');
    expect(first.fin.reused).toBeUndefined();
    const second = await build(svc, path.join(dir, 'second.engine'), sim({ simDuration: 3 }));
    expect(second.fin).toMatchObject({ status: 'succeeded', reused: { fromBuildId: first.id }, outputPath: path.join(dir, 'second.engine') });
    expect(fs.readFileSync(path.join(dir, 'second.engine')).equals(fs.readFileSync(path.join(dir, 'first.engine')))).toBe(true);
    expect(second.wallMs).toBeLessThan(first.wallMs / 10);
    // The stream says so: started, a log line naming the build that made the bytes, finished.
    expect(second.events.map((e) => e.type)).toEqual(['build.started', 'log', 'build.finished']);
    expect(second.events[1].type === 'log' && second.events[1].message).toMatch(new RegExp(`Reused the engine build ${first.id} made`));
    // Its own manifest: this build's id, the same engine bytes, where they came from; check says fits.
    const m = EngineManifest.parse(JSON.parse(fs.readFileSync(second.fin.manifestPath!, 'utf8')));
    expect(m).toMatchObject({
      buildId: second.id,
      engine: { file: 'second.engine', sha256: sha(path.join(dir, 'first.engine')) },
      reusedFrom: { buildId: first.id, key: second.fin.reused!.key },
    });
    expect(fs.existsSync(path.join(dir, 'second.engine.layers.json'))).toBe(true);
    // A third one, from another service (another process would see the same): reused from the first still.
    const third = await build(service(), path.join(dir, 'third.engine'), sim({ simDuration: 3 }));
    expect(third.fin.reused?.fromBuildId).toBe(first.id);
    // The records say they succeeded, with their engines available: the first build's engine is
    // the store's (a hard link), and using the stored engine must not touch the first build's file.
    expect(svc.getBuild(second.id)).toMatchObject({ state: 'succeeded', engineAvailable: true });
    expect(svc.getBuild(first.id)).toMatchObject({ state: 'succeeded', engineAvailable: true });
    expect(svc.enginePath(first.id)).toBe(path.join(dir, 'first.engine'));
  });

  it('changing any option, a shape range, the model or the TensorRT version builds again', async () => {
    storeDir = path.join(dir, 'store-2');
    const svc = service();
    const out = (n: string) => path.join(dir, `${n}.engine`);
    expect((await build(svc, out('base'), sim())).fin.reused).toBeUndefined();
    expect((await build(svc, out('again'), sim({ simDuration: 0.5, verboseLog: true }))).fin.reused).toBeDefined(); // not engine-shaping
    for (const [name, opts] of [
      ['opt', sim({ optLevel: 4 })],
      ['fp16', sim({ precision: ['fp16'] })],
      ['tf32', sim({ tf32: false })],
      ['seed', sim({ simSeed: 3 })],
      ['hw', sim({ hardwareCompatibility: 'ampere_plus' })],
      ['aux', sim({ maxAuxStreams: 2 })],
    ] as const) {
      expect((await build(svc, out(name), opts)).fin.reused, name).toBeUndefined();
    }
    const shapes = (max: number) => sim({ shapes: [`input:1x3x32x32/2x3x32x32/${max}x3x32x32`] });
    expect((await build(svc, out('dyn4'), shapes(4), dynamic)).fin.reused).toBeUndefined();
    expect((await build(svc, out('dyn4b'), shapes(4), dynamic)).fin.reused).toBeDefined();
    expect((await build(svc, out('dyn8'), shapes(8), dynamic)).fin.reused).toBeUndefined();
    // The model: one byte of it.
    const m2 = path.join(dir, 'model2.onnx');
    const bytes = fs.readFileSync(model);
    bytes[bytes.indexOf(Buffer.from('graph'))] = 'G'.charCodeAt(0);
    fs.writeFileSync(m2, bytes);
    expect((await build(svc, out('m2'), sim(), m2)).fin.reused).toBeUndefined();
    // Another TensorRT version (the simulator emulating 11.1: a fresh service lists backends anew).
    process.env.TBS_SIM_TRT_VERSION = '11.1.0';
    expect((await build(service(), out('trt11'), sim())).fin.reused).toBeUndefined();
  });

  // test/contract/engine-identity.test.ts walks every option of the table through the key; these
  // are the newest ones built for real: the plugin libraries (their bytes too) and a build route.
  it('plugin libraries and their bytes are part of the key (and check names a changed library); manifestRows is not', async () => {
    storeDir = path.join(dir, 'store-5');
    const svc = service();
    const lib = path.join(dir, 'libmy_plugin.so');
    fs.writeFileSync(lib, 'plugin v1');
    const v1 = sha(lib);
    const out = (n: string) => path.join(dir, `plug-${n}.engine`);
    const withLib = sim({ simSeed: 20, dynamicPlugins: [lib] });
    const first = await build(svc, out('a'), withLib);
    expect(first.fin.status, first.fin.error).toBe('succeeded');
    expect(first.fin.reused).toBeUndefined();
    const m = EngineManifest.parse(JSON.parse(fs.readFileSync(first.fin.manifestPath!, 'utf8')));
    expect(m.pluginLibraries).toEqual([{ path: lib, sha256: v1 }]);
    expect(m.options).toMatchObject({ dynamicPlugins: [lib], staticPlugins: [], pluginsToSerialize: [] });
    expect((await build(svc, out('rows'), { ...withLib, manifestRows: true })).fin.reused?.fromBuildId).toBe(first.id);
    expect((await build(svc, out('none'), sim({ simSeed: 20 }))).fin.reused).toBeUndefined();
    expect((await build(svc, out('ser'), { ...withLib, pluginsToSerialize: [lib] })).fin.reused).toBeUndefined();
    // The library rebuilt in place (other bytes, same path): built again.
    fs.writeFileSync(lib, 'plugin v2');
    expect((await build(svc, out('v2'), withLib)).fin.reused).toBeUndefined();
    const r = await checkEngine({ enginePath: out('a') }, () => svc.listBackends());
    expect(r.verdict).toBe('rebuild');
    expect(r.reasons).toEqual([{ kind: 'plugin', what: `plugin library ${lib}`, was: v1, now: sha(lib) }]);
  });

  it('a build route is part of the key (the simulator emulating TensorRT 11.1, which has build routes)', async () => {
    storeDir = path.join(dir, 'store-6');
    process.env.TBS_SIM_TRT_VERSION = '11.1.0';
    const svc = service();
    const route = (r: string) => sim({ simSeed: 30, buildRoute: r });
    const first = await build(svc, path.join(dir, 'route-a.engine'), route('-conv_use_long_w=off'));
    expect(first.fin.status, first.fin.error).toBe('succeeded');
    expect(first.fin.reused).toBeUndefined();
    expect((await build(svc, path.join(dir, 'route-b.engine'), route('-conv_use_long_w=off'))).fin.reused?.fromBuildId).toBe(first.id);
    expect((await build(svc, path.join(dir, 'route-c.engine'), route('-conv_use_long_w=on'))).fin.reused).toBeUndefined();
    expect((await build(svc, path.join(dir, 'route-d.engine'), sim({ simSeed: 30 }))).fin.reused).toBeUndefined();
  });

  it("options the table says cannot change the engine do not change the simulated engine's bytes", async () => {
    storeDir = path.join(dir, 'store-7');
    const svc = service();
    const cache = path.join(dir, 'identity.cache');
    const plain = await build(svc, path.join(dir, 'ident-a.engine'), sim({ simSeed: 40, reuse: undefined }));
    // Every option marked { not: ... } in the options table that a succeeding build can take, at
    // once; the timing cache twice (cold, then warm: hits instead of measurements).
    const others = { simDuration: 0.6, verboseLog: true, simMemory: '64M', manifestRows: true, maxHostMemory: '8G', timingCache: cache, reuse: undefined };
    const cold = await build(svc, path.join(dir, 'ident-b.engine'), sim({ simSeed: 40, ...others }));
    const warm = await build(svc, path.join(dir, 'ident-c.engine'), sim({ simSeed: 40, ...others }));
    for (const b of [plain, cold, warm]) expect(b.fin.status, b.fin.error).toBe('succeeded');
    // The simulator stamps the build's id into its file's header; everything else must be the same.
    const bytes = (n: string) => {
      const text = fs.readFileSync(path.join(dir, `ident-${n}.engine`), 'latin1');
      expect(text).toMatch(/"buildId":"b[^"]+"/);
      return text.replace(/"buildId":"[^"]*"/, '"buildId":""');
    };
    expect(bytes('b') === bytes('a'), 'cold cache and the other options').toBe(true);
    expect(bytes('c') === bytes('a'), 'warm cache and the other options').toBe(true);
    // An option marked as shaping the engine does change them.
    await build(svc, path.join(dir, 'ident-d.engine'), sim({ simSeed: 40, optLevel: 5, reuse: undefined }));
    expect(bytes('d') === bytes('a')).toBe(false);
  });

  it('a stored engine is not placed at an output another build holds; once released it is', async () => {
    storeDir = path.join(dir, 'store-claimed');
    const svc = service();
    expect((await build(svc, path.join(dir, 'claimed-first.engine'), sim())).fin.status).toBe('succeeded');
    const out = path.join(dir, 'claimed.engine');
    fs.writeFileSync(out, 'the other build is writing this');
    // Held as another process's build would hold it (the claim file names a live holder).
    const held = claimOutput(fs.realpathSync(out), 'other-build');
    if (!held.ok) throw new Error('could not claim');
    const refused = await build(svc, out, sim());
    expect(refused.fin.status).toBe('failed');
    expect(refused.fin.error).toMatch(/another build \(other-build/);
    expect(fs.readFileSync(out, 'utf8')).toBe('the other build is writing this');
    held.claim.release();
    const placed = await build(svc, out, sim());
    expect(placed.fin).toMatchObject({ status: 'succeeded', reused: {} });
  });

  it('without reuse nothing is looked up or kept', async () => {
    storeDir = path.join(dir, 'store-3');
    const svc = service();
    await build(svc, path.join(dir, 'plain.engine'), sim({ reuse: undefined }));
    expect(fs.existsSync(storeDir)).toBe(false);
  });

  it('the store limit holds for every reuse build; an entry that does not match its manifest is rebuilt, not handed out', async () => {
    storeDir = path.join(dir, 'store-4');
    const svc = service();
    const store = new EngineReuseStore(storeDir);
    await build(svc, path.join(dir, 'lim-a.engine'), sim({ simSeed: 10 }));
    await build(svc, path.join(dir, 'lim-b.engine'), sim({ simSeed: 11 }));
    expect(store.entries()).toHaveLength(2);
    // A build with a 0 MiB limit keeps nothing and evicts everything.
    await build(svc, path.join(dir, 'lim-c.engine'), sim({ simSeed: 12, storeLimitMiB: 0 }));
    expect(store.entries()).toHaveLength(0);
    expect((await build(svc, path.join(dir, 'lim-a2.engine'), sim({ simSeed: 10 }))).fin.reused).toBeUndefined();
    // Damage the stored engine: the next reuse build finds it does not match and builds.
    const [entry] = store.entries();
    const stored = path.join(storeDir, entry.key, 'engine');
    fs.rmSync(stored);
    fs.writeFileSync(stored, 'damaged');
    const again = await build(svc, path.join(dir, 'lim-a3.engine'), sim({ simSeed: 10 }));
    expect(again.fin.reused).toBeUndefined();
    // ... and keeps its own engine under the key again, intact.
    const kept = await store.lookup(entry.key);
    expect(kept && fs.readFileSync(kept.enginePath).equals(fs.readFileSync(path.join(dir, 'lim-a3.engine')))).toBe(true);
  });
});
