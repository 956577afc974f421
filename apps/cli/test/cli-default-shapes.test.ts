// Issue 34, item 2, through the real CLI: a model with a dynamic batch built with no shapes
// builds as trtexec builds it (samples/common/sampleEngines.cpp: each dynamic dimension 1,
// min = opt = max, "Dynamic dimensions required for input: …, but no shapes were provided"),
// with a warning naming the input and the shape used on the build's event stream, the shapes in
// the build's options and in its manifest's `defaultShapes`. Before the fix: exit 2, "dynamic
// input without shapes … give shapes". Bad shapes are still refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EngineManifest, manifestPathFor } from '../../shared/engine-manifest.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { killLiveClis, parseNdjson, requireBuilt, runCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { findRealModels } from './model-order-real-models.js';

let dir: string;
let dyn: string;
beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-cli-default-shapes-');
  dyn = writeModel(path.join(dir, 'dyn.onnx'), { layers: 1, dynamic: true });
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SIM = ['--backend', 'simulated', '--sim-duration', '0.3'];
const WARNING =
  'dynamic input "input" [batch, 3, height, width] was given no shapes: built for input: 1x3x1x1 (each dynamic dimension 1, min = opt = max, as trtexec does); give shapes to build for a range';

type Log = Extract<BuildEvent, { type: 'log' }>;
const warnings = (events: BuildEvent[]) => events.filter((e): e is Log => e.type === 'log' && e.severity === 'warning').map((e) => e.message);

describe('a dynamic batch with no shapes', () => {
  it('build: succeeds with each dynamic dimension 1; a warning names the input and the shape; options and manifest say so', async () => {
    const out = path.join(dir, 'dyn.engine');
    const r = await runCli(['build', dyn, '-o', out, ...SIM, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const events = assertEventStream(parseNdjson(r.stdout));
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(events[1]).toMatchObject({ type: 'log', severity: 'warning', message: WARNING });
    const started = events.find((e) => e.type === 'build.started') as Extract<BuildEvent, { type: 'build.started' }>;
    expect(started.options.shapes).toEqual({ input: { min: [1, 3, 1, 1], opt: [1, 3, 1, 1], max: [1, 3, 1, 1] } });
    const manifest = EngineManifest.parse(JSON.parse(fs.readFileSync(manifestPathFor(out), 'utf8')));
    expect(manifest.defaultShapes).toEqual([{ input: 'input', kind: 'shapes', value: [1, 3, 1, 1] }]);
    expect(manifest.options.shapes).toEqual({ input: { min: [1, 3, 1, 1], opt: [1, 3, 1, 1], max: [1, 3, 1, 1] } });
  });

  it('check: the same request (no shapes) fits the engine built with default shapes; shapes given are compared', async () => {
    const out = path.join(dir, 'dyn-check.engine');
    expect((await runCli(['build', dyn, '-o', out, ...SIM])).code).toBe(0);
    const same = await runCli(['check', out, '--backend', 'simulated', '--sim-duration', '0.3']);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    const other = await runCli(['check', out, '--backend', 'simulated', '--sim-duration', '0.3', '--shapes', 'input:1x3x8x8/2x3x8x8/4x3x8x8']);
    expect(other.code).toBe(1);
    expect(other.stdout).toMatch(/shape range of input input/);
  });

  it('the plain renderer shows the warning too', async () => {
    const r = await runCli(['build', dyn, '-o', path.join(dir, 'dyn-text.engine'), ...SIM]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain(WARNING);
  });

  it('trtexec: the same, as trtexec itself does', async () => {
    const r = await runCli(['trtexec', `--onnx=${dyn}`, `--saveEngine=${path.join(dir, 'dyn-trtexec.engine')}`, '--backend=simulated', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(warnings(assertEventStream(parseNdjson(r.stdout)))).toContain(WARNING);
  });

  it('given shapes: no default, no warning, nothing in the manifest', async () => {
    const out = path.join(dir, 'dyn-given.engine');
    const r = await runCli(['build', dyn, '-o', out, ...SIM, '--json', '--shapes', 'input:1x3x8x8/2x3x8x8/4x3x8x8']);
    expect(r.code, r.stderr).toBe(0);
    expect(warnings(assertEventStream(parseNdjson(r.stdout))).filter((w) => w.includes('given no shapes'))).toEqual([]);
    expect(EngineManifest.parse(JSON.parse(fs.readFileSync(manifestPathFor(out), 'utf8'))).defaultShapes).toBeUndefined();
  });

  it('bad shapes are still refused (wrong rank, min > max), exit 2 before any build', async () => {
    const rank = await runCli(['build', dyn, '-o', path.join(dir, 'bad1.engine'), ...SIM, '--shapes', 'input:1x3x8/1x3x8/1x3x8']);
    expect(rank.code).toBe(2);
    expect(rank.stderr).toMatch(/shapes for "input" have the wrong rank/);
    const order = await runCli(['build', dyn, '-o', path.join(dir, 'bad2.engine'), ...SIM, '--shapes', 'input:4x3x8x8/2x3x8x8/1x3x8x8']);
    expect(order.code).toBe(2);
    expect(order.stderr).toMatch(/"input" dimension 0 \(batch\): min 4 <= opt 2 <= max 1 does not hold/);
  });
});

describe('a shape-tensor input with no values', () => {
  it('is given 1 for each value, as trtexec does, with a warning', async () => {
    const m = writeModel(path.join(dir, 'shape-tensor.onnx'), {
      layers: 1,
      inputs: [
        { name: 'input', shape: [1, 3, 8, 8] },
        { name: 'target', shape: [2], elemType: 'int64' },
      ],
      extraNodes: [{ op: 'Reshape', inputs: ['probs', 'target'], outputs: ['reshaped'] }],
    });
    const r = await runCli(['build', m, '-o', path.join(dir, 'st.engine'), ...SIM, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const events = assertEventStream(parseNdjson(r.stdout));
    expect(warnings(events)).toContainEqual(expect.stringMatching(/^shape-tensor input "target" \[2\] was given no values: built for target: 1,1 /));
    const started = events.find((e) => e.type === 'build.started') as Extract<BuildEvent, { type: 'build.started' }>;
    expect(started.options.shapeValues).toEqual({ target: { min: [1, 1], opt: [1, 1], max: [1, 1] } });
  });
});

describe('a real model with unnamed dynamic dimensions, when present', () => {
  const real = findRealModels(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tbs-real-models-')));
  it.skipIf(!real.sileroV5)(
    'Silero VAD v5: built with each dynamic dimension 1, a warning per input',
    async () => {
      const r = await runCli(['build', real.sileroV5!.file, '-o', path.join(dir, 'silero.engine'), ...SIM, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const w = warnings(assertEventStream(parseNdjson(r.stdout)));
      expect(w).toContainEqual(expect.stringMatching(/^dynamic input "input" \[\?, \?\] was given no shapes: built for input: 1x1 /));
      expect(w).toContainEqual(expect.stringMatching(/^dynamic input "state" \[2, \?, 128\] was given no shapes: built for state: 2x1x128 /));
    },
    60_000,
  );
});
