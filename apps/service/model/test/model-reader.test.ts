import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ModelSummary } from '../../../shared/protocol.js';
import { readModel, inspectModel } from '../model-reader.js';
import { failure } from './refusal.js';
import { expectedSummary, tempDir, writeBadFile, writeModel } from '../../../../test/support/onnx-gen.js';

const dir = tempDir('tbs-reader-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('model reader', () => {
  it('summarizes a fixed-shape model', async () => {
    const spec = { layers: 5 };
    const p = writeModel(path.join(dir, 'fixed.onnx'), spec);
    const { summary, layers } = await readModel(p);
    const exp = expectedSummary(spec);
    expect(summary.irVersion).toBe(8);
    expect(summary.opsetImports).toEqual([{ domain: 'ai.onnx', version: 17 }]);
    expect(summary.producer).toEqual({ name: 'onnx-gen', version: '1.0' });
    expect(summary.graphName).toBe('test_graph');
    // flat_shape is declared as a graph input too (old exporters do that) but is an initializer.
    expect(summary.inputs).toEqual([{ name: 'input', elemType: 'float32', shape: [1, 3, 224, 224] }]);
    expect(summary.outputs).toEqual([{ name: 'probs', elemType: 'float32', shape: [1, 10] }]);
    expect(summary.nodeCount).toBe(exp.nodeCount);
    expect(summary.opHistogram).toEqual(exp.opHistogram);
    expect(summary.initializerBytes).toBe(exp.initializerBytes);
    expect(summary.dynamicInputs).toEqual([]);
    expect(summary.fileBytes).toBe(fs.statSync(p).size);
    expect(summary.externalData).toEqual({ files: [], bytes: 0 });
    expect(layers.map((l) => l.name)).toEqual(exp.layerNames);
    expect(layers[0]).toEqual({ name: 'conv_0', op: 'Conv' });
    // What surfaces send is exactly the protocol's ModelSummary (and small: no weights inside).
    expect(ModelSummary.parse(summary)).toEqual(summary);
    expect(JSON.stringify(summary).length).toBeLessThan(4096);
  });

  it('rejects a protobuf message that is not a model (no graph)', async () => {
    const p = path.join(dir, 'no-graph.onnx');
    fs.writeFileSync(p, onnx.ModelProto.encode({ irVersion: 8, producerName: 'x' }).finish());
    const err = await failure(p);
    expect(err.code).toBe('bad_model');
    expect(err.message).toMatch(/not an ONNX model: no graph/);
  });

  it('keeps symbolic dimensions by name and unknown ones as "?"', async () => {
    const p = writeModel(path.join(dir, 'dyn.onnx'), {
      dynamic: true,
      opset: 13,
      inputs: [
        { name: 'images', shape: ['batch', 3, 'height', 'width'] },
        { name: 'mask', shape: [null, 16], elemType: 'int64' },
        { name: 'scale', shape: [1], elemType: 'float16' },
      ],
    });
    const s = await inspectModel(p);
    expect(s.opsetImports).toEqual([{ domain: 'ai.onnx', version: 13 }]);
    expect(s.inputs).toEqual([
      { name: 'images', elemType: 'float32', shape: ['batch', 3, 'height', 'width'] },
      { name: 'mask', elemType: 'int64', shape: ['?', 16] },
      { name: 'scale', elemType: 'float16', shape: [1] },
    ]);
    expect(s.outputs[0].shape).toEqual(['batch', 10]);
    expect(s.dynamicInputs).toEqual([
      { name: 'images', dims: ['batch', 'height', 'width'] },
      { name: 'mask', dims: ['?'] },
    ]);
  });

  it('tells a tensor with no declared shape (rank unknown) from a scalar', async () => {
    const p = writeModel(path.join(dir, 'noshape.onnx'), {
      inputs: [
        { name: 'free', shape: null },
        { name: 'scalar', shape: [] },
      ],
    });
    const s = await inspectModel(p);
    expect(s.inputs).toEqual([
      { name: 'free', elemType: 'float32', shape: [], rankUnknown: true },
      { name: 'scalar', elemType: 'float32', shape: [] },
    ]);
    // Neither is dynamic: there is no dimension to give.
    expect(s.dynamicInputs).toEqual([]);
  });

  it('counts external data and requires its files only when building', async () => {
    const sub = fs.mkdirSync(path.join(dir, 'ext'), { recursive: true })!;
    const spec = { layers: 3, externalData: 'model.weights' };
    const p = writeModel(path.join(sub, 'ext.onnx'), spec);
    const s = await inspectModel(p);
    const dataBytes = fs.statSync(path.join(sub, 'model.weights')).size;
    expect(s.externalData).toEqual({ files: ['model.weights'], bytes: dataBytes });
    expect(s.initializerBytes).toBe(expectedSummary(spec).initializerBytes);
    // The model file itself holds none of the external weights.
    expect(s.fileBytes).toBeLessThan(s.initializerBytes - dataBytes + 4096);
    await readModel(p, { requireExternalData: true });
    fs.rmSync(path.join(sub, 'model.weights'));
    expect((await inspectModel(p)).externalData.files).toEqual(['model.weights']);
    const err = await failure(p, { requireExternalData: true });
    expect(err.code).toBe('bad_model');
    expect(err.message).toMatch(/external data file "model\.weights".*not found/);
  });

  it('names unnamed nodes <op>_<index>', async () => {
    const p = writeModel(path.join(dir, 'unnamed.onnx'), { layers: 2, unnamedNodes: true });
    const { layers } = await readModel(p);
    expect(layers.slice(0, 3)).toEqual([
      { name: 'Conv_0', op: 'Conv' },
      { name: 'Relu_1', op: 'Relu' },
      { name: 'Conv_2', op: 'Conv' },
    ]);
  });

  it('reads paths with spaces and non-ASCII characters', async () => {
    const sub = path.join(dir, 'mödels äö 模型');
    fs.mkdirSync(sub);
    const p = writeModel(path.join(sub, 'my model ü.onnx'), { layers: 1 });
    const s = await inspectModel(p);
    expect(s.fileName).toBe('my model ü.onnx');
    expect(s.path).toBe(p);
  });

  it.each([
    ['empty', /is empty \(0 bytes\)/],
    ['random', /not a valid ONNX model|not an ONNX model/],
    ['truncated', /truncated|not an ONNX model/],
    ['text', /not a valid ONNX model|not an ONNX model/],
  ] as const)('rejects a %s file as bad_model', async (kind, msg) => {
    const p = writeBadFile(path.join(dir, `bad-${kind}.onnx`), kind);
    const err = await failure(p);
    expect(err.code).toBe('bad_model');
    expect(err.message).toMatch(msg);
    expect(err.message).toContain(p);
  });

  it('rejects a directory and a missing path', async () => {
    const d = path.join(dir, 'a-dir.onnx');
    fs.mkdirSync(d);
    const e1 = await failure(d);
    expect(e1.code).toBe('bad_model');
    expect(e1.message).toMatch(/is a directory/);
    const e2 = await failure(path.join(dir, 'nope', 'missing.onnx'));
    expect(e2.code).toBe('not_found');
    expect(e2.message).toMatch(/not found/);
  });

  it.each([[2 ** 40], [2 ** 31]])('rejects absurd dimension %d and names the input', async (dim) => {
    const p = writeModel(path.join(dir, `absurd${dim}.onnx`), {
      inputs: [{ name: 'pixels', shape: [1, 3, dim, 224] }],
    });
    const err = await failure(p);
    expect(err.code).toBe('bad_model');
    expect(err.message).toContain('input "pixels"');
    expect(err.message).toContain(`dimension 2: ${dim}`);
  });

  it('never reads the weights: a 64 MiB model costs a window or two of reads', async () => {
    const spec = { layers: 8, weightBytes: 64 * 2 ** 20 };
    const p = writeModel(path.join(dir, 'big.onnx'), spec);
    let bytesRead = 0;
    const open = fs.promises.open;
    const spy = vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
      const fh = await open(...args);
      const read = fh.read.bind(fh) as (...a: unknown[]) => Promise<fs.promises.FileReadResult<Buffer>>;
      (fh as { read: unknown }).read = async (...a: unknown[]) => {
        const r = await read(...a);
        bytesRead += r.bytesRead;
        return r;
      };
      return fh;
    });
    try {
      const { summary } = await readModel(p);
      expect(summary.initializerBytes).toBe(expectedSummary(spec).initializerBytes);
    } finally {
      spy.mockRestore();
    }
    expect(fs.statSync(p).size).toBeGreaterThan(64 * 2 ** 20);
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThan(3 * 2 ** 20);
  });
});
