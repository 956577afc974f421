import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BackendInfo, BuildEvent } from '../../shared/protocol.js';
import { ServiceError } from '../api.js';
import { checkShapes, resolveBackend, validateBuild } from '../build-validation.js';
import { EventLog } from '../event-log.js';
import { inspectModel } from '../model-reader.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const dir = tempDir('tbs-validate-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const simOnly: BackendInfo[] = [
  { name: 'tensorrt', available: false, reason: 'libnvinfer.so.10 not found' },
  { name: 'simulated', available: true, version: 'sim-1' },
];

function thrown(f: () => unknown): ServiceError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected an error');
}

describe('shapes validation', async () => {
  const p = writeModel(path.join(dir, 'two-dyn.onnx'), {
    inputs: [
      { name: 'images', shape: ['batch', 3, 'height', 'width'] },
      { name: 'tokens', shape: ['batch', 'seq'], elemType: 'int64' },
    ],
  });
  const summary = await inspectModel(p);

  it('names every dynamic input without shapes, its symbolic dims and the trtexec syntax', () => {
    const e = thrown(() => checkShapes(summary, { images: { min: [1, 3, 224, 224], opt: [1, 3, 224, 224], max: [1, 3, 224, 224] } }));
    expect(e.code).toBe('bad_input');
    expect(e.message).toContain('"tokens" [batch, seq] (symbolic: batch, seq)');
    expect(e.message).not.toContain('"images" [');
    expect(e.message).toContain('--shapes tokens:1x224/4x224/8x224');
    const both = thrown(() => checkShapes(summary, undefined));
    expect(both.message).toMatch(/dynamic inputs without shapes: "images" .*; "tokens"/);
  });

  it('rejects unknown inputs, wrong rank, changed fixed dims and min>opt', () => {
    const ok = { min: [1, 16], opt: [4, 32], max: [8, 64] };
    const img = { min: [1, 3, 224, 224], opt: [2, 3, 320, 320], max: [4, 3, 640, 640] };
    expect(() => checkShapes(summary, { images: img, tokens: ok })).not.toThrow();
    expect(thrown(() => checkShapes(summary, { images: img, tokens: ok, mask: ok })).message).toMatch(/unknown input "mask".*"images", "tokens"/);
    expect(thrown(() => checkShapes(summary, { images: { min: [1, 3, 224], opt: [1, 3, 224], max: [1, 3, 224] }, tokens: ok })).message).toMatch(
      /"images" have the wrong rank: min 1x3x224 has 3 dims.*the input has 4/,
    );
    expect(thrown(() => checkShapes(summary, { images: { ...img, max: [4, 4, 640, 640] }, tokens: ok })).message).toMatch(
      /"images" dimension 1 is fixed at 3 in the model, but the shapes give 3\/3\/4/,
    );
    expect(thrown(() => checkShapes(summary, { images: img, tokens: { min: [4, 16], opt: [1, 32], max: [8, 64] } })).message).toMatch(
      /"tokens" dimension 0 \(batch\): min 4 <= opt 1 <= max 8 does not hold/,
    );
  });
});

describe('build request validation', () => {
  const model = writeModel(path.join(dir, 'fixed.onnx'), { layers: 2 });
  const ctx = { id: 'b1-x', outputDir: path.join(dir, 'out'), backends: async () => simOnly };

  it('resolves auto to the simulated backend when TensorRT is unavailable', async () => {
    const v = await validateBuild({ modelPath: model }, ctx);
    expect(v.backend).toBe('simulated');
    expect(v.outputPath).toBe(path.join(dir, 'out', 'fixed-b1-x.simulated.engine'));
    expect(resolveBackend('auto', [{ ...simOnly[0], available: true, version: '10.16.1' }, simOnly[1]]).name).toBe('tensorrt');
    await expect(validateBuild({ modelPath: model, options: { backend: 'tensorrt' } }, ctx)).rejects.toThrow(/tensorrt backend is not available: libnvinfer/);
  });

  it.each([
    [{ options: { optLevel: 9 } }, /optLevel/],
    [{ options: { shapes: ['x:1x2/3'] } }, /invalid shape/],
    [{ timeBudgetSeconds: -1 }, /timeBudgetSeconds/],
    [{ outputPath: path.join(dir, 'missing-dir', 'e.engine') }, /output directory does not exist/],
    [{ outputPath: dir }, /output path is a directory/],
    [{ outputPath: path.join(dir, 'fixed.onnx') }, /would overwrite the model/],
    [{ options: { timingCache: path.join(dir, 'nope', 'cache.bin') } }, /timing cache directory does not exist/],
    [{ options: { timingCache: path.join(dir, 'fixed.onnx') } }, /timing cache path .* is the model itself/],
    [{ outputPath: path.join(dir, 'same.bin'), options: { timingCache: path.join(dir, 'same.bin') } }, /cannot be the same file/],
  ])('rejects %o', async (extra, msg) => {
    const err = await validateBuild({ modelPath: model, ...extra } as never, ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(msg);
  });

  it('proves the output directory writable by writing to it (read-only mount)', async () => {
    // /proc is never writable, even for root, for whom a chmod 555 directory would still be.
    const err = await validateBuild({ modelPath: model, outputPath: '/proc/tbs-test.engine' }, ctx).catch((e) => e);
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(/output directory \/proc is not writable/);
  });
});

describe('EventLog', () => {
  const ev = (seq: number, type: 'phase.step' | 'phase.finish' | 'log', id = 1): BuildEvent =>
    type === 'log'
      ? { v: 1, buildId: 'b', seq, t: seq, type, severity: 'info', message: `m${seq}` }
      : type === 'phase.step'
        ? { v: 1, buildId: 'b', seq, t: seq, type, id, step: seq, stepsDone: seq + 1 }
        : { v: 1, buildId: 'b', seq, t: seq, type, id, stepsDone: 3, early: false };

  it('keeps only the latest step per open phase and replays after a seq', () => {
    const log = new EventLog(1000);
    log.append(ev(1, 'log'));
    log.append(ev(2, 'phase.step', 1));
    log.append(ev(3, 'phase.step', 2));
    log.append(ev(4, 'phase.step', 1));
    log.append(ev(5, 'phase.finish', 1));
    log.append(ev(6, 'log'));
    expect(log.after(0).map((e) => e.seq)).toEqual([1, 3, 4, 5, 6]);
    expect(log.after(4).map((e) => e.seq)).toEqual([5, 6]);
  });

  it('coalesces a long run of steps of open phases down to the latest per phase', () => {
    const log = new EventLog(1000);
    for (let i = 1; i <= 100_000; i++) log.append(ev(i, 'phase.step', i % 10));
    const kept = log.after(-1);
    expect(kept.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, k) => 99_991 + k));
    expect(log.droppedThrough).toBe(-1); // nothing needed dropping: coalescing sufficed
  });

  it('stays bounded, dropping the oldest events', () => {
    const log = new EventLog(100);
    for (let i = 1; i <= 1000; i++) log.append(ev(i, 'log'));
    expect(log.size).toBeLessThanOrEqual(100);
    const kept = log.after(0);
    expect(kept[kept.length - 1].seq).toBe(1000);
    expect(log.droppedThrough).toBe(kept[0].seq - 1);
  });
});
