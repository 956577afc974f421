// How much host memory a build will need (memory-estimate.ts): earlier builds first, then the
// simulator's own figure, then the rule of thumb from weights and shapes; a warning when that is
// more than is available.
import { describe, expect, it } from 'vitest';
import { estimateHostMemory, BUILDER_BASE_BYTES, WEIGHT_FACTOR, WORKER_BASE_BYTES } from '../memory-estimate.js';
import type { ModelSummary } from '../../shared/protocol.js';

const GiB = 2 ** 30;
const model = {
  fileName: 'm.onnx',
  fileBytes: 10,
  irVersion: 8,
  opsetImports: [],
  producer: { name: 'x', version: '1' },
  graphName: 'g',
  inputs: [{ name: 'x', elemType: 'float16', shape: ['batch', 3, 224, 224] }],
  outputs: [],
  nodeCount: 1,
  opHistogram: {},
  initializerBytes: 2 * GiB,
  externalData: { files: [], bytes: 0 },
  dynamicInputs: [{ name: 'x', dims: ['batch'] }],
} satisfies ModelSummary;

describe('memory estimate', () => {
  it('takes the largest peak of earlier builds of the same kind', () => {
    const e = estimateHostMemory({
      backend: 'tensorrt',
      options: { backend: 'auto' },
      model,
      profiles: [
        { durationMs: 1, marks: {}, peakHostBytes: 5 * GiB },
        { durationMs: 1, marks: {} },
        { durationMs: 1, marks: {}, peakHostBytes: 7 * GiB },
      ],
    });
    expect(e).toEqual({ peakHostBytes: 7 * GiB, basis: 'the peak of 2 earlier builds of this model with these options' });
  });

  it('uses the rule of thumb from the weights and the largest input shapes without history', () => {
    const e = estimateHostMemory({
      backend: 'tensorrt',
      options: { backend: 'auto', shapes: { x: { min: [1, 3, 224, 224], opt: [8, 3, 224, 224], max: [32, 3, 224, 224] } } },
      model,
      profiles: [],
    })!;
    const inputs = 32 * 3 * 224 * 224 * 2;
    expect(e.peakHostBytes).toBe(WEIGHT_FACTOR * 2 * GiB + inputs + BUILDER_BASE_BYTES);
    expect(e.basis).toMatch(/^a rule of thumb: 3 × the weights \(2 GiB\) \+ the largest inputs \(.*\) \+ 1 GiB for the builder; no earlier build to go by$/);
  });

  it('for the simulator: its simMemory plus the worker', () => {
    const e = estimateHostMemory({ backend: 'simulated', options: { backend: 'simulated', simMemory: GiB }, model, profiles: [] })!;
    expect(e.peakHostBytes).toBe(GiB + WORKER_BASE_BYTES);
    expect(e.basis).toBe("the simulator's simMemory (1 GiB) plus the worker");
  });

  it('warns when the estimate is above what is available, and not otherwise', () => {
    const over = estimateHostMemory({ backend: 'tensorrt', options: { backend: 'auto' }, model, profiles: [], availableBytes: 4 * GiB })!;
    expect(over.availableBytes).toBe(4 * GiB);
    expect(over.warning).toMatch(/^this build may need about 7(\.\d+)? GiB of host memory, more than the 4 GiB available: it may be killed by the out-of-memory killer/);
    const fine = estimateHostMemory({ backend: 'tensorrt', options: { backend: 'auto' }, model, profiles: [], availableBytes: 64 * GiB })!;
    expect(fine.warning).toBeUndefined();
    expect(estimateHostMemory({ backend: 'tensorrt', options: { backend: 'auto' }, profiles: [] })).toBeUndefined();
  });
});
