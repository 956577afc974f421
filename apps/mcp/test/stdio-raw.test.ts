// The stdio channel at the byte level, below the SDK client: stdout must carry JSON-RPC and nothing
// else for a whole build (worker output, logs and warnings go to stderr), and a malformed line from
// the client must not take the server down.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { isAlive, SERVER_JS, waitFor } from './harness.js';

let dir: string;
let model: string;
beforeAll(() => {
  dir = tempDir('tbs-mcp-raw-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 3 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('writes only JSON-RPC to stdout through a whole build, and survives a malformed line', async () => {
  const child = spawn(process.execPath, [SERVER_JS], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines: string[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  const send = (msg: unknown) => child.stdin.write(`${JSON.stringify(msg)}\n`);
  const response = async (id: number) =>
    waitFor(`response ${id}`, () => lines.map((l) => JSON.parse(l)).find((m) => m.id === id && !m.method), 20_000);

  child.stdin.write('this is not JSON-RPC\n');
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const init = await response(1);
  expect(init.result.serverInfo.name).toBe('trt-build-studio');
  expect(init.result.capabilities.tools).toBeDefined();
  expect(init.result.instructions).toMatch(/build_engine/);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });

  const out = path.join(dir, 'm.engine');
  send({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'build_engine', arguments: { modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 0.8 } }, _meta: { progressToken: 'tok-1' } },
  });
  const result = await response(2);
  expect(result.result.structuredContent.status).toBe('succeeded');
  expect(fs.existsSync(out)).toBe(true);

  for (const line of lines) {
    const msg = JSON.parse(line); // throws on anything that is not JSON
    expect(msg.jsonrpc).toBe('2.0');
  }
  const progress = lines.map((l) => JSON.parse(l)).filter((m) => m.method === 'notifications/progress');
  expect(progress.length).toBeGreaterThan(1);
  expect(progress.every((m) => m.params.progressToken === 'tok-1')).toBe(true);
  // The server's own logs went to stderr.
  expect(stderr).toMatch(/MCP server ready on stdio/);
  expect(stderr).toMatch(/succeeded in/);

  child.stdin.end();
  await waitFor('the server to exit', () => (child.exitCode !== null || !isAlive(child.pid!)) || undefined, 10_000);
  expect(child.exitCode).toBe(0);
});

it('prints usage for --help and rejects unknown flags with exit code 2', () => {
  const help = spawnSync(process.execPath, [SERVER_JS, '--help'], { encoding: 'utf8' });
  expect(help.status).toBe(0);
  expect(help.stdout).toMatch(/^Usage: trt-build-studio mcp/);
  expect(help.stdout).toContain('"mcpServers"');
  const bad = spawnSync(process.execPath, [SERVER_JS, '--port', '80'], { encoding: 'utf8' });
  expect(bad.status).toBe(2);
  expect(bad.stdout).toBe('');
  expect(bad.stderr).toMatch(/unknown argument "--port"/);
});
