// `layers` and `compare` on layer files, through the real command: what a person reads and what
// --json carries, the precision check's exit code, and two trtexec exports compared directly.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuilt, runCli } from '../../../test/support/cli.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

requireBuilt();
let dir: string;
const fmt = (p: 'FP16' | 'FP32') => (p === 'FP16' ? 'Channel major FP16 format where channel % 8 == 0' : 'Row major linear FP32');
/** A trtexec-style export of an n-layer chain, each layer in the precision `prec(i)` gives. */
function exportOf(n: number, prec: (i: number) => 'FP16' | 'FP32') {
  return {
    Layers: Array.from({ length: n }, (_, i) => ({
      Name: i % 2 ? `conv${i} + relu${i}` : `conv${i}`,
      LayerType: 'CaskConvolution',
      Inputs: [{ Name: `t${i}`, Location: 'Device', Dimensions: [1, 8, 4, 4], 'Format/Datatype': fmt(prec(i)) }],
      Outputs: [{ Name: `t${i + 1}`, Location: 'Device', Dimensions: [1, 8, 4, 4], 'Format/Datatype': fmt(prec(i)) }],
      TacticName: `tactic_${prec(i).toLowerCase()}_${i}`,
    })),
    Bindings: ['t0', `t${n}`],
  };
}
const write = (name: string, v: unknown) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, typeof v === 'string' ? v : JSON.stringify(v));
  return p;
};
beforeAll(() => {
  dir = tempDir('tbs-cli-layers-');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('layers', () => {
  it('--json: every layer with its precision, the profile carried exactly, totalMs their sum', async () => {
    const layers = write(
      'a.json',
      exportOf(6, (i) => (i === 3 ? 'FP32' : 'FP16')),
    );
    const profile = write('a.profile.json', [
      { count: 5 },
      ...Array.from({ length: 6 }, (_, i) => ({
        name: i % 2 ? `conv${i} + relu${i}` : `conv${i}`,
        timeMs: (i + 1) * 0.125,
        averageMs: (i + 1) * 0.025,
        medianMs: 0.02,
        percentage: i,
      })),
    ]);
    const r = await runCli(['layers', layers, '--profile', profile, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      layers: Array<{ name: string; precision: string; timeMs: number; fused?: string[] }>;
      summary: { count: number; byPrecision: Record<string, number>; totalMs: number; slowest: Array<{ name: string }> };
    };
    expect(out.layers.map((l) => l.precision)).toEqual(['fp16', 'fp16', 'fp16', 'fp32', 'fp16', 'fp16']);
    expect(out.layers.map((l) => l.timeMs)).toEqual([0.125, 0.25, 0.375, 0.5, 0.625, 0.75]);
    expect(out.layers[1]!.fused).toEqual(['conv1', 'relu1']);
    expect(out.summary).toMatchObject({ count: 6, byPrecision: { fp16: 5, fp32: 1 }, totalMs: 2.625 });
    expect(out.summary.slowest[0]!.name).toBe('conv5 + relu5');
  });

  it('the table fits 100 columns, slowest first', async () => {
    const layers = write(
      'b.json',
      exportOf(3, () => 'FP16'),
    );
    const profile = write('b.profile.json', [{ count: 1 }, { name: 'conv0', timeMs: 1 }, { name: 'conv1 + relu1', timeMs: 3 }, { name: 'conv2', timeMs: 2 }]);
    const r = await runCli(['layers', layers, '--profile', profile]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    for (const l of lines.slice(1)) expect(l.length, l).toBeLessThanOrEqual(100);
    const rows = lines.filter((l) => /^conv/.test(l)).map((l) => l.split(/\s{2,}/)[0]);
    expect(rows).toEqual(['conv1 + relu1', 'conv2', 'conv0']);
  });

  it('--expect fp16 exits 1 listing the layers that fell back; 0 when none did', async () => {
    const mixed = write(
      'c.json',
      exportOf(4, (i) => (i === 2 ? 'FP32' : 'FP16')),
    );
    const bad = await runCli(['layers', mixed, '--expect', 'fp16']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('3 of 4 compute layers run FP16; 1 run FP32: conv2');
    const good = await runCli([
      'layers',
      write(
        'd.json',
        exportOf(4, () => 'FP16'),
      ),
      '--expect',
      'fp16',
    ]);
    expect(good.code, good.stdout).toBe(0);
  });

  it('an engine reads <engine>.layers.json beside it; a missing or hostile file is a clear error', async () => {
    const engine = path.join(dir, 'm.engine');
    fs.writeFileSync(engine, 'not an engine');
    write(
      'm.engine.layers.json',
      exportOf(2, () => 'FP16'),
    );
    expect((await runCli(['layers', engine, '--json'])).code).toBe(0);
    const missing = await runCli(['layers', path.join(dir, 'none.engine')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no layer information for .*none\.engine/);
    const deep = await runCli(['layers', write('deep.json', `{"Layers": ${'['.repeat(5000)}${']'.repeat(5000)}}`)]);
    expect(deep.code).toBe(2);
    expect(deep.stderr).toMatch(/nested deeper than 64 levels/);
    const fifo = path.join(dir, 'fifo.json');
    require('node:child_process').execFileSync('mkfifo', [fifo]);
    const f = await runCli(['layers', fifo]);
    expect(f.code).toBe(2);
    expect(f.stderr).toMatch(/not a regular file/);
    expect((await runCli(['layers', engine, '--expect', 'fp9'])).stderr).toMatch(/--expect takes one of/);
  });
});

describe('compare on two layer files', () => {
  it('names exactly the layers whose precision changed, with time ratios where both were profiled', async () => {
    const fp32 = write(
      'e32.json',
      exportOf(5, () => 'FP32'),
    );
    const fp16 = write(
      'e16.json',
      exportOf(5, (i) => (i === 4 ? 'FP32' : 'FP16')),
    );
    const pa = write('e32.profile.json', [{ count: 1 }, { name: 'conv0', timeMs: 2 }]);
    const pb = write('e16.profile.json', [{ count: 1 }, { name: 'conv0', timeMs: 1 }]);
    const r = await runCli(['compare', fp32, fp16, '--profile-a', pa, '--profile-b', pb, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { layers: Array<{ name: string; what: string[]; timeRatio?: number }> };
    expect(out.layers.filter((l) => l.what.includes('precision')).map((l) => l.name)).toEqual(['conv0', 'conv1 + relu1', 'conv2', 'conv3 + relu3']);
    expect(out.layers.find((l) => l.name === 'conv0')!.timeRatio).toBe(0.5);
    const text = await runCli(['compare', fp32, fp16]);
    expect(text.stdout).toContain('Precision changed (4):');
    expect(text.stdout).not.toMatch(/conv4: fp32 → /);
  });
});
