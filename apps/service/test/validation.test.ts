import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BackendInfo, BuildEvent } from '../../shared/protocol.js';
import { ServiceError } from '../api.js';
import {
  applyDefaultShapes,
  checkShapes,
  defaultEnginePath,
  defaultShapeWarning,
  ShapesError,
  checkShapeValues,
  moveShapeTensorValues,
  resolveBackend,
  validateBuild,
} from '../build-validation.js';
import { BuildOptions } from '../../shared/protocol.js';
import { EventLog } from '../event-log.js';
import { inspectModel } from '../model/model-reader.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const dir = tempDir('tbs-validate-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const simOnly: BackendInfo[] = [
  { name: 'tensorrt', available: false, reason: 'libnvinfer.so.10 not found' },
  { name: 'simulated', available: true, version: 'sim-1' },
];

function thrown(f: () => unknown): ServiceError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected an error');
}

describe('shapes validation', async () => {
  const p = writeModel(path.join(dir, 'two-dyn.onnx'), {
    inputs: [
      { name: 'images', shape: ['batch', 3, 'height', 'width'] },
      { name: 'tokens', shape: ['batch', 'seq'], elemType: 'int64' },
    ],
  });
  const summary = await inspectModel(p);

  it('refuses a profile shape whose element count overflows int64, naming the input and the shape', () => {
    const big = 2 ** 31 - 1;
    const e = thrown(() =>
      checkShapes(summary, {
        images: { min: [1, 3, 8, 8], opt: [1, 3, 8, 8], max: [big, 3, big, big] },
        tokens: { min: [1, 1], opt: [1, 1], max: [big, big] },
      }),
    );
    expect(e.code).toBe('bad_input');
    expect(e.message).toContain(`shapes for "images": max ${big}x3x${big}x${big} has ${BigInt(big) ** 3n * 3n} elements, more than TensorRT's int64 volume (2^63-1) holds`);
    // 2^62-ish fits: no complaint about "tokens".
    expect(e.message).not.toContain('shapes for "tokens"');
  });

  // Issue 34: trtexec builds a dynamic input given no shapes with each dynamic dimension 1
  // (min = opt = max) and a warning; so does every surface now. These replace the tests that
  // asserted the old refusal ("dynamic input without shapes: … give "shapes" …").
  it('dynamic inputs without shapes are not refused: each dynamic dimension becomes 1, min = opt = max, a warning names the input and the shape', () => {
    expect(() => checkShapes(summary, undefined)).not.toThrow();
    const o = BuildOptions.parse({ shapes: { images: { min: [1, 3, 224, 224], opt: [2, 3, 224, 224], max: [4, 3, 224, 224] } } });
    const d = applyDefaultShapes(summary, o);
    expect(d).toEqual([{ input: 'tokens', kind: 'shapes', value: [1, 1] }]);
    expect(o.shapes).toEqual({ images: { min: [1, 3, 224, 224], opt: [2, 3, 224, 224], max: [4, 3, 224, 224] }, tokens: { min: [1, 1], opt: [1, 1], max: [1, 1] } });
    expect(defaultShapeWarning(d[0], summary)).toBe(
      'dynamic input "tokens" [batch, seq] was given no shapes: built for tokens: 1x1 (each dynamic dimension 1, min = opt = max, as trtexec does); give shapes to build for a range',
    );
    const none = BuildOptions.parse({});
    expect(applyDefaultShapes(summary, none).map((x) => [x.input, x.value.join('x')])).toEqual([
      ['images', '1x3x1x1'],
      ['tokens', '1x1'],
    ]);
  });

  it('bad shapes are still a ShapesError, which a command line can restate in its own flags', () => {
    const e = thrown(() => checkShapes(summary, { nosuch: { min: [1], opt: [1], max: [1] } })) as ShapesError;
    expect(e).toBeInstanceOf(ShapesError);
    expect(e.problems).toEqual([expect.stringMatching(/unknown input "nosuch"/)]);
    expect(e.missing).toBeUndefined();
    expect(e.restate(() => 'unused')).toBe(e.problems[0]);
  });

  it('rejects unknown inputs, wrong rank, changed fixed dims and min>opt', () => {
    const ok = { min: [1, 16], opt: [4, 32], max: [8, 64] };
    const img = { min: [1, 3, 224, 224], opt: [2, 3, 320, 320], max: [4, 3, 640, 640] };
    expect(() => checkShapes(summary, { images: img, tokens: ok })).not.toThrow();
    expect(thrown(() => checkShapes(summary, { images: img, tokens: ok, mask: ok })).message).toMatch(/unknown input "mask".*"images", "tokens"/);
    expect(thrown(() => checkShapes(summary, { images: { min: [1, 3, 224], opt: [1, 3, 224], max: [1, 3, 224] }, tokens: ok })).message).toMatch(
      /"images" have the wrong rank: min 1x3x224 has 3 dims.*the input has 4/,
    );
    expect(thrown(() => checkShapes(summary, { images: { ...img, max: [4, 4, 640, 640] }, tokens: ok })).message).toMatch(
      /"images" dimension 1 is fixed at 3 in the model, but the shapes give 3\/3\/4/,
    );
    expect(thrown(() => checkShapes(summary, { images: img, tokens: { min: [4, 16], opt: [1, 32], max: [8, 64] } })).message).toMatch(
      /"tokens" dimension 0 \(batch\): min 4 <= opt 1 <= max 8 does not hold/,
    );
  });
});

