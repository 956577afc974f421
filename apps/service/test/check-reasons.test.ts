// Every answer `check` can give, one scenario each, through the service's checkEngine (the one
// behind the CLI, GET /api/engines/check, MCP check_engine and the LSP command) on real files: an
// engine, its manifest, the model, plugin libraries in a temp folder. The lists of reasons come
// from the code (REBUILD_REASON_KINDS, UNKNOWN_REASON_KINDS); a kind added there without a
// scenario here fails the first test (and the Record types below do not compile).
//
// No GPU or TensorRT here: for TensorRT engines the machine is given as listBackends would report
// it on one (library version, GPU name and compute capability, driver). Manifests written by real
// (simulated) builds are checked in engine-manifest.test.ts and apps/cli/test/cli-check.test.ts.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EngineManifest,
  manifestPathFor,
  normalizeOptions,
  REBUILD_REASON_KINDS,
  UNKNOWN_REASON_KINDS,
  type CheckResult,
  type RebuildReason,
  type UnknownReason,
} from '../../shared/engine-manifest.js';
import type { BackendInfo, BuildOptionsInput } from '../../shared/protocol.js';
import { BuildOptions } from '../../shared/protocol.js';
import { checkEngine } from '../engine-check.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
let plugin: string;
const sha = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

beforeAll(() => {
  dir = tempDir('tbs-check-reasons-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 3 });
  plugin = path.join(dir, 'libplugin.so');
  fs.writeFileSync(plugin, 'plugin bytes v1');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const A100 = { name: 'NVIDIA A100-SXM4-80GB', computeCapability: '8.0', device: 0 };
/** This machine as listBackends reports a TensorRT one (the facts `check` compares). */
function trtHere(over: { version?: string; gpu?: BackendInfo['gpu'] | null; driver?: string; available?: boolean } = {}): BackendInfo[] {
  const version = over.version ?? '10.16.0';
  return [
    {
      name: 'tensorrt',
      available: over.available ?? true,
      version,
      library: { path: '/usr/lib/x86_64-linux-gnu/libnvinfer.so.10', version },
      ...(over.gpu === null ? {} : { gpu: over.gpu ?? A100 }),
      // The NVIDIA driver's version where the addon reports it (NVML, beside the CUDA driver).
      cudaDriver: { path: '/usr/lib/x86_64-linux-gnu/libcuda.so.1', version: '12.4', driverVersion: over.driver ?? '550.54' },
      ...(over.available === false ? { reason: 'libnvinfer.so.10 not found' } : {}),
    },
    { name: 'simulated', available: true, version: 'sim-1', emulates: '10.16.0' },
  ];
}

let n = 0;
/** An engine file and the manifest a TensorRT build of `model` with `options` would have written beside it. */
function engineBuilt(options: BuildOptionsInput = {}, over: Partial<EngineManifest> = {}): string {
  const enginePath = path.join(dir, `e${++n}.engine`);
  fs.writeFileSync(enginePath, crypto.randomBytes(512));
  const o = BuildOptions.parse({ backend: 'tensorrt', ...options });
  const m = EngineManifest.parse({
    formatVersion: 1,
    tool: { name: 'trt-build-studio', version: '0.1.0' },
    buildId: `b${n}`,
    createdAt: new Date().toISOString(),
    backend: 'tensorrt',
    tensorrt: { version: '10.16.0', adapterHeaderVersion: '10.16.0', simulator: null },
    gpu: { name: A100.name, computeCapability: A100.computeCapability, uuid: null, device: 0 },
    driverVersion: '550.54',
    cudaVersion: '12.4',
    options: normalizeOptions(o),
    compatibility: { hardwareCompatibility: normalizeOptions(o).hardwareCompatibility, versionCompatible: normalizeOptions(o).versionCompatible },
    pluginLibraries: [],
    model: { path: model, fileName: 'model.onnx', sha256: sha(model), bytes: fs.statSync(model).size, externalData: [], inputs: [], outputs: [] },
    timingCache: null,
    build: { wallMs: 1000, phases: [{ name: 'Building engine', ms: 900, count: 1 }] },
    engine: { file: path.basename(enginePath), bytes: 512, sha256: sha(enginePath) },
    ...over,
  });
  fs.writeFileSync(manifestPathFor(enginePath), JSON.stringify(m));
  return enginePath;
}

const check = (enginePath: string, machine: BackendInfo[], extra: { modelPath?: string; options?: unknown } = {}) => checkEngine({ enginePath, ...extra }, async () => machine);

type Scenario = () => Promise<CheckResult>;

/** One scenario per reason to rebuild; each must give that reason (and say both values). */
const REBUILD: Record<RebuildReason['kind'], Scenario> = {
  'tensorrt-version': async () => check(engineBuilt(), trtHere({ version: '10.17.0' })),
  'compute-capability': async () =>
    check(engineBuilt({ hardwareCompatibility: 'same_compute_capability' }), trtHere({ gpu: { name: 'NVIDIA H100', computeCapability: '9.0', device: 0 } })),
  'gpu-model': async () => check(engineBuilt(), trtHere({ gpu: { name: 'NVIDIA A30', computeCapability: '8.0', device: 0 } })),
  driver: async () => check(engineBuilt(), trtHere({ driver: '535.104.05' })),
  model: async () => {
    const e = engineBuilt();
    const other = writeModel(path.join(dir, 'other.onnx'), { layers: 4 });
    return check(e, trtHere(), { modelPath: other });
  },
  option: async () => check(engineBuilt({ optLevel: 4 }), trtHere(), { options: { backend: 'tensorrt', optLevel: 5 } }),
  'shape-range': async () =>
    check(engineBuilt({ shapes: { x: { min: [1, 3], opt: [2, 3], max: [4, 3] } } }), trtHere(), {
      options: { backend: 'tensorrt', shapes: { x: { min: [1, 3], opt: [2, 3], max: [8, 3] } } },
    }),
  plugin: async () => {
    const e = engineBuilt({ dynamicPlugins: [plugin] }, { pluginLibraries: [{ path: plugin, sha256: sha(plugin) }] });
    fs.writeFileSync(plugin, 'plugin bytes v2');
    return check(e, trtHere());
  },
};

/** One scenario per missing fact; each must give "unknown" naming it. */
const UNKNOWN: Record<UnknownReason['kind'], Scenario> = {
  'no-engine': async () => check(path.join(dir, 'never-built.engine'), trtHere()),
  'no-manifest': async () => {
    const e = engineBuilt();
    fs.rmSync(manifestPathFor(e));
    return check(e, trtHere());
  },
  'bad-manifest': async () => {
    const e = engineBuilt();
    const m = JSON.parse(fs.readFileSync(manifestPathFor(e), 'utf8')) as Record<string, unknown>;
    delete m.engine;
    fs.writeFileSync(manifestPathFor(e), JSON.stringify(m));
    return check(e, trtHere());
  },
  'manifest-mismatch': async () => {
    // The engine replaced (a crash between its write and its manifest's): the manifest names other bytes.
    const e = engineBuilt();
    fs.writeFileSync(e, crypto.randomBytes(512));
    return check(e, trtHere());
  },
  'no-backend': async () => check(engineBuilt(), trtHere({ available: false })),
  'no-gpu': async () => check(engineBuilt(), trtHere({ gpu: null })),
};

describe('every answer check can give', () => {
  it('has a scenario here for every reason the code lists', () => {
    expect(Object.keys(REBUILD).sort()).toEqual([...REBUILD_REASON_KINDS].sort());
    expect(Object.keys(UNKNOWN).sort()).toEqual([...UNKNOWN_REASON_KINDS].sort());
  });

  it('fits when nothing changed (the baseline every scenario departs from)', async () => {
    const r = await check(engineBuilt({ optLevel: 4 }), trtHere(), { modelPath: model, options: { backend: 'tensorrt', optLevel: 4 } });
    expect(r).toMatchObject({ verdict: 'fits', reasons: [], missing: [] });
  });

  it.each(REBUILD_REASON_KINDS.map((k) => [k]))('needs a rebuild: %s, naming what changed and both values', async (kind) => {
    const r = await REBUILD[kind]();
    expect(r.verdict).toBe('rebuild');
    expect(r.reasons.map((x) => x.kind)).toEqual([kind]);
    const [reason] = r.reasons;
    expect(reason.what.length).toBeGreaterThan(3);
    expect(reason.was).not.toBe(reason.now);
    expect(reason.was).not.toBe('');
    expect(reason.now).not.toBe('');
  });

  it.each(UNKNOWN_REASON_KINDS.map((k) => [k]))('unknown: %s, saying what is missing', async (kind) => {
    const r = await UNKNOWN[kind]();
    expect(r.verdict).toBe('unknown');
    expect(r.reasons).toEqual([]);
    expect(r.missing.map((m) => m.kind)).toEqual([kind]);
    expect(r.missing[0].message.length).toBeGreaterThan(10);
  });
});

// Version-compatible engines (the versionCompatible option, kVERSION_COMPATIBLE): NVIDIA documents
// that such an engine loads on later TensorRT versions of the same major. The machine here is
// described, not real (no TensorRT in this environment), so this tests the rule, not the promise.
describe('a version-compatible engine', () => {
  it('fits a later minor of the same major, with a note saying why the versions may differ', async () => {
    const r = await check(engineBuilt({ versionCompatible: true }), trtHere({ version: '10.17.0' }), {
      modelPath: model,
      options: { backend: 'tensorrt', versionCompatible: true },
    });
    expect(r.verdict).toBe('fits');
    expect(r.reasons).toEqual([]);
    expect(r.notes.join('\n')).toMatch(/TensorRT 10\.17\.0 differs from the 10\.16\.0 .*version-compatible.*lean runtime it embeds/);
  });

  it('says the loader must supply the lean runtime when it was excluded', async () => {
    const r = await check(engineBuilt({ versionCompatible: true, excludeLeanRuntime: true }), trtHere({ version: '10.17.0' }));
    expect(r.verdict).toBe('fits');
    expect(r.notes.join('\n')).toMatch(/lean runtime the loader must supply/);
  });

  it('needs a rebuild on an older TensorRT, naming both versions and the limit of version compatibility', async () => {
    const r = await check(engineBuilt({ versionCompatible: true }), trtHere({ version: '10.9.0' }));
    expect(r.verdict).toBe('rebuild');
    expect(r.reasons).toEqual([{ kind: 'tensorrt-version', what: expect.stringMatching(/version-compatible.*only later 10\.x/), was: '10.16.0', now: '10.9.0' }]);
  });

  it('needs a rebuild on another major', async () => {
    const r = await check(engineBuilt({ versionCompatible: true }), trtHere({ version: '11.1.0' }));
    expect(r.reasons.map((x) => [x.kind, x.was, x.now])).toEqual([['tensorrt-version', '10.16.0', '11.1.0']]);
  });

  it('is still bound to its GPU unless it is hardware-compatible too', async () => {
    const h100 = { name: 'NVIDIA H100', computeCapability: '9.0', device: 0 };
    const bound = await check(engineBuilt({ versionCompatible: true }), trtHere({ version: '10.17.0', gpu: h100 }));
    expect(bound.reasons.map((x) => x.kind).sort()).toEqual(['compute-capability', 'gpu-model']);
    const portable = await check(engineBuilt({ versionCompatible: true, hardwareCompatibility: 'ampere_plus' }), trtHere({ version: '10.17.0', gpu: h100 }));
    expect(portable.verdict).toBe('fits');
  });

  it('an engine built without it still needs a rebuild on a later minor', async () => {
    const r = await check(engineBuilt(), trtHere({ version: '10.17.0' }));
    expect(r.reasons).toEqual([{ kind: 'tensorrt-version', what: 'TensorRT version', was: '10.16.0', now: '10.17.0' }]);
  });

  it('the option itself is compared: asking for a version-compatible build of a plain engine needs a rebuild', async () => {
    const r = await check(engineBuilt(), trtHere(), { options: { backend: 'tensorrt', versionCompatible: true } });
    expect(r.reasons.map((x) => [x.kind, x.was, x.now])).toEqual([['option', 'false', 'true']]);
  });
});
