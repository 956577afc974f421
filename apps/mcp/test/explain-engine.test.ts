// The explain_engine tool (issue 36 item 5) against the real build service (real workers, simulated
// backend), over the real SDK client and server linked in memory: a build by id (checked against
// the precision it asked for), a layer JSON by path with a trtexec-style profile, and bad input.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService, type BuildService } from '../../service/build-service.js';
import { createMcpServer } from '../tools.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let svc: BuildService;
let client: Client;
let engine: string;
let buildId: string;

beforeAll(async () => {
  requireBuilt();
  dir = tempDir('tbs-mcp-explain-');
  const model = writeModel(path.join(dir, 'model.onnx'), { layers: 2, extraNodes: [{ op: 'Tanh', inputs: ['probs'], outputs: ['t'] }] });
  svc = createBuildService({ outputDir: path.join(dir, 'engines'), profiles: null });
  engine = path.join(dir, 'm.engine');
  const rec = await svc.startBuild({ modelPath: model, outputPath: engine, options: { backend: 'simulated', simDuration: 0.2, precision: ['fp16'] } });
  buildId = rec.id;
  expect((await svc.waitForResult(rec.id)).status).toBe('succeeded');
  const server = createMcpServer(svc, { version: 'test' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
});
afterAll(async () => {
  await client?.close();
  await svc?.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

const text = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text;

describe('explain_engine', () => {
  it('a build by id: its layers, checked against fp16 (the Tanh left in FP32 is named), no times without a profile', async () => {
    const r = await client.callTool({ name: 'explain_engine', arguments: { buildId } });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as { summary: { count: number }; check: { expected: string; wider: Array<{ name: string }>; text: string }; slowest: unknown[] };
    expect(out.check.expected).toBe('fp16');
    expect(out.check.wider.map((w) => w.name)).toEqual([expect.stringMatching(/^tanh/i)]);
    expect(out.slowest).toEqual([]);
    expect(text(r)).toMatch(/^\d+ layers \(fp16 \d+, fp32 \d+\), TensorRT 10\.x layer information\nPrecision: \d+ of \d+ compute layers run FP16; 1 run FP32: tanh/);
    expect(text(r)).toMatch(/No per-layer times: give a profile/);
    // The same layers as the file the build saved.
    const saved = JSON.parse(fs.readFileSync(`${engine}.layers.json`, 'utf8')) as { Layers: unknown[] };
    expect(out.summary.count).toBe(saved.Layers.length);
  });

  it('a layer JSON by path with a profile: the slowest layers with their share, exactly as the profile says', async () => {
    const saved = JSON.parse(fs.readFileSync(`${engine}.layers.json`, 'utf8')) as { Layers: Array<{ Name: string }> };
    const times = saved.Layers.map((l, i) => ({ name: l.Name, timeMs: (i + 1) * 0.125, averageMs: (i + 1) * 0.125, medianMs: (i + 1) * 0.125, percentage: 0 }));
    const profile = path.join(dir, 'profile.json');
    fs.writeFileSync(profile, JSON.stringify([{ count: 10 }, ...times]));
    const r = await client.callTool({ name: 'explain_engine', arguments: { path: `${engine}.layers.json`, profilePath: profile, expect: 'fp16', slowest: 2 } });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as { slowest: Array<{ name: string; timeMs: number; type?: string }>; summary: { totalMs: number } };
    const last = times[times.length - 1]!;
    expect(out.slowest.map((s) => [s.name, s.timeMs])).toEqual([
      [last.name, last.timeMs],
      [times[times.length - 2]!.name, times[times.length - 2]!.timeMs],
    ]);
    expect(out.slowest[0]!.type).toBe('Tanh'); // the last layer, left in FP32: no reformat after it
    expect(out.summary.totalMs).toBeCloseTo(
      times.reduce((a, t) => a + t.timeMs, 0),
      9,
    );
    expect(text(r)).toMatch(/Profiled: [\d.]+ ms in all; slowest:\n {2}[\d.]+ ms \([\d.]+%\) {2}tanh\w* \[Tanh, fp32\]\n/i);
  });

  it("build_engine's result carries the precision check, in its fields and its message", async () => {
    const model = path.join(dir, 'model.onnx');
    const r = await client.callTool({
      name: 'build_engine',
      arguments: { modelPath: model, outputPath: path.join(dir, 'b.engine'), options: { backend: 'simulated', simDuration: 0.2, precision: ['fp16'] } },
    });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as { message: string; layers: { expected: string; wider: number; widerNames: string[] } };
    expect(out.layers).toMatchObject({ expected: 'fp16', wider: 1, widerNames: [expect.stringMatching(/^tanh/i)] });
    expect(out.message).toMatch(/bytes written to .*b\.engine\. Layers: \d+ of \d+ compute layers run FP16; 1 run FP32: tanh\w*$/i);
  });

  it('an engine path reads the layer JSON beside it; bad input is a tool error naming the problem', async () => {
    const byEngine = await client.callTool({ name: 'explain_engine', arguments: { path: engine } });
    expect(byEngine.isError).toBeFalsy();
    const none = await client.callTool({ name: 'explain_engine', arguments: {} });
    expect(none.isError).toBe(true);
    expect(text(none)).toMatch(/either buildId or path/);
    const unknown = await client.callTool({ name: 'explain_engine', arguments: { buildId: 'nope' } });
    expect(text(unknown)).toMatch(/unknown build "nope"/);
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, '['.repeat(5000));
    const hostile = await client.callTool({ name: 'explain_engine', arguments: { path: bad } });
    expect(hostile.isError).toBe(true);
    expect(text(hostile)).toMatch(/nested deeper than/);
    const missing = await client.callTool({ name: 'explain_engine', arguments: { path: path.join(dir, 'none.engine') } });
    expect(text(missing)).toMatch(/no layer information for/);
  });
});