describe('build request validation', () => {
  const model = writeModel(path.join(dir, 'fixed.onnx'), { layers: 2 });
  const ctx = { id: 'b1-x', outputDir: path.join(dir, 'out'), backends: async () => simOnly };

  it('resolves auto to the simulated backend when TensorRT is unavailable', async () => {
    const v = await validateBuild({ modelPath: model }, ctx);
    expect(v.backend).toBe('simulated');
    // Named after the model, the device ("sim": not an engine to deploy) and the TensorRT version.
    expect(v.outputPath).toBe(path.join(dir, 'out', 'fixed.sim.sim-1.engine'));
    expect(resolveBackend('auto', [{ ...simOnly[0], available: true, version: '10.16.1' }, simOnly[1]]).name).toBe('tensorrt');
    await expect(validateBuild({ modelPath: model, options: { backend: 'tensorrt' } }, ctx)).rejects.toThrow(/tensorrt backend is not available: libnvinfer/);
  });

  it('names default engines after the model as the user knows it, GPU and version; never over another', () => {
    const trt: BackendInfo = { name: 'tensorrt', available: true, version: '10.16.1', gpu: { name: 'NVIDIA GeForce RTX 4090', computeCapability: '8.9', device: 0 } };
    const sim: BackendInfo = { name: 'simulated', available: true, version: 'sim-1', emulates: '10.16.0' };
    const out = path.join(dir, 'names');
    fs.mkdirSync(out, { recursive: true });
    expect(defaultEnginePath(out, 'résnet 50.onnx', trt, 'b1-aa')).toBe(path.join(out, 'résnet 50.GeForce-RTX-4090.10.16.1.engine'));
    expect(defaultEnginePath(out, 'résnet 50.onnx', sim, 'b1-aa')).toBe(path.join(out, 'résnet 50.sim.10.16.0.engine'));
    expect(defaultEnginePath(out, 'a/b:c*?.onnx', sim, 'b1-aa')).toBe(path.join(out, 'b-c.sim.10.16.0.engine'));
    // Taken on disk, or by a build still running: the build id makes it unique.
    fs.writeFileSync(path.join(out, 'm.sim.10.16.0.engine'), 'earlier');
    expect(defaultEnginePath(out, 'm.onnx', sim, 'b2-bb')).toBe(path.join(out, 'm.sim.10.16.0-b2-bb.engine'));
    expect(defaultEnginePath(out, 'n.onnx', sim, 'b3-cc', (p) => p.endsWith('n.sim.10.16.0.engine'))).toBe(path.join(out, 'n.sim.10.16.0-b3-cc.engine'));
  });

  it.each([
    [{ options: { optLevel: 9 } }, /optLevel/],
    [{ options: { shapes: ['x:1x2/3'] } }, /invalid shape/],
    [{ timeBudgetSeconds: -1 }, /timeBudgetSeconds/],
    [{ outputPath: path.join(dir, 'missing-dir', 'e.engine') }, /output directory does not exist/],
    [{ outputPath: dir }, /output path is a directory/],
    [{ outputPath: path.join(dir, 'fixed.onnx') }, /would overwrite the model/],
    [{ options: { timingCache: path.join(dir, 'nope', 'cache.bin') } }, /timing cache directory does not exist/],
    [{ options: { timingCache: path.join(dir, 'fixed.onnx') } }, /timing cache path .* is the model itself/],
    [{ outputPath: path.join(dir, 'same.bin'), options: { timingCache: path.join(dir, 'same.bin') } }, /cannot be the same file/],
  ])('rejects %o', async (extra, msg) => {
    const err = await validateBuild({ modelPath: model, ...extra } as never, ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(msg);
  });

  it('proves the output directory writable by writing to it (read-only mount)', async () => {
    // /proc is never writable, even for root, for whom a chmod 555 directory would still be.
    const err = await validateBuild({ modelPath: model, outputPath: '/proc/tbs-test.engine' }, ctx).catch((e) => e);
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(/output directory \/proc is not writable/);
  });
});

describe('shape-tensor values', async () => {
  const p = writeModel(path.join(dir, 'shape-tensor.onnx'), {
    inputs: [
      { name: 'x', shape: ['batch', 16] },
      { name: 'target', shape: [2], elemType: 'int64' },
      { name: 'n', shape: [], elemType: 'int32' },
      { name: 'len', shape: ['k'], elemType: 'int64' },
    ],
  });
  const read = await inspectModel(p);
  // The model reader's heuristic decides which inputs are shape tensors; given here directly.
  const summary = { ...read, shapeTensorInputs: ['target', 'n', 'len'] };
  const v = (min: number[], opt: number[], max: number[]) => ({ min, opt, max });

  it('accepts one value per element (dims[0] for rank 1, one for a scalar), of any sign', () => {
    expect(() => checkShapeValues(summary, { target: v([1, -1], [4, -1], [8, -1]), n: v([0], [2], [5]), len: v([1, 2], [1, 2], [1, 3]) })).not.toThrow();
  });

  it.each([
    [{ target: v([1], [1], [1]) }, /shapeValues for "target" need 2 values each \(the input is \[2\]\), got min 1, opt 1, max 1/],
    [{ n: v([1, 2], [1, 2], [1, 2]) }, /"n" need 1 value each/],
    [{ len: v([1], [1, 2], [1, 2]) }, /"len" need the same number of values for min, opt and max/],
    [{ target: v([4, 1], [2, 1], [8, 1]) }, /shapeValues for "target" value 0: min 4 <= opt 2 <= max 8 does not hold/],
    [{ x: v([1, 16], [1, 16], [1, 16]) }, /shapeValues given for "x" \[batch, 16\] float32, which is not a shape-tensor input \(those are: "target", "n", "len"\)/],
    [{ nope: v([1], [1], [1]) }, /shapeValues given for unknown input "nope"/],
  ])('rejects %o', (values, msg) => {
    const e = thrown(() => checkShapeValues(summary, values));
    expect(e.code).toBe('bad_input');
    expect(e.message).toMatch(msg);
  });

  it("without the model reader's list, leaves the decision to TensorRT (but a shape tensor has rank 0 or 1)", () => {
    // A summary from elsewhere (an older service, a hand-made request) may carry no list.
    const { shapeTensorInputs: _list, ...unlisted } = read;
    expect(() => checkShapeValues(unlisted, { target: v([1, 16], [1, 16], [1, 16]) })).not.toThrow();
    expect(thrown(() => checkShapeValues(unlisted, { x: v([1, 16], [1, 16], [1, 16]) })).message).toMatch(
      /shapeValues for "x": a shape tensor has rank 0 or 1, but the input is \[batch, 16\]/,
    );
  });

  it('takes shapes given for a shape-tensor input as its values (trtexec uses the same flags)', () => {
    const o = BuildOptions.parse({ shapes: { x: v([1, 16], [2, 16], [4, 16]), target: v([1, 2], [3, 4], [5, 6]) } });
    moveShapeTensorValues(summary, o);
    expect(o.shapes).toEqual({ x: v([1, 16], [2, 16], [4, 16]) });
    expect(o.shapeValues).toEqual({ target: v([1, 2], [3, 4], [5, 6]) });
    const both = BuildOptions.parse({ shapes: { target: v([1, 2], [1, 2], [1, 2]) }, shapeValues: { target: v([1, 2], [1, 2], [1, 2]) } });
    expect(thrown(() => moveShapeTensorValues(summary, both)).message).toMatch(/"target" is given both in shapes and in shapeValues/);
  });

  it('a dynamic-length shape tensor with values needs no dims', () => {
    expect(() => checkShapes(summary, { x: v([1, 16], [1, 16], [1, 16]) }, ['len'])).not.toThrow();
    const o = BuildOptions.parse({
      shapes: { x: v([1, 16], [1, 16], [1, 16]) },
      shapeValues: { len: v([1, 2], [1, 2], [1, 3]), target: v([1, 1], [1, 1], [1, 1]), n: v([1], [1], [1]) },
    });
    expect(applyDefaultShapes(summary, o)).toEqual([]);
  });

  it('shape tensors given no values get 1 for each value, as trtexec sets them (one for a scalar, dims[0] for rank 1)', () => {
    const o = BuildOptions.parse({ shapes: { x: v([1, 16], [1, 16], [1, 16]) }, shapeValues: { len: v([1, 2], [1, 2], [1, 3]) } });
    const d = applyDefaultShapes(summary, o);
    expect(d).toEqual([
      { input: 'target', kind: 'shapeValues', value: [1, 1] },
      { input: 'n', kind: 'shapeValues', value: [1] },
    ]);
    expect(o.shapeValues).toMatchObject({ target: v([1, 1], [1, 1], [1, 1]), n: v([1], [1], [1]) });
    expect(defaultShapeWarning(d[0], summary)).toMatch(
      /^shape-tensor input "target" \[2\] was given no values: built for target: 1,1 \(min = opt = max; trtexec fills each value with 1\)/,
    );
  });

  it('a shape tensor of unknown length given no values is refused: no default can be chosen', () => {
    const o = BuildOptions.parse({ shapes: { x: v([1, 16], [1, 16], [1, 16]) } });
    const e = thrown(() => applyDefaultShapes(summary, o));
    expect(e).toBeInstanceOf(ShapesError);
    expect(e.message).toMatch(/"len" \[k\] looks like a shape-tensor input and has no values; its length is not fixed.*give its values in shapeValues/);
  });
});

describe('options gated on the TensorRT version of the build', () => {
  const model = writeModel(path.join(dir, 'gates.onnx'), { layers: 1 });
  const sim = (emulates?: string): BackendInfo[] => [simOnly[0], { ...simOnly[1], ...(emulates ? { emulates } : {}) }];
  const trt = (library: string, extra: Partial<BackendInfo> = {}): BackendInfo[] => [
    { name: 'tensorrt', available: true, version: library, library: { path: '/opt/trt/lib/libnvinfer.so', version: library }, ...extra },
    simOnly[1],
  ];
  const attempt = (options: object, backends: BackendInfo[]) =>
    validateBuild({ modelPath: model, options }, { id: 'g', outputDir: path.join(dir, 'out'), backends: async () => backends }).then(
      () => null,
      (e: ServiceError) => {
        expect(e).toBeInstanceOf(ServiceError);
        expect(e.code).toBe('bad_input');
        return e.message;
      },
    );

  it('TensorRT 11 (simulated): precision flags are refused with what to do instead; stronglyTyped is fine', async () => {
    expect(await attempt({ precision: ['fp16'] }, sim('11.1.0'))).toBe(
      'precision "fp16": TensorRT 11.1.0 has no precision flags. TensorRT 11 builds strongly typed networks; cast or quantize the model offline (e.g. NVIDIA Model Optimizer).',
    );
    expect(await attempt({ stronglyTyped: true }, sim('11.1.0'))).toBeNull();
    expect(await attempt({ precision: ['fp16'] }, sim())).toBeNull(); // the default imitation is 10.16
  });

  it("the library's version decides, not the adapter's headers", async () => {
    const lib103 = trt('10.3.0', { adapter: { major: 10, headerVersion: '10.16.1', path: '/a.so' } });
    expect(await attempt({ precision: ['fp4'] }, lib103)).toMatch(/precision "fp4" needs TensorRT 10.8 or newer; the build would run on TensorRT 10.3.0/);
    expect(await attempt({ hardwareCompatibility: 'same_compute_capability' }, lib103)).toMatch(/needs TensorRT 10.9/);
    expect(await attempt({ precision: ['fp4'] }, trt('10.8.0'))).toBeNull();
  });

  it('stronglyTyped with a precision flag is refused (TensorRT rejects it)', async () => {
    expect(await attempt({ stronglyTyped: true, precision: ['int8'] }, sim())).toMatch(/stronglyTyped cannot be combined with precision "int8"/);
  });

  it('a build route needs 11.1, and one the library lists when it lists them', async () => {
    const route = '-conv_use_long_w=off -kgen:codegen:cuda_tile=2';
    const knobs = { buildRoutes: ['-conv_use_long_w=[on|off]', '-kgen:codegen:cuda_tile=[0|1|2|3]'] };
    expect(await attempt({ buildRoute: route }, sim('11.0.0'))).toMatch(/buildRoute needs TensorRT 11.1 or newer/);
    expect(await attempt({ buildRoute: route }, sim('11.1.0'))).toBeNull();
    expect(await attempt({ buildRoute: route }, trt('11.1.0', knobs))).toBeNull();
    expect(await attempt({ buildRoute: '-conv_use_long_w=[on|off]' }, trt('11.1.0', knobs))).toMatch(/buildRoute: knob -conv_use_long_w: .*pattern of allowed values, not a route/);
    expect(await attempt({ buildRoute: '-kgen:codegen:cuda_tile=7' }, trt('11.1.0', knobs))).toMatch(/knob -kgen:codegen:cuda_tile does not take "7"/);
  });

  it.each([
    [{ optLevel: 7 }, /optLevel/],
    [{ workspaceMiB: 2 ** 60 }, /workspaceMiB: at most 8589934592 MiB/],
    [{ tacticSharedMemoryKiB: 2 ** 60 }, /tacticSharedMemoryKiB: at most/],
    [{ maxAuxStreams: 2 ** 40 }, /maxAuxStreams: at most 2147483647/],
    [{ device: -1 }, /device/],
    [{ device: 1.5 }, /device/],
    [{ buildRoute: '' }, /buildRoute/],
  ])('numbers out of range are refused naming the field: %o', async (options, msg) => {
    expect(await attempt(options, sim())).toMatch(msg);
  });
});

describe('EventLog', () => {
  const ev = (seq: number, type: 'phase.step' | 'phase.finish' | 'log', id = 1): BuildEvent =>
    type === 'log'
      ? { v: 1, buildId: 'b', seq, t: seq, type, severity: 'info', message: `m${seq}` }
      : type === 'phase.step'
        ? { v: 1, buildId: 'b', seq, t: seq, type, id, step: seq, stepsDone: seq + 1 }
        : { v: 1, buildId: 'b', seq, t: seq, type, id, stepsDone: 3, early: false };

  it('keeps only the latest step per open phase and replays after a seq', () => {
    const log = new EventLog(1000);
    log.append(ev(1, 'log'));
    log.append(ev(2, 'phase.step', 1));
    log.append(ev(3, 'phase.step', 2));
    log.append(ev(4, 'phase.step', 1));
    log.append(ev(5, 'phase.finish', 1));
    log.append(ev(6, 'log'));
    expect(log.after(0).map((e) => e.seq)).toEqual([1, 3, 4, 5, 6]);
    expect(log.after(4).map((e) => e.seq)).toEqual([5, 6]);
  });

  it('coalesces a long run of steps of open phases down to the latest per phase', () => {
    const log = new EventLog(1000);
    for (let i = 1; i <= 100_000; i++) log.append(ev(i, 'phase.step', i % 10));
    const kept = log.after(-1);
    expect(kept.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, k) => 99_991 + k));
    expect(log.droppedThrough).toBe(-1); // nothing needed dropping: coalescing sufficed
  });

  it('stays bounded, dropping the oldest events', () => {
    const log = new EventLog(100);
    for (let i = 1; i <= 1000; i++) log.append(ev(i, 'log'));
    expect(log.size).toBeLessThanOrEqual(100);
    const kept = log.after(0);
    expect(kept[kept.length - 1].seq).toBe(1000);
    expect(log.droppedThrough).toBe(kept[0].seq - 1);
  });
});
