import { describe, expect, it } from 'vitest';
import type { BackendInfo, ModelSummary } from '../../shared/protocol.js';
import {
  DEFAULT_FORM,
  formCapabilities,
  dimOf,
  formToOptions,
  isAbsolutePath,
  shapeFieldsFor,
  withDim,
  shapeValueInputs,
  validateShapeValues,
  type FormState,
} from '../lib/options-form.js';

const model: ModelSummary = {
  fileName: 'm.onnx',
  fileBytes: 100,
  irVersion: 8,
  opsetImports: [{ domain: '', version: 17 }],
  producer: { name: 'onnx-gen', version: '1.0' },
  graphName: 'g',
  inputs: [
    { name: 'input', elemType: 'float32', shape: ['batch', 3, 'height', 'width'] },
    { name: 'fixed', elemType: 'float32', shape: [1, 4] },
  ],
  outputs: [{ name: 'probs', elemType: 'float32', shape: ['batch', 10] }],
  nodeCount: 10,
  opHistogram: { Conv: 4 },
  initializerBytes: 10,
  externalData: { files: [], bytes: 0 },
  dynamicInputs: [{ name: 'input', dims: ['batch', 'height', 'width'] }],
};

const form = (over: Partial<FormState>): FormState => ({ ...DEFAULT_FORM, shapes: shapeFieldsFor(model), ...over });
const shapes = (min: string, opt: string, max: string) => ({ input: { min, opt, max } });

describe('formToOptions', () => {
  it('builds BuildOptions from a valid form', () => {
    const r = formToOptions(
      form({ optLevel: 4, workspaceMiB: '512', precision: ['fp16'], timingCache: ' /c/t.cache ', shapes: shapes('1x3x64x64', '4x3x224x224', '8 x 3 x 512 x 512') }),
      model,
      false,
    );
    expect(r).toEqual({
      ok: true,
      options: {
        backend: 'auto',
        // "Reuse an up-to-date engine" is on in a new form (docs/engines.md).
        reuse: true,
        optLevel: 4,
        workspaceMiB: 512,
        precision: ['fp16'],
        timingCache: '/c/t.cache',
        shapes: { input: { min: [1, 3, 64, 64], opt: [4, 3, 224, 224], max: [8, 3, 512, 512] } },
      },
    });
  });

  it.each([
    [shapes('', '1x3x2x2', '1x3x2x2'), /Input "input": min shape is empty/],
    [shapes('1x3x2', '1x3x2x2', '1x3x2x2'), /Input "input": min shape has 3 dimensions, the model declares 4/],
    [shapes('1x3x2x2', '1x4x2x2', '1x3x2x2'), /Input "input": opt dimension 1 is 4, but the model fixes it at 3/],
    [shapes('2x3x2x2', '1x3x2x2', '4x3x2x2'), /Input "input": dimension 0 must satisfy min ≤ opt ≤ max \(got 2, 1, 4\)/],
    [shapes('1x3x2x2', '1x3x0x2', '1x3x2x2'), /Input "input": opt shape "1x3x0x2" must be positive/],
  ])('rejects bad shapes before Build, naming the input', (s, msg) => {
    const r = formToOptions(form({ shapes: s }), model, false);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(msg);
  });

  it('rejects a bad workspace and bad simulator fields, but ignores simulator fields for TensorRT', () => {
    const ok = shapes('1x3x2x2', '1x3x2x2', '1x3x2x2');
    expect(formToOptions(form({ shapes: ok, workspaceMiB: '1.5' }), model, false)).toMatchObject({ ok: false, error: /Workspace/ });
    expect(formToOptions(form({ shapes: ok, simDuration: '-1' }), model, true)).toMatchObject({ ok: false, error: /duration/ });
    expect(formToOptions(form({ shapes: ok, simSeed: 'x' }), model, true)).toMatchObject({ ok: false, error: /Seed/ });
    const trt = formToOptions(form({ shapes: ok, simDuration: '-1', simFault: 'crash' }), model, false);
    expect(trt.ok && trt.options.simFault).toBeUndefined();
  });

  it('adds simulator options and the fault phase when the simulator is used', () => {
    const r = formToOptions(
      form({ shapes: shapes('1x3x2x2', '1x3x2x2', '1x3x2x2'), simDuration: '2.5', simSeed: '7', simFault: 'hang', simFaultPhase: 'Timing graph nodes' }),
      model,
      true,
    );
    expect(r).toMatchObject({ ok: true, options: { simDuration: 2.5, simSeed: 7, simFault: 'hang@Timing graph nodes' } });
  });

  it('drops precision flags when strongly typed', () => {
    const r = formToOptions(form({ stronglyTyped: true, precision: ['fp16'], shapes: shapes('1x3x2x2', '1x3x2x2', '1x3x2x2') }), model, false);
    expect(r.ok && r.options).toMatchObject({ stronglyTyped: true });
    expect(r.ok && r.options.precision).toBeUndefined();
  });
});

