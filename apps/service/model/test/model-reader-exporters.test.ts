// Structures found in real exported models (Silero VAD, Caffe2 and Polygraphy test models) that
// the generator's plain CNN lacks, each rebuilt here from generated models.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import { afterAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../api.js';
import { inspectModel, readModel } from '../model-reader.js';
import { expectedSummary, makeModel, tempDir, writeModel } from '../../../../test/support/onnx-gen.js';

const dir = tempDir('tbs-reader-exp-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('weights inside If/Loop subgraphs', () => {
  it('count: a model whose weights all sit in If branches is not "8 B of weights"', async () => {
    const spec = { layers: 1, subgraphs: { bytes: 256 * 1024 } };
    const p = writeModel(path.join(dir, 'if.onnx'), spec);
    const exp = expectedSummary(spec);
    const { summary, layers } = await readModel(p);
    // Branch weights: 4 tensors of 256 KiB (then initializer, else Constant, two nested initializers).
    expect(exp.initializerBytes - expectedSummary({ layers: 1 }).initializerBytes).toBe(4 * 256 * 1024 + 1);
    expect(summary.initializerBytes).toBe(exp.initializerBytes);
    // Only the top-level graph's nodes are layers: the branches belong to their If node.
    expect(summary.nodeCount).toBe(exp.nodeCount);
    expect(summary.opHistogram).toEqual(exp.opHistogram);
    expect(layers.map((l) => l.name)).toEqual(exp.layerNames);
  });

  it('count branch tensors stored as external data, and check their location', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'ext-'));
    const spec = { layers: 0, subgraphs: { bytes: 4096 }, externalData: 'w.bin' };
    const p = writeModel(path.join(sub, 'if-ext.onnx'), spec);
    const s = await inspectModel(p);
    expect(s.externalData).toEqual({ files: ['w.bin'], bytes: fs.statSync(path.join(sub, 'w.bin')).size });
    expect(s.initializerBytes).toBe(expectedSummary(spec).initializerBytes);

    // A branch tensor pointing out of the model's folder is refused like a top-level one.
    const m = onnx.ModelProto.decode(makeModel(spec));
    const ifNode = (m.graph as onnx.GraphProto).node.find((n) => n.opType === 'If') as onnx.NodeProto;
    const then = (ifNode.attribute.find((a) => a.name === 'then_branch') as onnx.AttributeProto).g as onnx.GraphProto;
    const entries = (then.initializer[0] as onnx.TensorProto).externalData;
    (entries.find((e) => e.key === 'location') as onnx.StringStringEntryProto).value = '../outside.bin';
    const bad = path.join(sub, 'if-escape.onnx');
    fs.writeFileSync(bad, onnx.ModelProto.encode(m).finish());
    const err = await inspectModel(bad).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).message).toMatch(/initializer "then_w" has an invalid external data location "\.\.\/outside\.bin"/);
  });

  it('refuses subgraphs nested absurdly deep, with a clear message', async () => {
    let g: onnx.IGraphProto = { name: 'leaf', node: [{ opType: 'Identity', input: ['c'], output: ['o'] }] };
    for (let i = 0; i < 200; i++) {
      g = { name: `g${i}`, node: [{ opType: 'If', input: ['c'], output: ['o'], attribute: [{ name: 'then_branch', g, type: onnx.AttributeProto.AttributeType.GRAPH }] }] };
    }
    const p = path.join(dir, 'deep.onnx');
    fs.writeFileSync(p, onnx.ModelProto.encode({ irVersion: 8, opsetImport: [{ version: 17 }], graph: g }).finish());
    const err = await inspectModel(p).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).message).toMatch(/subgraphs nested more than \d+ deep/);
  });
});

describe('negative dimensions', () => {
  // Caffe2 and early PyTorch exporters write -1 for a dynamic dimension; TensorRT's ONNX parser
  // reads any negative dim_value as dynamic, so the model builds and inspect must not refuse it.
  it.each([[-1], [-3]])('dim_value %d is a dynamic dimension "?"', async (dim) => {
    const p = writeModel(path.join(dir, `neg${-dim}.onnx`), { inputs: [{ name: 'data', shape: [dim, 3, 224, 224] }] });
    const s = await inspectModel(p);
    expect(s.inputs[0]).toEqual({ name: 'data', elemType: 'float32', shape: ['?', 3, 224, 224] });
    expect(s.outputs[0].shape).toEqual(['?', 10]);
    expect(s.dynamicInputs).toEqual([{ name: 'data', dims: ['?'] }]);
  });
});

describe('typed data fields, counted as onnx.proto lays them out', () => {
  // Quantizers write small tensors into the typed fields rather than raw_data: int4/uint4 pack
  // two elements into each int32_data entry (int2/uint2 four), uint32 goes to uint64_data.
  const DT = onnx.TensorProto.DataType;
  it.each([
    ['uint32 in uint64_data', { dataType: DT.UINT32, dims: [1000], uint64Data: new Array(1000).fill(7) }, 4000],
    ['int4 in int32_data', { dataType: 22, dims: [1000], int32Data: new Array(500).fill(0x21) }, 500],
    ['uint4 in int32_data, odd count', { dataType: 21, dims: [999], int32Data: new Array(500).fill(0x21) }, 500],
    ['int2 in int32_data', { dataType: 26, dims: [1000], int32Data: new Array(250).fill(0x1b) }, 250],
    ['float16 in int32_data', { dataType: DT.FLOAT16, dims: [1000], int32Data: new Array(1000).fill(0x3c00) }, 2000],
    ['float8e8m0 in int32_data', { dataType: 24, dims: [1000], int32Data: new Array(1000).fill(127) }, 1000],
  ] as Array<[string, onnx.ITensorProto, number]>)('%s', async (name, tensor, bytes) => {
    const m = onnx.ModelProto.decode(makeModel({ layers: 0 }));
    (m.graph as onnx.GraphProto).initializer.push(onnx.TensorProto.create({ name: 'q', ...tensor }));
    const p = path.join(dir, `typed-${name.replace(/\W+/g, '_')}.onnx`);
    fs.writeFileSync(p, onnx.ModelProto.encode(m).finish());
    expect((await inspectModel(p)).initializerBytes).toBe(expectedSummary({ layers: 0 }).initializerBytes + bytes);
  });

  it('names the element types newer than the bundled onnx.proto (float8e8m0, uint2, int2)', async () => {
    const p = writeModel(path.join(dir, 'new-types.onnx'), {
      inputs: [
        { name: 'input', shape: [1, 3, 224, 224] },
        { name: 'scale', shape: [4], elemType: 24 },
        { name: 'u2', shape: [8], elemType: 25 },
        { name: 'i2', shape: [8], elemType: 26 },
      ],
    });
    expect((await inspectModel(p)).inputs.slice(1).map((i) => i.elemType)).toEqual(['float8e8m0', 'uint2', 'int2']);
  });

  it('external int2 weights without a declared length take a quarter byte each', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'ext2-'));
    const m = onnx.ModelProto.decode(makeModel({ layers: 0 }));
    (m.graph as onnx.GraphProto).initializer.push(
      onnx.TensorProto.create({ name: 'w2', dataType: 26, dims: [1001], dataLocation: 1, externalData: [{ key: 'location', value: 'w2.bin' }] }),
    );
    const p = path.join(sub, 'ext2.onnx');
    fs.writeFileSync(p, onnx.ModelProto.encode(m).finish());
    expect((await inspectModel(p)).externalData).toEqual({ files: ['w2.bin'], bytes: 251 });
  });
});
