// The pure check (apps/shared/engine-manifest.ts): every reason it can give, each naming what
// changed with both values, and every missing fact that makes the answer "unknown". Manifests
// here are made by hand; the service tests check manifests that real (simulated) builds wrote.
import { describe, expect, it } from 'vitest';
import { checkAgainst, compareVersions, EngineManifest, normalizeOptions, verdictOf, type CheckEnvironment, type CheckInputs } from '../engine-manifest.js';
import type { BackendInfo, BuildOptions } from '../protocol.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);

function manifest(over: Partial<EngineManifest> = {}, options: BuildOptions = { backend: 'tensorrt' }): EngineManifest {
  return EngineManifest.parse({
    formatVersion: 1,
    tool: { name: 'trt-build-studio', version: '0.1.0' },
    buildId: 'b1',
    createdAt: '2026-12-01T00:00:00.000Z',
    backend: 'tensorrt',
    tensorrt: { version: '10.16.0', adapterHeaderVersion: '10.16.0', simulator: null },
    gpu: { name: 'NVIDIA A100-SXM4-80GB', computeCapability: '8.0', uuid: null, device: 0 },
    driverVersion: '550.54',
    cudaVersion: '12.4',
    options: normalizeOptions(options),
    compatibility: { hardwareCompatibility: normalizeOptions(options).hardwareCompatibility, versionCompatible: false },
    pluginLibraries: [],
    model: { path: '/m/model.onnx', fileName: 'model.onnx', sha256: SHA_A, bytes: 10, externalData: [], inputs: [], outputs: [] },
    timingCache: null,
    build: { wallMs: 1000, phases: [{ name: 'Building engine', ms: 900, count: 1 }] },
    engine: { file: 'model.engine', bytes: 100, sha256: SHA_A },
    ...over,
  });
}

const trt = (over: Partial<BackendInfo> = {}): BackendInfo => ({
  name: 'tensorrt',
  available: true,
  version: '10.16.0',
  library: { path: '/usr/lib/libnvinfer.so.10', version: '10.16.0' },
  gpu: { name: 'NVIDIA A100-SXM4-80GB', computeCapability: '8.0', device: 0 },
  ...over,
});

const sameModel: CheckInputs = { model: { path: '/m/model.onnx', sha256: SHA_A } };

function check(m: EngineManifest, env: Partial<CheckEnvironment> = {}, inputs: CheckInputs = sameModel) {
  const r = checkAgainst(m, { backend: trt(), driverVersion: '550.54', ...env }, inputs);
  return { ...r, verdict: verdictOf(r.reasons, r.missing) };
}

describe('check: fits', () => {
  it('fits when nothing changed (the options given as built, defaults written out or not)', () => {
    const r = check(manifest({}, { backend: 'tensorrt', optLevel: 3 }), {}, { ...sameModel, options: { backend: 'auto' } });
    expect(r).toMatchObject({ verdict: 'fits', reasons: [], missing: [] });
  });
});

