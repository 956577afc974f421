// Issue 36 item 3 through the real CLI: a simulated fp16 build of a model with ops the simulator
// does not reduce (Tanh, Exp) ends with the layers that run wider than FP16 counted and named, in
// build.finished (--json) and in the closing lines.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const SIM = ['--backend', 'simulated', '--sim-duration', '0.3'];
beforeAll(() => {
  dir = tempDir('tbs-build-layers-');
  model = writeModel(path.join(dir, 'model.onnx'), {
    layers: 2,
    extraNodes: [
      { op: 'Tanh', inputs: ['probs'], outputs: ['t'] },
      { op: 'Exp', inputs: ['t'], outputs: ['e'] },
    ],
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the precision check in a build summary', () => {
  it('fp16: the layers left in FP32 are counted and named, and agree with `layers --expect fp16`', async () => {
    const out = path.join(dir, 'fp16.engine');
    const r = await runCli(['build', model, '-o', out, ...SIM, '--fp16', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const fin = (parseNdjson(r.stdout) as BuildEvent[]).find((e): e is BuildFinished => e.type === 'build.finished')!;
    expect(fin.status).toBe('succeeded');
    expect(fin.layers).toMatchObject({ expected: 'fp16', wider: 2, widerByPrecision: { fp32: 2 } });
    expect(fin.layers!.widerNames).toEqual([expect.stringMatching(/^tanh/i), expect.stringMatching(/^exp/i)]);
    expect(fin.layers!.asAsked).toBe(fin.layers!.checked! - 2);
    // The same answer as the layers command on the file the build wrote.
    const l = await runCli(['layers', out, '--expect', 'fp16', '--json']);
    expect(l.code).toBe(1);
    const check = (JSON.parse(l.stdout) as { check: { wider: { name: string }[]; checked: number } }).check;
    expect(check.wider.map((w) => w.name)).toEqual(fin.layers!.widerNames);
    expect(check.checked).toBe(fin.layers!.checked);
    expect(Object.values(fin.layers!.byPrecision).reduce((a, b) => a + b, 0)).toBe(fin.layers!.count);

    const plain = await runCli(['build', model, '-o', path.join(dir, 'plain.engine'), ...SIM, '--fp16']);
    expect(plain.code).toBe(0);
    const lines = plain.stdout.split('\n');
    const at = lines.findIndex((s) => s.startsWith('Succeeded in '));
    expect(lines[at + 1]).toMatch(/^Layers: \d+ of \d+ compute layers run FP16; 2 run FP32: tanh\w*, exp\w*$/);
  });

  it('no precision flag: counted per precision, nothing judged', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'fp32.engine'), ...SIM, '--json']);
    expect(r.code).toBe(0);
    const fin = (parseNdjson(r.stdout) as BuildEvent[]).find((e): e is BuildFinished => e.type === 'build.finished')!;
    expect(fin.layers).toEqual({ count: expect.any(Number), byPrecision: { fp32: fin.layers!.count } });
  });
});

describe('the precision check of a strongly typed build (TensorRT 11: the model decides)', () => {
  it("a float16 model on TensorRT 11: expected FP16 from the model's inputs; only the ops the simulator does not reduce run FP32", async () => {
    const half = writeModel(path.join(dir, 'half.onnx'), {
      layers: 2,
      inputs: [{ name: 'input', shape: [1, 3, 32, 32], elemType: 'float16' }],
      extraNodes: [{ op: 'Tanh', inputs: ['probs'], outputs: ['t'] }],
    });
    const r = await runCli(['build', half, '-o', path.join(dir, 'half.engine'), ...SIM, '--json'], { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.1.0' } });
    expect(r.code, r.stderr).toBe(0);
    const fin = (parseNdjson(r.stdout) as BuildEvent[]).find((e): e is BuildFinished => e.type === 'build.finished')!;
    expect(fin.layers).toMatchObject({ expected: 'fp16', wider: 1, widerNames: [expect.stringMatching(/^tanh/i)] });
    expect(fin.layers!.byPrecision.fp16).toBeGreaterThan(0);
    // A float32 model on TensorRT 11 asked for nothing narrower: nothing is judged.
    const full = await runCli(['build', model, '-o', path.join(dir, 'full.engine'), ...SIM, '--json'], { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.1.0' } });
    const finFull = (parseNdjson(full.stdout) as BuildEvent[]).find((e): e is BuildFinished => e.type === 'build.finished')!;
    expect(finFull.layers?.expected).toBeUndefined();
  });
});
