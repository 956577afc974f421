// Layer information has one format on disk, IEngineInspector's JSON: what the TensorRT adapter
// saves as TensorRT returns it, what the simulated backend writes, and what compare reads.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/onnx-gen.js';
import { normalizeOptions } from '../../shared/engine-manifest.js';
import { readLayerInfo, simulatedLayerInformation } from '../layer-info.js';

const dir = tempDir('tbs-layer-info-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, value: unknown) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
};

describe('layer information (IEngineInspector JSON)', () => {
  it('reads names-only layers (profiling verbosity below detailed) as bare names', () => {
    expect(readLayerInfo(write('names.json', { Layers: ['conv1', 'relu1'], Bindings: ['x', 'y'] }))).toEqual([{ name: 'conv1' }, { name: 'relu1' }]);
  });

  it('reads detailed layers: type, tactic, the first output format and the precision it names', () => {
    const file = write('detailed.json', {
      Layers: [
        {
          Name: 'conv1',
          LayerType: 'CaskConvolution',
          Inputs: [{ Name: 'x', 'Format/Datatype': 'Row major linear FP32' }],
          Outputs: [{ Name: 'c', 'Format/Datatype': 'Channel major FP16 format where channel % 8 == 0' }],
          TacticName: 'sm90_xmma_fprop',
          TacticValue: '0x7',
        },
        { Name: 'q', LayerType: 'Scale', Outputs: [{ Name: 'q', 'Format/Datatype': 'Channel major INT8 format where channel % 32 == 0' }] },
        { Name: 'shape_only' },
      ],
    });
    expect(readLayerInfo(file)).toEqual([
      { name: 'conv1', type: 'CaskConvolution', tactic: 'sm90_xmma_fprop', format: 'Channel major FP16 format where channel % 8 == 0', precision: 'fp16' },
      { name: 'q', type: 'Scale', format: 'Channel major INT8 format where channel % 32 == 0', precision: 'int8' },
      { name: 'shape_only' },
    ]);
  });

  it('anything else is no layer information: another shape, not JSON, no file', () => {
    expect(readLayerInfo(write('old.json', { source: 'simulated', layers: [{ name: 'a' }] }))).toBeUndefined();
    expect(readLayerInfo(write('bad.json', '{"Layers": ['))).toBeUndefined();
    expect(readLayerInfo(path.join(dir, 'missing.json'))).toBeUndefined();
  });

  it('the simulated backend writes what real exports hold: TensorRT layer types, fused activations, reformats at FP32 edges', () => {
    const layers = [
      { name: 'conv_0', op: 'Conv' },
      { name: 'relu_1', op: 'Relu' },
      { name: 'flatten', op: 'Flatten' },
      { name: 'fc', op: 'Gemm' },
    ];
    const fp16 = simulatedLayerInformation(layers, normalizeOptions({ precision: ['fp16'] }), ['input', 'output']);
    expect(fp16.Bindings).toEqual(['input', 'output']);
    const read = readLayerInfo(write('sim.json', fp16))!;
    expect(read.map((l) => [l.name, l.type, l.precision])).toEqual([
      ['Reformatting CopyNode for Input Tensor 0 to conv_0 + relu_1', 'Reformat', 'fp16'],
      ['conv_0 + relu_1', 'CaskConvolution', 'fp16'],
      ['flatten', 'Shuffle', 'fp32'],
      ['fc', 'CaskGemmConvolution', 'fp16'],
      ['Reformatting CopyNode for Output Tensor 0 to fc', 'Reformat', 'fp32'],
    ]);
    expect(read[1].tactic).toMatch(/^sim_conv_fp16_v\d$/);
    // Each layer reads what the one before it wrote, in that layer's format.
    for (let i = 1; i < fp16.Layers.length; i++) expect(fp16.Layers[i]!.Inputs[0]).toEqual(fp16.Layers[i - 1]!.Outputs[0]);
    const fp32 = readLayerInfo(write('sim32.json', simulatedLayerInformation(layers, normalizeOptions({}), [])))!;
    expect(fp32.map((l) => l.precision)).toEqual(['fp32', 'fp32', 'fp32']);
  });
});
