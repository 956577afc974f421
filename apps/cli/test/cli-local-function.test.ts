// Issue 34, item 1, through the real CLI: a model whose nodes call a model-local function (ONNX
// FunctionProto in ModelProto.functions), as PyTorch's dynamo exporter writes aten_gelu in domain
// pkg.onnxscript.torch_lib. TensorRT's ONNX parser inlines the function's nodes; so do inspect
// (histogram) and build (layers), with a note. Before the fix the call was listed as a custom
// operator needing a TensorRT plugin.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { killLiveClis, parseNdjson, requireBuilt, runCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { expectedSummary, tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-cli-local-function-');
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const spec = { layers: 2, localFunction: true };

describe('a PyTorch-dynamo-style local function (pkg.onnxscript.torch_lib.aten_gelu)', () => {
  it("inspect counts its body's operators, and lists no plugin operator", async () => {
    const m = writeModel(path.join(dir, 'gelu.onnx'), spec);
    const json = await runCli(['inspect', m, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const s = JSON.parse(json.stdout) as { nodeCount: number; opHistogram: Record<string, number>; pluginOps?: string[] };
    expect(s.pluginOps).toBeUndefined();
    expect(s.opHistogram).toEqual(expectedSummary(spec).opHistogram);
    expect(s.nodeCount).toBe(expectedSummary(spec).nodeCount);
    const text = await runCli(['inspect', m]);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/plugin/i);
    expect(text.stdout).toMatch(/Erf\s+2/);
  });

  it("build --backend simulated succeeds, its layers the function's nodes, a warning naming the function", async () => {
    const m = writeModel(path.join(dir, 'gelu-build.onnx'), spec);
    const out = path.join(dir, 'gelu.engine');
    const r = await runCli(['build', m, '-o', out, '--backend', 'simulated', '--sim-duration', '0.3', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const events = assertEventStream(parseNdjson(r.stdout));
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    const logs = events.filter((e): e is Extract<BuildEvent, { type: 'log' }> => e.type === 'log' && e.severity === 'warning').map((e) => e.message);
    expect(logs).toContain("model-local functions expanded into their nodes, as TensorRT's ONNX parser imports them: pkg.onnxscript.torch_lib.aten_gelu (2 calls)");
    const layers = JSON.parse(fs.readFileSync(`${out}.layers.json`, 'utf8')) as { Layers: Array<{ Name: string }> };
    expect(layers.Layers.some((l) => l.Name.includes('/n_erf'))).toBe(true);
  });
});
