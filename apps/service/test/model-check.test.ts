// The model checker through the model reader (the one place every surface reads models): each
// class of invalid model is a bad_model error naming the node or tensor; valid variations
// (custom-domain operators, old exporters' initializers among the inputs, If bodies using outer
// names, packed and typed data, external data) are not refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INVALID_MODELS, writeInvalidModel } from '../../../test/support/invalid-models.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { ServiceError } from '../api.js';
import { readModel } from '../model-reader.js';
import opsData from '../onnx-ops.json';

const dir = tempDir('tbs-model-check-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('invalid models are refused before any build, naming what is wrong', () => {
  for (const c of INVALID_MODELS) {
    it(c.name, async () => {
      const p = writeInvalidModel(dir, c);
      const e = await readModel(p).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e, `${c.name} was accepted`).toBeInstanceOf(ServiceError);
      expect((e as ServiceError).code).toBe('bad_model');
      expect((e as ServiceError).message).toMatch(c.says);
      expect((e as ServiceError).message.startsWith(`${p} is not a valid ONNX model: `) || (e as ServiceError).message.startsWith(`${p}: `)).toBe(true);
    });
  }

  it('several problems are listed together, numbered, and capped', async () => {
    const p = writeModel(path.join(dir, 'many.onnx'), {
      layers: 1,
      mutate: (m) => {
        for (const n of m.graph!.node!) n.input = n.input!.map((x) => `${x}_missing`);
      },
    });
    const e = (await readModel(p).catch((err: unknown) => err)) as ServiceError;
    expect(e.message).toMatch(/^.* is not a valid ONNX model: \(1\) node "conv_0" #0 \(Conv\) reads "input_missing"/);
    expect(e.message).toMatch(/\(10\) .*; and \d+ more problems$/);
  });
});

describe('valid models pass', () => {
  it('custom-domain operators are let through and listed as needing a plugin', async () => {
    const p = writeModel(path.join(dir, 'custom.onnx'), {
      layers: 1,
      mutate: (m) => {
        const relu = m.graph!.node!.find((n) => n.opType === 'Relu')!;
        Object.assign(relu, { domain: 'com.example', opType: 'FancyRelu' });
        m.opsetImport!.push({ domain: 'com.example', version: 1 });
      },
    });
    const { summary } = await readModel(p);
    expect(summary.pluginOps).toEqual(['com.example.FancyRelu']);
    expect(summary.opHistogram['com.example.FancyRelu']).toBe(1);
  });

  it('a model with no custom operators has no pluginOps', async () => {
    const { summary } = await readModel(writeModel(path.join(dir, 'plain.onnx'), { layers: 2 }));
    expect(summary.pluginOps).toBeUndefined();
  });

  it('If bodies reading the outer graph, Constant nodes, float_data and external data', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'ext-'));
    const p = writeModel(path.join(sub, 'm.onnx'), { layers: 2, subgraphs: { bytes: 64 }, constant: { bytes: 64, as: 'float_data' }, externalData: 'w.bin' });
    await expect(readModel(p, { requireExternalData: true })).resolves.toBeDefined();
  });

  it('every opset ONNX defines, with an operator that existed in opset 1', async () => {
    const max = opsData.domains['ai.onnx'].maxOpset;
    for (const opset of [1, 7, 13, max]) {
      await expect(readModel(writeModel(path.join(dir, `opset-${opset}.onnx`), { layers: 1, opset })), `opset ${opset}`).resolves.toBeDefined();
    }
  });

  it('4-bit data packed two a byte in raw_data and int32_data', async () => {
    for (const [field, data] of [
      ['rawData', Buffer.alloc(4)],
      ['int32Data', [0, 0, 0, 0]],
    ] as const) {
      const p = writeModel(path.join(dir, `int4-${field}.onnx`), {
        layers: 1,
        mutate: (m) => {
          // 7 int4 elements: 4 bytes (or int32_data entries), the last half empty.
          m.graph!.initializer!.push({ name: 'q', dims: [7], dataType: 22, [field]: data });
        },
      });
      await expect(readModel(p), field).resolves.toBeDefined();
    }
  });
});
