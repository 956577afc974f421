// GET /api/builds/{id}/layers (issue 36 item 5) over a real socket, against the real build service
// running simulated builds: the saved layer JSON as `layers --json` reads it, with the precision
// check against what the build asked for; 404 for a build without layer information.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService, type BuildService } from '../../build-service.js';
import { createHttpServer, type BuildHttpServer } from '../server.js';
import { requireBuilt } from '../../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../../test/support/onnx-gen.js';

const TOKEN = 'layers-token-0123456789';
const auth = { Authorization: `Bearer ${TOKEN}` };

let dir: string;
let model: string;
let svc: BuildService;
let server: BuildHttpServer;
let base: string;

const api = (p: string) => fetch(`${base}${p}`, { headers: auth });
async function build(options: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${base}/api/builds`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelPath: model, options: { backend: 'simulated', simDuration: 0.2, ...options } }),
  });
  expect(res.status).toBe(201);
  const id = ((await res.json()) as { id: string }).id;
  await svc.waitForResult(id);
  return id;
}

beforeAll(async () => {
  requireBuilt();
  dir = tempDir('tbs-http-layers-');
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
  model = writeModel(path.join(dir, 'net.onnx'), { layers: 2, extraNodes: [{ op: 'Exp', inputs: ['probs'], outputs: ['e'] }] });
  svc = createBuildService({ outputDir: path.join(dir, 'engines') });
  server = createHttpServer({ service: svc, token: TOKEN, uploadDir: path.join(dir, 'uploads'), heartbeatMs: 1000 });
  base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
});
afterAll(async () => {
  await server.close();
  await svc.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('GET /api/builds/{id}/layers', () => {
  it('an fp16 build: every saved layer with its precision, and the check naming the layer left in FP32', async () => {
    const id = await build({ precision: ['fp16'] });
    expect((await fetch(`${base}/api/builds/${id}/layers`)).status).toBe(401);
    const res = await api(`/api/builds/${id}/layers`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      schema: string;
      detailed: boolean;
      layers: Array<{ name: string; precision?: string }>;
      summary: { count: number; byPrecision: Record<string, number> };
      check: { expected: string; wider: Array<{ name: string; precision: string }> };
    };
    const saved = JSON.parse(fs.readFileSync(`${svc.getBuild(id)!.outputPath!}.layers.json`, 'utf8')) as { Layers: Array<{ Name: string }> };
    expect(body.layers.map((l) => l.name)).toEqual(saved.Layers.map((l) => l.Name));
    expect(body).toMatchObject({ schema: '10.x', detailed: true, summary: { count: saved.Layers.length } });
    expect(body.check.expected).toBe('fp16');
    expect(body.check.wider).toEqual([{ name: expect.stringMatching(/^exp/i), type: 'Exp', precision: 'fp32' }]);
    // The same count as build.finished carried.
    expect(svc.getBuild(id)!.outcome!.layers).toMatchObject({ wider: 1, count: body.summary.count });
  });

  it('no precision asked for: no check; 404 for an unknown build, a failed one and one whose layer file is gone', async () => {
    const id = await build({});
    const body = (await (await api(`/api/builds/${id}/layers`)).json()) as Record<string, unknown>;
    expect(body.check).toBeUndefined();
    expect((await api('/api/builds/nope/layers')).status).toBe(404);
    const failed = await build({ simFault: 'fail' });
    const f = await api(`/api/builds/${failed}/layers`);
    expect(f.status).toBe(404);
    expect(((await f.json()) as { error: { message: string } }).error.message).toMatch(/has no engine \(it is failed\)/);
    fs.rmSync(`${svc.getBuild(id)!.outputPath!}.layers.json`);
    const gone = await api(`/api/builds/${id}/layers`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(/has no layer information/);
  });
});
