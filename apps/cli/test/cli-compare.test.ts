// `trt-build-studio compare` on real (simulated) builds: a changed option named, per-phase
// durations of both builds with the ratio, per-layer differences from the saved layer information,
// every phase row when the builds saved them, build ids looked up among manifests, --json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildComparison } from '../../shared/build-compare.js';
import { EngineManifest } from '../../shared/engine-manifest.js';
import { formatDuration } from '../../shared/format.js';
import { killLiveClis, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
let a: string;
let b: string;

beforeAll(async () => {
  dir = tempDir('tbs-cli-compare-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
  a = path.join(dir, 'a.engine');
  b = path.join(dir, 'b.engine');
  const sim = ['--backend', 'simulated', '--sim-seed', '4', '--manifest-rows'];
  expect((await runCli(['build', model, '-o', a, ...sim, '--sim-duration', '0.3'])).code).toBe(0);
  expect((await runCli(['build', model, '-o', b, ...sim, '--sim-duration', '0.9', '--fp16'])).code).toBe(0);
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const manifest = (e: string) => EngineManifest.parse(JSON.parse(fs.readFileSync(`${e}.manifest.json`, 'utf8')));

describe('trt-build-studio compare', () => {
  it('names the changed option and prints the per-phase durations of both builds', async () => {
    const r = await runCli(['compare', a, b]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Inputs that differ (a → b):\n');
    expect(r.stdout).toContain('  option precision: [] → ["fp16"]\n');
    const ma = manifest(a);
    const mb = manifest(b);
    expect(r.stdout).toMatch(new RegExp(`a: ${ma.buildId}  a\\.engine\\nb: ${mb.buildId}  b\\.engine`));
    for (const p of ma.build.phases) {
      const q = mb.build.phases.find((x) => x.name === p.name)!;
      const line = r.stdout.split('\n').find((l) => l.trimStart().startsWith(p.name))!;
      // Both builds' durations, a then b, and the ratio.
      expect(line, p.name).toMatch(new RegExp(`${escape(formatDuration(p.ms))} → ${escape(formatDuration(q.ms))}\\s`));
      expect(line, p.name).toContain(`×${(Math.round((q.ms / p.ms) * 1000) / 1000).toFixed(2)}`);
    }
    expect(r.stdout).toMatch(/whole build .*→.*×\d\.\d\d/);
    // The second build was told to take three times as long: its phases are marked slower.
    expect(r.stdout).toMatch(/Building engine .* slower/);
    // Every row was saved (--manifest-rows), and the layers differ in precision.
    expect(r.stdout).toContain('Every phase row (a → b):');
    expect(r.stdout).toMatch(/conv_0 \+ relu_1: precision fp32 → fp16/);
  });

  it('--json carries the same answer; build ids are found among the manifests of a folder', async () => {
    const ma = manifest(a);
    const mb = manifest(b);
    const r = await runCli(['compare', ma.buildId, `${b}.manifest.json`, '--dir', dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const c = JSON.parse(r.stdout) as BuildComparison;
    expect(c.a).toEqual({ buildId: ma.buildId, engine: 'a.engine', wallMs: ma.build.wallMs });
    expect(c.b.buildId).toBe(mb.buildId);
    expect(c.inputs).toContainEqual({ what: 'option precision', a: '[]', b: '["fp16"]' });
    expect(c.wall).toMatchObject({ aMs: ma.build.wallMs, bMs: mb.build.wallMs });
    expect(c.phases.map((p) => p.name)).toEqual(ma.build.phases.map((p) => p.name));
    expect(c.rows!.length).toBe(ma.build.rows!.length);
    expect(c.layers!.find((l) => l.name === 'conv_0 + relu_1')).toMatchObject({ what: expect.arrayContaining(['precision', 'tactic']) });
  });

  it('the same build twice: nothing differs in inputs or layers', async () => {
    const c = JSON.parse((await runCli(['compare', a, a, '--json'])).stdout) as BuildComparison;
    expect(c.inputs).toEqual([]);
    expect(c.layers).toEqual([]);
    expect(c.phases.every((p) => p.ratio === 1)).toBe(true);
  });

  it('layer information whose bytes are not the ones the manifest names is left out', async () => {
    const copy = path.join(dir, 'copy');
    fs.mkdirSync(copy);
    for (const f of ['a.engine', 'a.engine.manifest.json', 'a.engine.layers.json']) fs.copyFileSync(path.join(dir, f), path.join(copy, f));
    fs.writeFileSync(path.join(copy, 'a.engine.layers.json'), '{"Layers": []}');
    const c = JSON.parse((await runCli(['compare', path.join(copy, 'a.engine'), b, '--json'])).stdout) as BuildComparison;
    expect(c.layers).toBeUndefined();
  });

  it('refuses what it cannot compare, naming it (exit 2)', async () => {
    const none = await runCli(['compare', 'b999-nothing', a, '--dir', dir]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/"b999-nothing" is neither a file nor the id of a build/);
    expect((await runCli(['compare', a])).code).toBe(2);
    fs.writeFileSync(path.join(dir, 'bare.engine'), 'x');
    const bare = await runCli(['compare', path.join(dir, 'bare.engine'), a]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/no manifest beside the engine/);
    // An engine replaced without its manifest (a crash between the two writes) is not compared by the old manifest.
    const swapped = path.join(dir, 'swapped');
    fs.mkdirSync(swapped);
    fs.copyFileSync(`${a}.manifest.json`, path.join(swapped, 'a.engine.manifest.json'));
    fs.copyFileSync(b, path.join(swapped, 'a.engine'));
    const mismatch = await runCli(['compare', path.join(swapped, 'a.engine'), b]);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(/its manifest describes other bytes/);
  });
});
