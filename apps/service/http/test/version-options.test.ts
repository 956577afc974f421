// The version-dependent build options over HTTP, against the real build service (its backend list
// fixed to imitate TensorRT 11.1): accepted where the version has them, refused with 400 and the
// service's message naming the option before any worker builds.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../../test/support/onnx-gen.js';
import type { BackendInfo } from '../../../shared/protocol.js';
import { BuildService } from '../../build-service.js';
import { createHttpServer, type BuildHttpServer } from '../server.js';

const TOKEN = 'test-token-versions-0123';

class Trt11Service extends BuildService {
  override async listBackends(): Promise<BackendInfo[]> {
    return [
      { name: 'tensorrt', available: false, reason: 'no libnvinfer here' },
      { name: 'simulated', available: true, version: 'sim-1', emulates: '11.1.0' },
    ];
  }
}

let dir: string;
let model: string;
let service: Trt11Service;
let server: BuildHttpServer;
let base: string;

beforeAll(async () => {
  dir = tempDir('tbs-http-versions-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 1 });
  fs.mkdirSync(path.join(dir, 'uploads'));
  fs.mkdirSync(path.join(dir, 'ui'));
  service = new Trt11Service({ outputDir: path.join(dir, 'engines') });
  server = createHttpServer({ service, token: TOKEN, uploadDir: path.join(dir, 'uploads'), staticDir: path.join(dir, 'ui') });
  base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
});

afterAll(async () => {
  await server.close();
  await service.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(options: Record<string, unknown>): Promise<{ status: number; message?: string }> {
  const res = await fetch(`${base}/api/builds`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelPath: model, outputPath: path.join(dir, 'e.engine'), options: { backend: 'simulated', simDuration: 0.2, ...options } }),
  });
  const body = (await res.json()) as { error?: { message: string } };
  return { status: res.status, message: body.error?.message };
}

describe('version-dependent options over HTTP', () => {
  it.each([
    [{ precision: ['fp16'] }, /precision "fp16": TensorRT 11\.1\.0 has no precision flags\. TensorRT 11 builds strongly typed networks; cast or quantize/],
    [{ buildRoute: 'r', stronglyTyped: true, precision: ['int8'] }, /precision "int8": TensorRT 11\.1\.0 has no precision flags/],
    [{ device: 1.5 }, /options\.device/],
    [{ maxAuxStreams: 2 ** 40 }, /options\.maxAuxStreams: at most 2147483647/],
  ])('%o → 400 naming the option', async (options, msg) => {
    const r = await start(options);
    expect(r.status).toBe(400);
    expect(r.message).toMatch(msg);
    expect(service.listBuilds()).toEqual([]);
  });

  it('accepts the options 11.1 has (a build route as NVIDIA writes one, device, strongly typed)', async () => {
    const r = await start({ buildRoute: '-conv_use_long_w=off -kgen:codegen:cuda_tile=2', device: 0, stronglyTyped: true, inferCacheMisses: true });
    expect(r.status).toBe(201);
    const [build] = service.listBuilds();
    expect(build.options).toMatchObject({ buildRoute: '-conv_use_long_w=off -kgen:codegen:cuda_tile=2', device: 0, inferCacheMisses: true });
    await service.waitForResult(build.id);
  });
});
