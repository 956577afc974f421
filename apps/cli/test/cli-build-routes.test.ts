// Build routes through the real CLI (child processes; dist/ must be built), with the simulated
// backend imitating TensorRT 11.1 (TBS_SIM_TRT_VERSION), whose knob database holds the knobs of
// NVIDIA's NvInfer.h example: the example route builds, the pattern given as a route is a usage
// error naming the knob, and `trtexec --helpBuildRoute[=<knob>]` prints the database as JSON.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const NVIDIA_ROUTE = '-conv_use_long_w=off -kgen:codegen:cuda_tile=2';
const v111 = { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.1.0' } };
const v110 = { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.0.0' } };

let dir: string;
let model: string;
beforeAll(() => {
  dir = tempDir('tbs-cli-routes-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 1 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

type Ev = { type: string; status?: string; options?: Record<string, unknown>; message?: string };

describe('build routes (simulated TensorRT 11.1)', () => {
  it("build --build-route takes NVIDIA's example route and the build says it used it", async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'b.engine'), '--backend', 'simulated', '--build-route', NVIDIA_ROUTE, '--json'], v111);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const events = parseNdjson(r.stdout) as Ev[];
    expect(events.find((e) => e.type === 'build.started')?.options).toMatchObject({ buildRoute: NVIDIA_ROUTE });
    expect(events.some((e) => e.type === 'log' && e.message === `Build route (simulated): ${NVIDIA_ROUTE}`)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
  });

  it('trtexec --setBuildRoute takes the same route', async () => {
    const r = await runCli(['trtexec', `--onnx=${model}`, `--saveEngine=${path.join(dir, 't.engine')}`, `--setBuildRoute=${NVIDIA_ROUTE}`, '--backend=simulated', '--json'], v111);
    expect(r.code).toBe(0);
    expect((parseNdjson(r.stdout) as Ev[]).at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
  });

  it('the pattern given as a route exits 2 naming the knob, before any build', async () => {
    const engine = path.join(dir, 'p.engine');
    const b = await runCli(['build', model, '-o', engine, '--backend', 'simulated', '--build-route', '-conv_use_long_w=[on|off]'], v111);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--build-route: knob -conv_use_long_w: "-conv_use_long_w=[on|off]" is the knob\'s pattern of allowed values, not a route');
    const t = await runCli(['trtexec', `--onnx=${model}`, `--saveEngine=${engine}`, '--setBuildRoute=-conv_use_long_w=[on|off]', '--backend=simulated'], v111);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('--setBuildRoute: knob -conv_use_long_w:');
    expect(fs.existsSync(engine)).toBe(false);
  });

  it('a bad value or an unknown knob exits 2 naming it', async () => {
    const bad = await runCli(['build', model, '-o', path.join(dir, 'v.engine'), '--backend', 'simulated', '--build-route', '-kgen:codegen:cuda_tile=9'], v111);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('knob -kgen:codegen:cuda_tile does not take "9"; allowed: -kgen:codegen:cuda_tile=[0|1|2|3]');
    const unknown = await runCli(['build', model, '-o', path.join(dir, 'u.engine'), '--backend', 'simulated', '--build-route', '-warp_speed=on'], v111);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown knob -warp_speed');
  });

  it('trtexec --helpBuildRoute prints the knob database as JSON, or one knob with or without its dash', async () => {
    const all = await runCli(['trtexec', '--helpBuildRoute', '--backend=simulated'], v111);
    expect(all.code).toBe(0);
    // As trtexec: the database exactly as the backend returned it, not a re-serialized copy.
    const listed = await runCli(['backends', '--json'], v111);
    const sim = (JSON.parse(listed.stdout) as { name: string; detail?: { buildRoutesJson?: string } }[]).find((b) => b.name === 'simulated');
    expect(sim?.detail?.buildRoutesJson).toBeTruthy();
    expect(all.stdout).toBe(`${sim!.detail!.buildRoutesJson!}\n`);
    const db = JSON.parse(all.stdout) as { tuner_options: { option: string; allowed_values: string }[] };
    expect(db.tuner_options.map((o) => o.allowed_values)).toEqual(expect.arrayContaining(['-conv_use_long_w=[on|off]', '-kgen:codegen:cuda_tile=[0|1|2|3]']));
    const one = await runCli(['trtexec', '--helpBuildRoute=kgen:codegen:cuda_tile', '--backend=simulated'], v111);
    expect(one.code).toBe(0);
    expect((JSON.parse(one.stdout) as typeof db).tuner_options.map((o) => o.option)).toEqual(['-kgen:codegen:cuda_tile']);
    const none = await runCli(['trtexec', '--helpBuildRoute=-nope', '--backend=simulated'], v111);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--helpBuildRoute=-nope: no such knob in the database');
    const old = await runCli(['trtexec', '--helpBuildRoute', '--backend=simulated'], v110);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('TensorRT 11.0.0 has no build routes');
  });
});
