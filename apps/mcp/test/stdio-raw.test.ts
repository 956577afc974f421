// The stdio channel at the byte level, below the SDK client: stdout must carry JSON-RPC and nothing
// else for a whole build (worker output, logs and warnings go to stderr), and a malformed line from
// the client must not take the server down.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
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
  const response = async (id: number) => waitFor(`response ${id}`, () => lines.map((l) => JSON.parse(l)).find((m) => m.id === id && !m.method), 20_000);

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
  await waitFor('the server to exit', () => child.exitCode !== null || !isAlive(child.pid!) || undefined, 10_000);
  expect(child.exitCode).toBe(0);
});

// Every hostile line from the "Hardening" table of docs/mcp.md, with the error JSON-RPC 2.0 asks
// for: -32700 when the line is not JSON, -32600 when it is JSON but no valid message, carrying the
// request's id when it has a usable one and null otherwise.
const HOSTILE: Array<{ line: string; code: -32700 | -32600; id: string | number | null }> = [
  { line: 'this is not JSON-RPC', code: -32700, id: null },
  { line: '{"jsonrpc":"2.0","id":17,"method":', code: -32700, id: null },
  { line: '{"jsonrpc":"2.0","id":11}', code: -32600, id: 11 },
  { line: '{"jsonrpc":"1.0","id":12,"method":"tools/list"}', code: -32600, id: 12 },
  { line: '{"id":13,"method":"tools/list"}', code: -32600, id: 13 },
  { line: '{"jsonrpc":"2.0","id":"s14","method":42}', code: -32600, id: 's14' },
  { line: '{"jsonrpc":"2.0","id":16,"method":"tools/list","params":"bad"}', code: -32600, id: 16 },
  { line: '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', code: -32600, id: null },
  { line: '{"jsonrpc":"2.0","id":null,"method":"ping"}', code: -32600, id: null },
  { line: '{"jsonrpc":"2.0","method":7}', code: -32600, id: null },
  { line: '[{"jsonrpc":"2.0","id":15,"method":"ping"}]', code: -32600, id: null },
  { line: '[]', code: -32600, id: null },
  { line: '42', code: -32600, id: null },
  { line: '"a string"', code: -32600, id: null },
  { line: 'null', code: -32600, id: null },
];

/** The SDK client on pipes the test also reads: lines seen before connect() stay with the test. */
class PipeTransport implements Transport {
  onmessage?: (m: JSONRPCMessage) => void;
  onerror?: (e: Error) => void;
  onclose?: () => void;
  private started = false;
  constructor(private readonly stdin: NodeJS.WritableStream) {}
  async start() {
    this.started = true;
  }
  deliver(line: string) {
    if (this.started) this.onmessage?.(JSONRPCMessageSchema.parse(JSON.parse(line)));
  }
  async send(m: JSONRPCMessage) {
    this.stdin.write(`${JSON.stringify(m)}\n`);
  }
  async close() {
    this.onclose?.();
  }
}

it('answers every invalid line with the JSON-RPC error it calls for and keeps serving the SDK client', async () => {
  const child = spawn(process.execPath, [SERVER_JS], { stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const transport = new PipeTransport(child.stdin);
    const lines: string[] = [];
    readline.createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (l) => {
      lines.push(l);
      transport.deliver(l);
    });
    for (const h of HOSTILE) child.stdin.write(`${h.line}\n`);
    // Blank lines are skipped, a malformed response from the client is never answered, and a line
    // past the size limit (8 MiB) is dropped without being held whole, answered with id null.
    child.stdin.write('\n  \r\n');
    child.stdin.write('{"jsonrpc":"2.0","id":18,"result":1}\n');
    child.stdin.write(`{"jsonrpc":"2.0","id":19,"method":"ping","pad":"${'x'.repeat(9 * 1024 * 1024)}"}\n`);
    const expected = HOSTILE.length + 1;
    await waitFor(`${expected} error replies`, () => (lines.length >= expected ? true : undefined), 20_000);
    const replies = lines.map((l) => JSON.parse(l));
    // Replies come in line order: each hostile line's answer sits at its index.
    HOSTILE.forEach((h, i) => {
      expect(replies[i], `reply to ${h.line}`).toEqual({ jsonrpc: '2.0', id: h.id, error: { code: h.code, message: expect.any(String) } });
    });
    // Nothing for the blank lines or the malformed response (id 18): next is the oversized line's.
    expect(replies[HOSTILE.length]).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/8388608 bytes/) } });
    expect(replies).toHaveLength(expected);

    // The official SDK client, on the same connection, works as if nothing had happened.
    const client = new Client({ name: 'after-junk', version: '1' });
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('trt-build-studio');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('build_engine');
    await client.ping();
    expect(stderr).toMatch(/invalid JSON-RPC/);

    child.stdin.end();
    await waitFor('the server to exit', () => child.exitCode !== null || !isAlive(child.pid!) || undefined, 10_000);
    expect(child.exitCode).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
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
