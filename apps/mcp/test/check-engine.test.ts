// The check_engine tool against the real build service (real workers, simulated backend), over the
// real SDK client and server linked in memory: the same answer as `trt-build-studio check`.
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

beforeAll(async () => {
  requireBuilt();
  dir = tempDir('tbs-mcp-check-');
  const model = writeModel(path.join(dir, 'model.onnx'), { layers: 4 });
  svc = createBuildService({ outputDir: path.join(dir, 'engines'), profiles: null });
  engine = path.join(dir, 'm.engine');
  const rec = await svc.startBuild({ modelPath: model, outputPath: engine, options: { backend: 'simulated', simDuration: 0.2 } });
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

describe('check_engine', () => {
  it('fits right after the build; names a changed option; says what is missing without a manifest', async () => {
    const fits = await client.callTool({ name: 'check_engine', arguments: { enginePath: engine } });
    expect(fits.isError).toBeFalsy();
    expect(fits.structuredContent).toMatchObject({ verdict: 'fits', engine, reasons: [] });
    const opt = await client.callTool({ name: 'check_engine', arguments: { enginePath: engine, options: { backend: 'simulated', precision: ['fp16'] } } });
    expect(opt.structuredContent).toMatchObject({ verdict: 'rebuild', reasons: [{ kind: 'option', what: 'option precision', was: '[]', now: '["fp16"]' }] });
    expect((opt.content as Array<{ text: string }>)[0].text).toMatch(/^Needs a rebuild: option precision: was \[\], now \["fp16"\]/);
    const gone = await client.callTool({ name: 'check_engine', arguments: { enginePath: path.join(dir, 'none.engine') } });
    expect(gone.structuredContent).toMatchObject({ verdict: 'unknown', missing: [{ kind: 'no-engine' }] });
  });

  it('bad options are a tool error naming the field', async () => {
    const r = await client.callTool({ name: 'check_engine', arguments: { enginePath: engine, options: { optLevel: 'high' } } });
    expect(r.isError).toBe(true);
    expect((r.content as Array<{ text: string }>)[0].text).toMatch(/options\.optLevel/);
  });
});
