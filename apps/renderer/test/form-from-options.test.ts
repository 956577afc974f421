// "Rebuild" in the engines panel opens the form with the settings an engine was built with: the
// manifest's canonical options → optionsFromManifest → formFromOptions → the form → formToOptions
// must give back the same canonical options, for every option a manifest records (walked from the
// schema, so an option added to the manifest is walked here by itself), and the timing cache.
import { describe, expect, it } from 'vitest';
import { optionEntry } from '../../shared/build-options.js';
import { normalizeOptions, NormalizedOptions, optionsFromManifest, type EngineManifest } from '../../shared/engine-manifest.js';
import { BuildOptions, type ModelSummary } from '../../shared/protocol.js';
import { formFromOptions } from '../lib/form-from-options.js';
import { DEFAULT_FORM, formToOptions } from '../lib/options-form.js';

/** A model with the inputs the table's samples name: "x" (dynamic, rank 4) and "n" (a shape tensor of 2 values). */
const model: ModelSummary = {
  fileName: 'm.onnx',
  fileBytes: 100,
  irVersion: 8,
  opsetImports: [{ domain: '', version: 17 }],
  producer: { name: 'onnx-gen', version: '1.0' },
  graphName: 'g',
  inputs: [
    { name: 'x', elemType: 'float32', shape: ['batch', 3, 'h', 'w'] },
    { name: 'n', elemType: 'int64', shape: [2] },
  ],
  outputs: [{ name: 'y', elemType: 'float32', shape: ['batch', 10] }],
  nodeCount: 3,
  opHistogram: { Conv: 1 },
  initializerBytes: 10,
  externalData: { files: [], bytes: 0 },
  dynamicInputs: [{ name: 'x', dims: ['batch', 'h', 'w'] }],
  shapeTensorInputs: ['n'],
};

type Recorded = Pick<EngineManifest, 'backend' | 'options' | 'timingCache' | 'pinnedCache'>;
/** The model's inputs need shapes and values in every build; the samples' own are other ones. */
const NEEDED = { shapes: { x: { min: [1, 3, 4, 4], opt: [1, 3, 4, 4], max: [1, 3, 4, 4] } }, shapeValues: { n: { min: [1, 1], opt: [1, 1], max: [1, 1] } } };
const recorded = (extra: Record<string, unknown>, more: Partial<Recorded> = {}): Recorded => ({
  backend: 'simulated',
  options: normalizeOptions(BuildOptions.parse({ backend: 'simulated', ...NEEDED, ...extra })),
  timingCache: null,
  pinnedCache: null,
  ...more,
});

/** The options the form sends after Rebuild opened it with `m`'s settings. */
function rebuilt(m: Recorded) {
  const r = formToOptions(formFromOptions(optionsFromManifest(m)), model, true);
  if (!r.ok) throw new Error(r.error);
  return r.options;
}

describe('Rebuild opens the form with the settings the engine was built with', () => {
  it.each(Object.keys(NormalizedOptions.shape).map((k) => [k]))('%s comes back as it was recorded', (field) => {
    const m = recorded({ [field]: optionEntry(field).sample });
    expect(m.options).not.toEqual(recorded({}).options); // the sample is not a default
    expect(normalizeOptions(BuildOptions.parse(rebuilt(m)))).toEqual(m.options);
  });

  it('several at once, and the backend', () => {
    const m = recorded({ optLevel: 5, precision: ['fp16'], tf32: false, dynamicPlugins: ['/p/a.so', '/p/b.so'], maxGpuMemory: 8 * 2 ** 30, simSeed: 9 });
    const o = rebuilt(m);
    expect(o.backend).toBe('simulated');
    expect(normalizeOptions(BuildOptions.parse(o))).toEqual(m.options);
  });

  it('the timing cache the build read and updated', () => {
    const m = recorded({}, { timingCache: { path: '/c/model.cache', sha256Before: null, sha256After: null, hits: 0, misses: 1, entriesBefore: 0, entriesAfter: 1 } });
    expect(rebuilt(m).timingCache).toBe('/c/model.cache');
  });

  it('the timing cache a pinned build was pinned to', () => {
    const m = recorded({}, { pinnedCache: { path: '/c/pinned.cache', sha256: 'a'.repeat(64) } });
    const o = rebuilt(m);
    expect(o.pinnedCache).toBe('/c/pinned.cache');
    expect(o.timingCache).toBeUndefined();
  });

  it("leaves what was not recorded at the form's defaults", () => {
    const form = formFromOptions(optionsFromManifest(recorded({})));
    expect(form.shapes).toEqual({ x: { min: '1x3x4x4', opt: '1x3x4x4', max: '1x3x4x4' } });
    expect({ ...form, backend: DEFAULT_FORM.backend, shapes: {}, shapeValues: {} }).toEqual(DEFAULT_FORM);
  });
});
