// Issue 34, item 1, through the real CLI: a model whose nodes are out of topological order but
// acyclic (a float16 converter appended its Cast nodes at the end, as in the ISNet background-
// removal model) is inspected and built, with a warning that the nodes were reordered, as
// TensorRT's ONNX parser sorts them; a real cycle is still refused naming its nodes. Before the
// fix, `inspect` and `build` refused the first as "the graph has a cycle or is not in
// topological order". Real third-party models are used too when present (model-order-real-models.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { killLiveClis, parseNdjson, requireBuilt, runCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { expectedSummary, tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { findRealModels } from './model-order-real-models.js';

let dir: string;
beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-cli-model-order-');
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SIM = ['--backend', 'simulated', '--sim-duration', '0.3', '--sim-seed', '3'];

type Log = Extract<BuildEvent, { type: 'log' }>;
const warnings = (events: BuildEvent[]) => events.filter((e): e is Log => e.type === 'log' && e.severity === 'warning').map((e) => e.message);

describe('nodes out of topological order (Cast nodes appended at the end)', () => {
  const spec = { layers: 2, castsAtEnd: true };

  it('inspect reads it: the Casts counted, nothing refused', async () => {
    const m = writeModel(path.join(dir, 'casts.onnx'), spec);
    const r = await runCli(['inspect', m, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout) as { nodeCount: number; opHistogram: Record<string, number>; notes?: string[] };
    expect(s.nodeCount).toBe(expectedSummary(spec).nodeCount);
    expect(s.opHistogram.Cast).toBe(2);
    // Said, not hidden: the summary notes the reordering, and the text shows it.
    expect(s.notes?.some((n) => /topological order|reorder|sorted/i.test(n))).toBe(true);
    const text = await runCli(['inspect', m]);
    expect(text.stdout).toMatch(/^Notes:\n {2}.*(topological order|reorder|sorted)/im);
  });

  it('build --backend simulated succeeds; a warning says the nodes were reordered; the layers are in sorted order', async () => {
    const m = writeModel(path.join(dir, 'casts-build.onnx'), spec);
    const out = path.join(dir, 'casts.engine');
    const r = await runCli(['build', m, '-o', out, ...SIM, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const events = assertEventStream(parseNdjson(r.stdout));
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    // Right after build.started, before the worker's own lines.
    expect(events[1]).toMatchObject({ type: 'log', severity: 'warning' });
    expect(warnings(events)).toContainEqual(
      expect.stringMatching(
        /^the nodes are not in topological order \(1 node reads the output of a later node; first: node "conv_0" #0 \(Conv\) reads "input_cast".*they were reordered$/,
      ),
    );
    // The simulated layer information follows the layer list: the input's Cast first.
    const layers = JSON.parse(fs.readFileSync(`${out}.layers.json`, 'utf8')) as { Layers: Array<{ Name: string }> };
    const names = layers.Layers.map((l) => l.Name);
    const want = expectedSummary(spec).layerNames;
    // (A simulated layer may be a fusion named after several nodes.)
    const at = (name: string) => names.findIndex((n) => n.includes(name));
    expect(at(want[0])).toBeGreaterThanOrEqual(0);
    expect(at(want[0])).toBeLessThan(at('conv_0'));
  });

  it('a real cycle is still refused, naming the nodes on it (inspect and build exit 2)', async () => {
    const m = writeModel(path.join(dir, 'cycle.onnx'), {
      layers: 1,
      castsAtEnd: true,
      // The input's Cast now reads the output's Cast: every node is on one ring.
      mutate: (p) => void (p.graph!.node!.find((n) => n.output?.[0] === 'input_cast')!.input = ['probs']),
    });
    for (const cmd of [
      ['inspect', m],
      ['build', m, '-o', path.join(dir, 'cycle.engine'), ...SIM],
    ]) {
      const r = await runCli(cmd);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /the graph has a cycle through 9 nodes: node "conv_0" #0 \(Conv\) reads "input_cast" from node "cast_\d+" #\d+ \(Cast\), .*; TensorRT's parser refuses it/,
      );
    }
    expect(fs.existsSync(path.join(dir, 'cycle.engine'))).toBe(false);
  });
});

describe('real third-party models, when present (never downloaded by the test)', () => {
  const real = findRealModels(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tbs-real-models-')));

  it.skipIf(!real.isnet)(
    'ISNet (float16, Casts appended at the end): inspect and build succeed, the nodes reordered',
    async () => {
      const m = real.isnet!.file;
      const i = await runCli(['inspect', m]);
      expect(i.code, i.stderr).toBe(0);
      expect(i.stdout).toMatch(/Cast\s+\d+/);
      const r = await runCli(['build', m, '-o', path.join(dir, 'isnet.engine'), ...SIM, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const events = assertEventStream(parseNdjson(r.stdout));
      expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
      expect(warnings(events)).toContainEqual(expect.stringMatching(/not in topological order .*reads "graph_input_cast_0".*they were reordered/));
    },
    120_000,
  );

  it.skipIf(!real.sileroLegacy)(
    'Silero VAD legacy (If bodies reading the outer graph, a dynamic batch): built with default shapes',
    async () => {
      const r = await runCli(['build', real.sileroLegacy!.file, '-o', path.join(dir, 'silero-legacy.engine'), ...SIM, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const events = assertEventStream(parseNdjson(r.stdout));
      expect(warnings(events)).toContain(
        'dynamic input "input" [batch, sequence] was given no shapes: built for input: 1x1 (each dynamic dimension 1, min = opt = max, as trtexec does); give shapes to build for a range',
      );
    },
    60_000,
  );
});