describe('options that depend on the TensorRT version', () => {
  const ok = shapes('1x3x2x2', '1x3x2x2', '1x3x2x2');
  const sim = (emulates?: string): BackendInfo => ({ name: 'simulated', available: true, version: 'sim-1', ...(emulates ? { emulates } : {}) });
  const trt = (version: string, available = true): BackendInfo => ({ name: 'tensorrt', available, version, library: { path: '/l.so', version } });

  it('takes the version of the backend a build would use (auto: TensorRT when available)', () => {
    expect(formCapabilities('auto', [trt('10.3.0'), sim('11.1.0')])?.version).toBe('10.3.0');
    expect(formCapabilities('auto', [trt('10.3.0', false), sim('11.1.0')])?.version).toBe('11.1.0');
    expect(formCapabilities('simulated', [trt('10.3.0'), sim()])?.version).toBe('10.16.0');
    expect(formCapabilities('tensorrt', [trt('10.3.0', false), sim()])).toBeUndefined();
    expect(formCapabilities('auto', [])).toBeUndefined();
  });

  it('TensorRT 11: no precision flags or stronglyTyped are sent (implied), even if ticked before', () => {
    const caps = formCapabilities('simulated', [sim('11.1.0')]);
    const r = formToOptions(form({ shapes: ok, precision: ['fp16'], stronglyTyped: true }), model, false, caps);
    expect(r.ok && r.options.precision).toBeUndefined();
    expect(r.ok && r.options.stronglyTyped).toBeUndefined();
    const v10 = formToOptions(form({ shapes: ok, precision: ['fp16'] }), model, false, formCapabilities('simulated', [sim()]));
    expect(v10.ok && v10.options.precision).toEqual(['fp16']);
  });

  it('sends a build route only on 11.1+, and the device when given', () => {
    const f = form({ shapes: ok, buildRoute: ' fast ', device: '1' });
    expect(formToOptions(f, model, false, formCapabilities('simulated', [sim('11.1.0')]))).toMatchObject({ ok: true, options: { buildRoute: 'fast', device: 1 } });
    const r = formToOptions(f, model, false, formCapabilities('simulated', [sim('11.0.0')]));
    expect(r.ok && r.options.buildRoute).toBeUndefined();
    expect(formToOptions(form({ shapes: ok, device: '-1' }), model, false)).toMatchObject({ ok: false, error: /Device must be a CUDA device index/ });
  });

  describe('shape-tensor inputs', () => {
    const st: ModelSummary = {
      ...model,
      inputs: [...model.inputs, { name: 'target', elemType: 'int64', shape: [2] }, { name: 'n', elemType: 'int32', shape: [] }],
      shapeTensorInputs: ['target', 'n'],
    };
    const values = (t: [string, string, string], n: [string, string, string]) => ({
      target: { min: t[0], opt: t[1], max: t[2] },
      n: { min: n[0], opt: n[1], max: n[2] },
    });

    it('asks for their values, one per element, and sends them as shapeValues', () => {
      expect(shapeValueInputs(st).map((i) => i.name)).toEqual(['target', 'n']);
      const r = formToOptions(form({ shapes: ok, shapeValues: values(['1x-1', '2x-1', '4x-1'], ['0', '1', '2']) }), st, false);
      expect(r).toMatchObject({ ok: true, options: { shapeValues: { target: { min: [1, -1], opt: [2, -1], max: [4, -1] }, n: { min: [0], opt: [1], max: [2] } } } });
    });

    it.each([
      [values(['', '1x1', '1x1'], ['1', '1', '1']), /Shape tensor "target": min values are empty/],
      [values(['1', '1x1', '1x1'], ['1', '1', '1']), /Shape tensor "target": min has 1 value, the input holds 2/],
      [values(['1x1', '1x1', '1x1'], ['3', '1', '5']), /Shape tensor "n": value 0 must satisfy min ≤ opt ≤ max \(got 3, 1, 5\)/],
      [values(['1xa', '1x1', '1x1'], ['1', '1', '1']), /"1xa" must be whole numbers/],
    ])('rejects bad values before Build, naming the input', (v, msg) => {
      expect(formToOptions(form({ shapes: ok, shapeValues: v }), st, false)).toMatchObject({ ok: false, error: msg });
    });

    it('validates values on their own: a bad entry names the input', () => {
      expect(validateShapeValues({ name: 'len', elemType: 'int64', shape: ['k'] }, { min: '1', opt: '1x2', max: '1x2' })).toMatchObject({
        ok: false,
        error: /"len": min, opt and max need the same number of values/,
      });
    });
  });
});