describe('check: every reason to rebuild names what changed and both values', () => {
  it('TensorRT version', () => {
    const r = check(manifest(), { backend: trt({ library: { path: '/x', version: '10.17.0' } }) });
    expect(r.verdict).toBe('rebuild');
    expect(r.reasons).toEqual([{ kind: 'tensorrt-version', what: 'TensorRT version', was: '10.16.0', now: '10.17.0' }]);
  });

  it('a version-compatible engine loads on a later TensorRT of the same major, not an earlier one or another major', () => {
    const vc = manifest({ compatibility: { hardwareCompatibility: 'none', versionCompatible: true } });
    expect(check(vc, { backend: trt({ library: { path: '/x', version: '10.17.0' } }) }).verdict).toBe('fits');
    expect(check(vc, { backend: trt({ library: { path: '/x', version: '10.9.0' } }) }).reasons[0]).toMatchObject({ kind: 'tensorrt-version', was: '10.16.0', now: '10.9.0' });
    expect(check(vc, { backend: trt({ library: { path: '/x', version: '11.0.0' } }) }).reasons[0]).toMatchObject({ kind: 'tensorrt-version', now: '11.0.0' });
  });

  it('the simulated backend compares the TensorRT version it emulates', () => {
    const m = manifest({ backend: 'simulated', tensorrt: { version: '10.16.0', adapterHeaderVersion: null, simulator: 'sim-1' } });
    const sim = (emulates: string): BackendInfo => ({ name: 'simulated', available: true, version: 'sim-1', emulates });
    expect(check(m, { backend: sim('10.16.0') }).verdict).toBe('fits');
    expect(check(m, { backend: sim('11.1.0') }).reasons).toEqual([{ kind: 'tensorrt-version', what: 'TensorRT version', was: '10.16.0', now: '11.1.0' }]);
  });

  it('compute capability, exactly without hardware compatibility', () => {
    const r = check(manifest(), { backend: trt({ gpu: { name: 'NVIDIA A100-SXM4-80GB', computeCapability: '9.0', device: 0 } }) });
    expect(r.reasons).toEqual([{ kind: 'compute-capability', what: 'compute capability', was: '8.0', now: '9.0' }]);
  });

  it('compute capability with hardware compatibility "ampere_plus": any Ampere or later fits, older does not', () => {
    const m = manifest({}, { backend: 'tensorrt', hardwareCompatibility: 'ampere_plus' });
    expect(check(m, { backend: trt({ gpu: { name: 'NVIDIA H100', computeCapability: '9.0', device: 0 } }) }).verdict).toBe('fits');
    const old = check(m, { backend: trt({ gpu: { name: 'Tesla T4', computeCapability: '7.5', device: 0 } }) });
    expect(old.reasons).toEqual([{ kind: 'compute-capability', what: 'compute capability (hardware-compatible: Ampere or later)', was: '8.0', now: '7.5' }]);
  });

  it('GPU model where the engine is not portable; "same_compute_capability" lets the model differ', () => {
    const other = { backend: trt({ gpu: { name: 'NVIDIA A30', computeCapability: '8.0', device: 0 } }) };
    expect(check(manifest(), other).reasons).toEqual([
      { kind: 'gpu-model', what: 'GPU model (the engine is not hardware-compatible)', was: 'NVIDIA A100-SXM4-80GB', now: 'NVIDIA A30' },
    ]);
    expect(check(manifest({}, { backend: 'tensorrt', hardwareCompatibility: 'same_compute_capability' }), other).verdict).toBe('fits');
  });

  it('driver too old (a newer one is fine)', () => {
    expect(check(manifest(), { driverVersion: '535.104' }).reasons).toEqual([
      { kind: 'driver', what: 'NVIDIA driver (older than the one the engine was built with)', was: '550.54', now: '535.104' },
    ]);
    expect(check(manifest(), { driverVersion: '560.1' }).verdict).toBe('fits');
  });

  it("the model's bytes", () => {
    const r = check(manifest(), {}, { model: { path: '/m/model.onnx', sha256: SHA_B } });
    expect(r.reasons).toEqual([{ kind: 'model', what: 'model /m/model.onnx (sha256 of the graph and its external data)', was: SHA_A, now: SHA_B }]);
  });

  it('an option, defaults included, and several at once', () => {
    const r = check(manifest(), {}, { ...sameModel, options: { backend: 'auto', optLevel: 5, tf32: false, precision: ['fp16'] } });
    expect(r.reasons).toEqual([
      { kind: 'option', what: 'option optLevel', was: '3', now: '5' },
      { kind: 'option', what: 'option precision', was: '[]', now: '["fp16"]' },
      { kind: 'option', what: 'option tf32', was: 'true', now: 'false' },
    ]);
    const r2 = check(manifest({}, { backend: 'tensorrt', workspaceMiB: 1024 }), {}, { ...sameModel, options: { backend: 'auto' } });
    expect(r2.reasons).toEqual([{ kind: 'option', what: 'option workspaceMiB', was: '1024', now: '(default)' }]);
  });

  it('options that cannot change the engine (log verbosity, simulated duration) are no reason', () => {
    const r = check(manifest(), {}, { ...sameModel, options: { backend: 'auto', verboseLog: true, simDuration: 5 } });
    expect(r.verdict).toBe('fits');
  });

  it('a shape range, and shape values, per input', () => {
    const built = manifest({}, { backend: 'tensorrt', shapes: { x: { min: [1, 3], opt: [4, 3], max: [8, 3] } } });
    const r = check(
      built,
      {},
      { ...sameModel, options: { backend: 'auto', shapes: { x: { min: [1, 3], opt: [4, 3], max: [16, 3] } }, shapeValues: { s: { min: [1], opt: [2], max: [3] } } } },
    );
    expect(r.reasons).toEqual([
      { kind: 'shape-range', what: 'shape range of input x', was: '1x3/4x3/8x3', now: '1x3/4x3/16x3' },
      { kind: 'shape-range', what: 'shape values of input s', was: '(none)', now: '1/2/3' },
    ]);
  });

  it('a plugin library whose bytes changed or that is gone', () => {
    const m = manifest({
      pluginLibraries: [
        { path: '/p/libA.so', sha256: SHA_A },
        { path: '/p/libB.so', sha256: SHA_A },
      ],
    });
    const r = check(m, {}, { ...sameModel, pluginHashes: { '/p/libA.so': SHA_B, '/p/libB.so': null } });
    expect(r.reasons).toEqual([
      { kind: 'plugin', what: 'plugin library /p/libA.so', was: SHA_A, now: SHA_B },
      { kind: 'plugin', what: 'plugin library /p/libB.so', was: SHA_A, now: '(missing)' },
    ]);
  });

  it('every reason at once is listed, not only the first', () => {
    const r = check(
      manifest(),
      { backend: trt({ library: { path: '/x', version: '11.1.0' }, gpu: { name: 'Tesla T4', computeCapability: '7.5', device: 0 } }), driverVersion: '500.1' },
      { model: { path: '/m/model.onnx', sha256: SHA_B }, options: { backend: 'auto', optLevel: 1 } },
    );
    expect(r.reasons.map((x) => x.kind)).toEqual(['tensorrt-version', 'compute-capability', 'gpu-model', 'driver', 'model', 'option']);
  });
});

