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

  it("the simulated backend writes the inspector's shape, and it reads back with the precision the options give", () => {
    const layers = [
      { name: 'conv_0', op: 'Conv' },
      { name: 'flatten', op: 'Flatten' },
    ];
    const fp16 = simulatedLayerInformation(layers, normalizeOptions({ precision: ['fp16'] }), ['input', 'output']);
    expect(fp16.Bindings).toEqual(['input', 'output']);
    const read = readLayerInfo(write('sim.json', fp16))!;
    expect(read.map((l) => [l.name, l.type, l.precision])).toEqual([
      ['conv_0', 'Conv', 'fp16'],
      ['flatten', 'Flatten', 'fp32'],
    ]);
    expect(read[0].tactic).toMatch(/^sim_conv_fp16_v\d$/);
    const fp32 = readLayerInfo(write('sim32.json', simulatedLayerInformation(layers, normalizeOptions({}), [])))!;
    expect(fp32[0].precision).toBe('fp32');
  });
});