describe('shape fields pre-filled from the model', () => {
  it('fills the fixed dimensions and leaves the symbolic ones empty', () => {
    expect(shapeFieldsFor(model)).toEqual({ input: { min: 'x3xx', opt: 'x3xx', max: 'x3xx' } });
  });

  it('edits one dimension at a time, keeping the others', () => {
    const once = withDim('x3xx', 'x3xx', 4, 0, '8');
    expect(once).toBe('8x3xx');
    expect(withDim(once, 'x3xx', 4, 3, '224')).toBe('8x3xx224');
    expect(dimOf('8x3xx224', 4, 2)).toBe('');
    // A field of another rank (typed elsewhere) starts again from the model's template.
    expect(withDim('1x2', 'x3xx', 4, 2, '64')).toBe('x3x64x');
  });

  it('names the empty dimension, by position and symbol', () => {
    const r = formToOptions(form({ shapes: shapes('1x3xx2', '1x3x2x2', '1x3x2x2') }), model, false);
    expect(r).toEqual({ ok: false, error: 'Input "input": min of dimension 2 (height) is empty.' });
  });
});

describe('the options the CLI has', () => {
  const ok = shapes('1x3x2x2', '1x3x2x2', '1x3x2x2');
  it('maps TF32, verbosity, hardware compatibility, aux streams, tactic pools and the time budget', () => {
    const r = formToOptions(
      form({
        shapes: ok,
        tf32: false,
        profilingVerbosity: 'none',
        hardwareCompatibility: 'same_compute_capability',
        maxAuxStreams: '0',
        tacticSharedMemoryKiB: '64',
        tacticDramMiB: '512',
        timeBudget: '2.5',
      }),
      model,
      false,
    );
    expect(r).toEqual({
      ok: true,
      options: {
        backend: 'auto',
        reuse: true,
        optLevel: 3,
        tf32: false,
        profilingVerbosity: 'none',
        hardwareCompatibility: 'same_compute_capability',
        maxAuxStreams: 0,
        tacticSharedMemoryKiB: 64,
        tacticDramMiB: 512,
        shapes: { input: { min: [1, 3, 2, 2], opt: [1, 3, 2, 2], max: [1, 3, 2, 2] } },
      },
      timeBudgetSeconds: 2.5,
    });
  });

  it.each([
    [{ maxAuxStreams: '-1' }, /Max auxiliary streams must be a whole number ≥ 0, not "-1"/],
    [{ tacticSharedMemoryKiB: '0' }, /Tactic shared memory must be a positive whole number of KiB/],
    [{ tacticDramMiB: '1.5' }, /Tactic DRAM must be a positive whole number of MiB/],
    [{ timeBudget: '0' }, /Time budget must be a number of seconds above 0, not "0"/],
    [{ timingCache: 'cache.bin' }, /Timing cache file "cache\.bin" is a relative path/],
  ])('refuses %o, naming the field', (over, msg) => {
    expect(formToOptions(form({ shapes: ok, ...over }), model, false)).toMatchObject({ ok: false, error: msg });
  });

  it('takes absolute paths of either kind of machine the service may run on', () => {
    expect(['/var/c.cache', 'C:\\caches\\c.cache', 'd:/c.cache', '\\\\srv\\share\\c'].map(isAbsolutePath)).toEqual([true, true, true, true]);
    expect(['c.cache', './c.cache', '~/c.cache', 'C:c.cache'].map(isAbsolutePath)).toEqual([false, false, false, false]);
  });
});

describe('the pinned timing cache field', () => {
  const ok = shapes('1x3x8x8', '1x3x8x8', '1x3x8x8');
  it('sends an absolute path as pinnedCache; refuses a relative one, or one with a timing cache too, naming the field', () => {
    expect(formToOptions(form({ shapes: ok, pinnedCache: ' /c/pinned.cache ' }), model, true)).toMatchObject({ ok: true, options: { pinnedCache: '/c/pinned.cache' } });
    const relative = formToOptions(form({ shapes: ok, pinnedCache: 'pinned.cache' }), model, true);
    expect(relative.ok === false && relative.error).toMatch(/^Pinned timing cache "pinned\.cache" is a relative path/);
    const both = formToOptions(form({ shapes: ok, pinnedCache: '/c/pinned.cache', timingCache: '/c/model.cache' }), model, true);
    expect(both.ok === false && both.error).toMatch(/either a timing cache .* or a pinned timing cache/);
    const none = formToOptions(form({ shapes: ok }), model, true);
    expect(none.ok && none.options.pinnedCache).toBeUndefined();
  });
});
