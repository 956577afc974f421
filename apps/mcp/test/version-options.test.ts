// The version-dependent build options through MCP: advertised in tools/list with what they need,
// and refused with the service's own usage error (a tool error) before any worker builds. The
// service is the real one; only its backend list is fixed, to imitate TensorRT 11.1.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { BuildService } from '../../service/build-service.js';
import type { BackendInfo } from '../../shared/protocol.js';
import { createMcpServer } from '../tools.js';

const dir = tempDir('tbs-mcp-versions-');
const model = writeModel(path.join(dir, 'm.onnx'), { layers: 1 });

class Trt11Service extends BuildService {
  started = 0;
  override async listBackends(): Promise<BackendInfo[]> {
    return [
      { name: 'tensorrt', available: false, reason: 'no libnvinfer here' },
      { name: 'simulated', available: true, version: 'sim-1', emulates: '11.1.0' },
    ];
  }
}

const service = new Trt11Service({ outputDir: path.join(dir, 'engines') });
afterAll(async () => {
  await service.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function connect(): Promise<Client> {
  const server = createMcpServer(service, { version: 'test' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  return client;
}

const text = (r: { content?: unknown }) => ((r.content as Array<{ text?: string }>) ?? []).map((c) => c.text ?? '').join('\n');

describe('version-dependent options over MCP', () => {
  it('tools/list describes device, shapeValues, buildRoute and inferCacheMisses', async () => {
    const c = await connect();
    const { tools } = await c.listTools();
    for (const name of ['build_engine', 'start_build']) {
      const props = (tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, { properties: Record<string, { description?: string }> }>).options.properties;
      expect(props.device.description).toMatch(/CUDA device/);
      expect(props.shapeValues.description).toMatch(/shape-tensor inputs/);
      expect(props.buildRoute.description).toMatch(/11\.1/);
      expect(props.inferCacheMisses.description).toMatch(/misses/);
      expect(props.precision.description).toMatch(/Refused on TensorRT 11/);
    }
    await c.close();
  });

  it.each([
    [{ precision: ['fp16'] }, /precision "fp16": TensorRT 11\.1\.0 has no precision flags\. TensorRT 11 builds strongly typed networks; cast or quantize the model offline/],
    [{ device: -2 }, /options\.device/],
    [{ workspaceMiB: 2 ** 60 }, /options\.workspaceMiB: at most/],
  ])('%o is refused naming the option (invalid params, or a tool error for what the version decides)', async (options, msg) => {
    const c = await connect();
    for (const name of ['build_engine', 'start_build']) {
      // Options that no version accepts are invalid arguments (-32602, before the tool runs);
      // what only this TensorRT version refuses is the tool's own error result.
      const r = await c.callTool({ name, arguments: { modelPath: model, options: { backend: 'simulated', ...options } } }).catch((e: { code?: number; message: string }) => {
        expect(e.code, name).toBe(-32602);
        return { isError: true, content: [{ type: 'text', text: e.message }] };
      });
      expect(r.isError, name).toBe(true);
      expect(text(r as never)).toMatch(msg);
    }
    expect(service.listBuilds()).toEqual([]);
    await c.close();
  });
});
