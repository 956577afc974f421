// Hostile and unusual models: external data that escapes through symlinks, numbers beyond what a
// double holds, text files, Constant-node weights, shape-tensor inputs, single files over 2 GiB.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import { afterAll, describe, expect, it } from 'vitest';
import { expectedSummary, tempDir, writeLargeModel, writeModel } from '../../../../test/support/onnx-gen.js';
import { readModel } from '../model-reader.js';
import { failure } from './refusal.js';

const dir = tempDir('tbs-reader-hard-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function sub(name: string): string {
  return fs.mkdirSync(path.join(dir, name), { recursive: true })!;
}

describe('external data stays inside the model folder (real paths)', () => {
  const secret = path.join(dir, 'secret.txt');
  fs.writeFileSync(secret, 'root:x:0:0\n'.repeat(1000));

  it('refuses a data file that is a symlink to a file outside', async () => {
    const d = sub('file-link');
    const m = writeModel(path.join(d, 'm.onnx'), { layers: 2, externalData: 'w.bin' });
    fs.rmSync(path.join(d, 'w.bin'));
    fs.symlinkSync(secret, path.join(d, 'w.bin'));
    for (const opts of [{}, { requireExternalData: true }]) {
      const err = await failure(m, opts);
      expect(err.code).toBe('bad_model');
      expect(err.message).toContain('initializer "conv0.weight"');
      expect(err.message).toContain('"w.bin"');
      expect(err.message).toContain(`resolves (through a symbolic link) to ${fs.realpathSync(secret)}`);
    }
  });

  it('refuses a data file under a symlinked folder that points outside', async () => {
    const outside = sub('outside-data');
    const d = sub('dir-link');
    const m = writeModel(path.join(d, 'm.onnx'), { layers: 2, externalData: 'w.bin' });
    fs.renameSync(path.join(d, 'w.bin'), path.join(outside, 'w.bin'));
    fs.symlinkSync(outside, path.join(d, 'data'));
    // Point the model at data/w.bin: rewrite each external location.
    const model = onnx.ModelProto.decode(fs.readFileSync(m));
    for (const t of model.graph!.initializer) for (const kv of t.externalData) if (kv.key === 'location') kv.value = 'data/w.bin';
    fs.writeFileSync(m, onnx.ModelProto.encode(model).finish());
    const err = await failure(m, { requireExternalData: true });
    expect(err.message).toMatch(/initializer "conv0.weight" has an invalid external data location "data\/w\.bin": it resolves .* outside the model's folder/);
  });

  it('accepts symlinks that stay inside, and a model folder that is itself reached through a link', async () => {
    const d = sub('inside-link');
    const m = writeModel(path.join(d, 'm.onnx'), { layers: 2, externalData: 'w.bin' });
    fs.renameSync(path.join(d, 'w.bin'), path.join(d, 'real.bin'));
    fs.symlinkSync('real.bin', path.join(d, 'w.bin'));
    const viaLink = path.join(dir, 'linked-folder');
    fs.symlinkSync(d, viaLink);
    const { summary } = await readModel(path.join(viaLink, 'm.onnx'), { requireExternalData: true });
    expect(summary.externalData.files).toEqual(['w.bin']);
    expect((await readModel(m, { requireExternalData: true })).summary.externalData.bytes).toBe(fs.statSync(path.join(d, 'real.bin')).size);
  });

  it.each([
    ['../secret.txt', /leaves the model's folder/],
    ['a/../../secret.txt', /leaves the model's folder/],
    ['/etc/passwd', /absolute path/],
  ])('refuses location %s by its text', async (location, msg) => {
    const d = sub(`text-${location.replace(/\W+/g, '_')}`);
    const m = writeModel(path.join(d, 'm.onnx'), { layers: 1, externalData: 'w.bin' });
    const model = onnx.ModelProto.decode(fs.readFileSync(m));
    for (const t of model.graph!.initializer) for (const kv of t.externalData) if (kv.key === 'location') kv.value = location;
    fs.writeFileSync(m, onnx.ModelProto.encode(model).finish());
    const err = await failure(m);
    expect(err.message).toMatch(msg);
    expect(err.message).toContain(`initializer "conv0.weight"`);
    expect(err.message).toContain(`"${location}"`);
  });
});

describe('numbers beyond 2^53 are errors that name the field, never rounded', () => {
  it('opset 2^63-1', async () => {
    const p = writeModel(path.join(dir, 'opset-max.onnx'), { opset: '9223372036854775807' });
    const err = await failure(p);
    expect(err.code).toBe('bad_model');
    expect(err.message).toContain('opset_import "ai.onnx" version is 9223372036854775807');
  });

  it('ir_version 2^63-1', async () => {
    const p = writeModel(path.join(dir, 'ir-max.onnx'), { irVersion: 9223372036854775807n });
    expect((await failure(p)).message).toContain('implausible ir_version 9223372036854775807');
  });

  it('a 20-digit external data length', async () => {
    const d = sub('ext-len');
    const p = writeModel(path.join(d, 'm.onnx'), { layers: 1, externalData: 'w.bin', externalLength: '12345678901234567890' });
    const err = await failure(p);
    expect(err.message).toContain(`initializer "conv0.weight"'s external data length is 12345678901234567890`);
  });

  it('an external data length that is not a number', async () => {
    const d = sub('ext-len-nan');
    const p = writeModel(path.join(d, 'm.onnx'), { layers: 1, externalData: 'w.bin', externalLength: '12e3' });
    expect((await failure(p)).message).toContain('invalid external data length "12e3"');
  });

  it('an input dimension of 2^62', async () => {
    const p = writeModel(path.join(dir, 'dim-big.onnx'), { inputs: [{ name: 'x', shape: [1, 2n ** 62n] }] });
    expect((await failure(p)).message).toContain(`input "x" has an absurd dimension 1: ${2n ** 62n}`);
  });
});

describe('not a model', () => {
  it('a plain-text file is "not an ONNX model", whatever its first letter', async () => {
    // '2' and 'B' are valid protobuf tags (field 6 / field 8, length-delimited): text can start like a model.
    for (const text of ['This is not a model\n', '2 apples and 3 pears, a list of fruit that is long enough\n', 'B'.repeat(300), '# README\n\nfür dich\n']) {
      const p = path.join(dir, 'text.onnx');
      fs.writeFileSync(p, text);
      const err = await failure(p);
      expect(err.message).toMatch(/is not an ONNX model/);
      expect(err.message).not.toMatch(/truncated/);
    }
  });

  it.each([
    ['PNG', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')],
    ['zip (a PyTorch checkpoint)', Buffer.concat([Buffer.from('504b0304', 'hex'), Buffer.alloc(200, 1)])],
    ['ELF', Buffer.concat([Buffer.from('7f454c46020101', 'hex'), Buffer.alloc(100)])],
  ])('a %s file is "not an ONNX model" from its first bytes', async (_kind, bytes) => {
    const p = path.join(dir, 'binary.onnx');
    fs.writeFileSync(p, bytes);
    const err = await failure(p);
    expect(err.message).toMatch(/is not an ONNX model: its first bytes are not an ONNX ModelProto/);
  });

  it('a model cut short is still called truncated', async () => {
    const full = fs.readFileSync(writeModel(path.join(dir, 'full.onnx'), { layers: 6 }));
    const p = path.join(dir, 'cut.onnx');
    fs.writeFileSync(p, full.subarray(0, Math.floor(full.length / 2)));
    expect((await failure(p)).message).toMatch(/truncated/);
  });
});

describe('weights and shape tensors', () => {
  it('counts Constant-node tensors as weights (raw_data and float_data)', async () => {
    for (const constant of [{ bytes: 40_000 }, { bytes: 4000, as: 'float_data' as const }]) {
      const spec = { layers: 2, constant };
      const p = writeModel(path.join(dir, `const-${constant.bytes}.onnx`), spec);
      const { summary } = await readModel(p);
      const without = expectedSummary({ layers: 2 }).initializerBytes;
      expect(summary.initializerBytes).toBe(without + constant.bytes);
      expect(summary.opHistogram.Constant).toBe(1);
    }
  });

  it('a model whose weights are all Constants does not say 0 B', async () => {
    const p = writeModel(path.join(dir, 'only-const.onnx'), { layers: 0, constant: { bytes: 1024 } });
    const { summary } = await readModel(p);
    expect(summary.initializerBytes).toBe(expectedSummary({ layers: 0, constant: { bytes: 1024 } }).initializerBytes);
    expect(summary.initializerBytes).toBeGreaterThanOrEqual(1024);
  });

  it('lists int inputs of rank 0/1 that feed a shape operand, and only those', async () => {
    const p = writeModel(path.join(dir, 'shape-in.onnx'), {
      inputs: [
        { name: 'input', shape: ['batch', 3, 224, 224] },
        { name: 'target', shape: [2], elemType: 'int64' },
        { name: 'k', shape: [], elemType: 'int32' },
        { name: 'ids', shape: [4], elemType: 'int64' },
        { name: 'starts2d', shape: [1, 2], elemType: 'int64' },
        { name: 'fshape', shape: [2] },
        { name: 'reps', shape: [4], elemType: 'int64' },
      ],
      extraNodes: [
        { op: 'Reshape', inputs: ['input', 'target'], outputs: ['r'] },
        { op: 'TopK', inputs: ['r', 'k'], outputs: ['tv', 'ti'] },
        { op: 'Gather', inputs: ['input', 'ids'], outputs: ['g'] },
        { op: 'Slice', inputs: ['input', 'starts2d', 'starts2d'], outputs: ['s'] },
        { op: 'Reshape', inputs: ['input', 'fshape'], outputs: ['r2'] },
        { op: 'Tile', inputs: ['input', 'reps'], outputs: ['t'] },
      ],
    });
    const { summary } = await readModel(p);
    expect(summary.shapeTensorInputs).toEqual(['target', 'k', 'reps']);
  });
});

describe('large single files', () => {
  it('reads a 2.5 GiB single-file model (sparse) without reading its weights', async () => {
    const gen = writeLargeModel(path.join(dir, 'huge.onnx'), 2.5 * 2 ** 30, { sparse: true });
    const before = process.memoryUsage().rss;
    const { summary } = await readModel(gen.path);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 2 ** 20);
    expect(summary.fileBytes).toBe(fs.statSync(gen.path).size);
    expect(summary.fileBytes).toBeGreaterThan(2.5 * 2 ** 30);
    expect(summary.initializerBytes).toBe(gen.initializerBytes);
    expect(summary.nodeCount).toBe(gen.nodeCount);
    expect(summary.inputs.map((i) => i.name)).toEqual(gen.inputs);
    // TensorRT's parser cannot read it: a build says so before starting.
    const err = await failure(gen.path, { requireExternalData: true });
    expect(err.message).toMatch(/reads at most 2 GiB .* external data/);
    fs.rmSync(gen.path);
  });
});