describe('check: unknown names what is missing', () => {
  it('no TensorRT library here', () => {
    const r = check(manifest(), { backend: { name: 'tensorrt', available: false, reason: 'libnvinfer.so.10 not found' } });
    expect(r.verdict).toBe('unknown');
    expect(r.missing).toEqual([{ kind: 'no-backend', message: 'no TensorRT library here to load the engine with: libnvinfer.so.10 not found' }]);
  });

  it('no GPU to probe', () => {
    const r = check(manifest(), { backend: trt({ gpu: undefined }) });
    expect(r.verdict).toBe('unknown');
    expect(r.missing.map((m) => m.kind)).toEqual(['no-gpu']);
  });

  it('a definite reason outweighs a missing fact', () => {
    const r = check(manifest(), { backend: trt({ gpu: undefined }) }, { model: { path: '/m/model.onnx', sha256: SHA_B } });
    expect(r.verdict).toBe('rebuild');
  });

  it('says what it did not compare', () => {
    const r = check(manifest(), {}, {});
    expect(r.verdict).toBe('fits');
    expect(r.notes.join('\n')).toMatch(/model was not compared/);
    expect(r.notes.join('\n')).toMatch(/options were not compared/);
  });
});

describe('the manifest schema and the canonical options', () => {
  it('refuses a manifest of another format version, or with a field missing', () => {
    const m = manifest();
    expect(EngineManifest.safeParse({ ...m, formatVersion: 2 }).success).toBe(false);
    const { engine: _e, ...noEngine } = m;
    expect(EngineManifest.safeParse(noEngine).success).toBe(false);
  });

  it('normalizes options to one form: key order, list order and written-out defaults do not matter', () => {
    const a = normalizeOptions({ backend: 'auto', precision: ['int8', 'fp16'], shapes: { b: { min: [1], opt: [1], max: [1] }, a: { min: [2], opt: [2], max: [2] } } });
    const b = normalizeOptions({
      backend: 'simulated',
      optLevel: 3,
      tf32: true,
      precision: ['fp16', 'int8'],
      shapes: { a: { min: [2], opt: [2], max: [2] }, b: { min: [1], opt: [1], max: [1] } },
    });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(normalizeOptions({ backend: 'auto', inferCacheMisses: true }).profilingVerbosity).toBe('detailed');
  });

  it('compares versions by number', () => {
    expect(compareVersions('10.9.0', '10.16.0')).toBe(-1);
    expect(compareVersions('550.54', '550.54.14')).toBe(-1);
    expect(compareVersions('11.1', '11.1.0')).toBe(0);
  });
});
