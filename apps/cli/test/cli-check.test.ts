// `trt-build-studio check` as users and CI run it (real CLI, real workers, the simulated backend):
// exit 0 / 1 / 3 with the reasons, --json, build flags read by build's own parser, and a crash
// between the engine's write and its manifest's: the engine is then "unknown", never "fits".
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../shared/engine-manifest.js';
import { killLiveClis, leftoverMarked, ProcessMarks, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const marks = new ProcessMarks();

beforeAll(() => {
  dir = tempDir('tbs-cli-check-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
});
afterEach(() => {
  killLiveClis();
  marks.killAll();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SIM = ['--backend', 'simulated', '--sim-duration', '0.2'];

async function build(out: string, extra: string[] = [], env: Record<string, string> = {}) {
  return runCli(['build', model, '-o', out, ...SIM, ...extra], { env: { ...process.env, ...env } });
}

describe('trt-build-studio check', () => {
  it('fits (exit 0) after a build here; needs a rebuild (exit 1) naming what changed; --json for CI', async () => {
    const out = path.join(dir, 'a.engine');
    expect((await build(out, ['--sim-seed', '3'])).code).toBe(0);
    const fits = await runCli(['check', out, '--model', model, ...SIM, '--sim-seed', '3']);
    expect(fits.stdout).toBe(`fits: ${out}\n`);
    expect(fits.code).toBe(0);

    const opt = await runCli(['check', out, ...SIM, '--sim-seed', '3', '--opt-level', '5']);
    expect(opt.code).toBe(1);
    expect(opt.stdout).toContain(`needs a rebuild: ${out}\n  option optLevel: was 3, now 5\n`);

    const v = await runCli(['check', out, '--json'], { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.1.0' } });
    expect(v.code).toBe(1);
    const r = JSON.parse(v.stdout) as CheckResult;
    expect(r).toMatchObject({ verdict: 'rebuild', engine: out, reasons: [{ kind: 'tensorrt-version', was: '10.16.0', now: '11.1.0' }] });
  });

  it('is unknown (exit 3) without a manifest, naming what is missing', async () => {
    const out = path.join(dir, 'bare.engine');
    expect((await build(out)).code).toBe(0);
    fs.rmSync(`${out}.manifest.json`);
    const r = await runCli(['check', out]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(`unknown: ${out}\n  missing: no manifest beside the engine (${out}.manifest.json)\n`);
  });

  it('a crash between the engine and its manifest leaves an engine that is unknown, never fits', async () => {
    const out = path.join(dir, 'crash.engine');
    expect((await build(out, ['--sim-seed', '1'])).code).toBe(0);
    const oldManifest = fs.readFileSync(`${out}.manifest.json`, 'utf8');
    // The second build (other bytes: another seed) dies after its engine's rename, before its manifest's.
    const mark = marks.next();
    const crashed = await build(out, ['--sim-seed', '2'], { TBS_TEST_EXIT_BEFORE_MANIFEST: '1', [mark]: '1' });
    expect(crashed.signal).toBe('SIGKILL');
    expect(await leftoverMarked(mark)).toEqual([]);
    // The new engine is in place; beside it, the first build's manifest, and no temp file.
    expect(fs.readFileSync(`${out}.manifest.json`, 'utf8')).toBe(oldManifest);
    expect(
      fs
        .readdirSync(dir)
        .filter((f) => f.startsWith('crash.engine'))
        .sort(),
    ).toEqual(['crash.engine', 'crash.engine.layers.json', 'crash.engine.manifest.json']);
    const r = await runCli(['check', out, '--json']);
    expect(r.code).toBe(3);
    expect((JSON.parse(r.stdout) as CheckResult).missing.map((m) => m.kind)).toEqual(['manifest-mismatch']);
    // Without any manifest (a crash after the first build's engine), the same.
    fs.rmSync(`${out}.manifest.json`);
    expect((await runCli(['check', out])).code).toBe(3);
  });

  it('bad usage is exit 2 with a clear message', async () => {
    const none = await runCli(['check']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/check needs an engine/);
    const badFlag = await runCli(['check', path.join(dir, 'a.engine'), '--opt-level', '9']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--opt-level expects a whole number from 0 to 5/);
    const out = await runCli(['check', path.join(dir, 'a.engine'), '-o', 'x']);
    expect(out.code).toBe(2);
    const missingModel = await runCli(['check', path.join(dir, 'a.engine'), '--model', path.join(dir, 'nope.onnx')]);
    expect(missingModel.code).toBe(2);
    expect(missingModel.stderr).toMatch(/nope\.onnx/);
  });
});
