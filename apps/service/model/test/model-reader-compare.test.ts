// The walking reader against the whole-file protobufjs decode it replaced, on generated models of
// every kind the generator makes: the same ModelSummary and LayerInfo, field for field.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ModelSpec, tempDir, writeModel } from '../../../../test/support/onnx-gen.js';
import { readModel } from '../model-reader.js';
import { readModelWhole } from './reference-reader.js';

const dir = tempDir('tbs-reader-cmp-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const specs: Array<[string, ModelSpec]> = [
  ['default', {}],
  ['no layers', { layers: 0 }],
  ['many layers', { layers: 400 }],
  ['dynamic', { dynamic: true, opset: 13, producer: { name: 'pytorch', version: '2.4' }, graphName: 'g' }],
  ['unnamed nodes', { layers: 3, unnamedNodes: true }],
  [
    'odd inputs',
    {
      inputs: [
        { name: 'a', shape: ['n', null, 7], elemType: 'float16' },
        { name: 'b', shape: [], elemType: 'int64' },
      ],
    },
  ],
  ['big head, bigger than a window', { layers: 2, weightBytes: 5 * 2 ** 20 }],
  ['wide float_data bias', { classes: 4000 }],
  ['external data', { layers: 3, externalData: 'w.bin' }],
  ['external data, big', { layers: 2, weightBytes: 3 * 2 ** 20, externalData: 'big.bin' }],
  ['constant raw_data', { constant: { bytes: 3 * 2 ** 20 } }],
  ['constant float_data', { constant: { bytes: 4000, as: 'float_data' } }],
  ['weights in If branches', { layers: 2, subgraphs: { bytes: 2 * 2 ** 20 } }],
  ['If branch weights as external data', { layers: 2, subgraphs: { bytes: 10_000 }, externalData: 'w.bin' }],
  ['negative dimensions', { inputs: [{ name: 'data', shape: [-1, 3, 224, -7] }] }],
  ['extra nodes', { extraNodes: [{ op: 'Identity', inputs: ['probs'], outputs: ['p2'] }] }],
];

describe('walking reader = whole-file reader', () => {
  it.each(specs)('%s', async (name, spec) => {
    const sub = fs.mkdtempSync(path.join(dir, 'm-'));
    const p = writeModel(path.join(sub, `${name.replace(/\W+/g, '_')}.onnx`), spec);
    const whole = await readModelWhole(p);
    const walked = await readModel(p);
    // shapeTensorInputs is new (the old reader never had it); its own tests hold it.
    const { shapeTensorInputs, ...rest } = walked.summary;
    expect(shapeTensorInputs).toEqual([]);
    expect(rest).toEqual(whole.summary);
    expect(walked.layers).toEqual(whole.layers);
    expect(walked.summary.initializerBytes).toBeGreaterThan(0);
  });
});
