import { describe, expect, it } from 'vitest';
import type { ModelSummary } from '../../shared/protocol.js';
import { DEFAULT_FORM, formToOptions, shapeFieldsFor, type FormState } from '../lib/options-form.js';

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

const form = (over: Partial<FormState>): FormState => ({ ...DEFAULT_FORM, shapes: shapeFieldsFor(model, {}), ...over });
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
