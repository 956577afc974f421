// scripts/third-party-models.js: on a folder of generated models of the kinds real exporters make
// (dynamic, weights in If branches, external data, -1 dimensions, a shape-tensor input, a broken
// file), and, when TBS_THIRD_PARTY_MODELS names a folder of real third-party models (which cannot
// be in the repository), on those.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, requireBuilt } from './support/cli.js';
import { tempDir, writeBadFile, writeModel } from './support/onnx-gen.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'third-party-models.js');
const dir = tempDir('tbs-3p-test-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Entry {
  model: string;
  inspect: { ok: boolean; error?: string; weightBytes?: number; inputs?: string[]; shapeTensorInputs?: string[] };
  build?: { ok: boolean; status?: string | null; skipped?: string };
  http?: { upload: { ok: boolean; sameSummaryAsCli?: boolean }; build?: { ok: boolean; status?: string } };
}

function runScript(args: string[], timeoutMs: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (b) => (out += b));
    p.stderr.on('data', (b) => (err += b));
    // SIGTERM lets the script stop its own `serve` (it does so in a finally) before it exits.
    const timer = setTimeout(() => p.kill('SIGTERM'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('third-party-models script', () => {
  it('inspects and builds every model of a folder, over the CLI and over HTTP, and names the one that fails', async () => {
    requireBuilt();
    const models = path.join(dir, 'models');
    const sub = path.join(models, 'nested');
    fs.mkdirSync(sub, { recursive: true });
    writeModel(path.join(models, 'plain.onnx'), { layers: 2 });
    writeModel(path.join(models, 'dynamic-if.onnx'), { layers: 1, dynamic: true, subgraphs: { bytes: 64 * 1024 } });
    writeModel(path.join(models, 'caffe2-style.onnx'), { layers: 1, inputs: [{ name: 'gpu_0/data_0', shape: [-1, 3, 32, 32] }] });
    writeModel(path.join(models, 'shape-input.onnx'), {
      layers: 1,
      inputs: [
        { name: 'input', shape: [1, 3, 32, 32] },
        { name: 'target', shape: [2], elemType: 'int64' },
      ],
      extraNodes: [{ op: 'Reshape', inputs: ['probs', 'target'], outputs: ['reshaped'] }],
    });
    writeModel(path.join(sub, 'external.onnx'), { layers: 2, externalData: 'external.bin' });
    writeBadFile(path.join(models, 'truncated.onnx'), 'truncated');

    const r = await runScript([models, '--http'], 120_000);
    expect(r.err).toBe('');
    expect(r.code).toBe(1);
    const result = JSON.parse(r.out) as { models: number; failed: string[]; results: Entry[] };
    expect(result.models).toBe(6);
    expect(result.failed).toEqual(['truncated.onnx']);
    const by = new Map(result.results.map((e) => [e.model, e]));
    expect([...by.keys()]).toEqual(['caffe2-style.onnx', 'dynamic-if.onnx', path.join('nested', 'external.onnx'), 'plain.onnx', 'shape-input.onnx', 'truncated.onnx']);
    expect(by.get('truncated.onnx')!.inspect.error).toMatch(/truncated/);
    for (const name of ['plain.onnx', 'dynamic-if.onnx', 'caffe2-style.onnx', 'shape-input.onnx', path.join('nested', 'external.onnx')]) {
      const e = by.get(name)!;
      expect(e.inspect.ok, name).toBe(true);
      expect(e.build, name).toMatchObject({ ok: true, status: 'succeeded' });
      expect(e.http, name).toMatchObject({ upload: { ok: true, sameSummaryAsCli: true }, build: { ok: true, status: 'succeeded' } });
    }
    expect(by.get('caffe2-style.onnx')!.inspect.inputs).toEqual(['gpu_0/data_0 float32 [?,3,32,32]']);
    expect(by.get('shape-input.onnx')!.inspect).toMatchObject({ shapeTensorInputs: ['target'] });
  }, 150_000);

  it('refuses a missing folder with a usage line and exit code 2', async () => {
    const r = await runScript([path.join(dir, 'nope')], 30_000);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^usage: node scripts\/third-party-models\.js/);
  });

  const real = process.env.TBS_THIRD_PARTY_MODELS;
  it.skipIf(!real)(
    'every real third-party model in TBS_THIRD_PARTY_MODELS inspects and builds (unset: no such models here, they cannot be in the repository)',
    async () => {
      const r = await runScript([real!, '--http'], 1_500_000);
      const result = JSON.parse(r.out) as { failed: string[] };
      expect(result.failed).toEqual([]);
      expect(r.code).toBe(0);
    },
    1_600_000,
  );
});
