// Build routes read from a TensorRT 11.1 library, end to end: the real CLI and HTTP server, the
// real service and build worker, the addon, the 11.1 adapter (libtbs_trt11.so) and the scripted
// fake libnvinfer 11.1 built from the 11.1 headers (native/test/trt/fake_full_nvinfer.cc, whose
// getAllBuildRoutes() lists -conv_use_long_w and -kgen:codegen:cuda_tile, tuner_version 2.19.15;
// the simulator's says "sim-2.19.15", so the two cannot be mistaken). Our own fakes, not NVIDIA's
// library: this proves the wiring (worker, off the JS thread, disk cache, every surface), not what
// a real 11.1 returns. Skipped, saying why, where the addon was built without 11.x headers
// (test/support/trt-fakes.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { trtFakeBuild } from '../../../test/support/trt-fakes.js';
import type { BuildRoutesRead } from '../../shared/build-routes.js';
import type { BackendInfo } from '../../shared/protocol.js';

const fake = trtFakeBuild(11);
const missing = 'missing' in fake ? fake.missing : undefined;
if (missing) console.warn(`skipped: TensorRT 11.1 build-route tests: ${missing}`);

type Db = { tuner_version?: string; tuner_options: { option: string; allowed_values: string; default_value?: string }[] };

describe.skipIf(missing !== undefined)('build routes read from a TensorRT 11.1 library (11.1 adapter × fake 11.1)', () => {
  let dir: string;
  let stateDir: string;
  let model: string;
  let env: NodeJS.ProcessEnv;
  const routesDir = () => path.join(stateDir, 'build-routes');
  const cli = (args: string[]) => runCli(args, { env });
  const tensorrt = async () => {
    const r = await cli(['backends', '--json']);
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as BackendInfo[]).find((b) => b.name === 'tensorrt')!;
  };

  beforeAll(() => {
    if ('missing' in fake) return;
    dir = tempDir('tbs-trt11-routes-');
    stateDir = path.join(dir, 'state');
    model = writeModel(path.join(dir, 'm.onnx'), { layers: 1 });
    env = { ...process.env, ...fake.env, TBS_STATE_DIR: stateDir };
    delete env.TBS_SIM_TRT_VERSION;
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('before anything asks, listing backends creates no builder and lists no routes', async () => {
    const trt = await tensorrt();
    expect(trt).toMatchObject({ available: true, adapter: { major: 11 } });
    expect(trt.library?.version).toBe('11.1.0');
    expect(trt.buildRoutes).toBeUndefined();
    expect(trt.detail?.buildRoutes).toContain('not read yet');
    expect(fs.existsSync(routesDir())).toBe(false);
  });

  it('trtexec --helpBuildRoute reads the knob database from the library and keeps it on disk', async () => {
    const r = await cli(['trtexec', '--helpBuildRoute']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const db = JSON.parse(r.stdout) as Db;
    expect(db.tuner_version).toBe('2.19.15'); // the library's, not the simulator's "sim-2.19.15"
    expect(db.tuner_options).toEqual([
      { option: '-conv_use_long_w', allowed_values: '-conv_use_long_w=[on|off]', default_value: 'on' },
      { option: '-kgen:codegen:cuda_tile', allowed_values: '-kgen:codegen:cuda_tile=[0|1|2|3]' },
    ]);
    const files = fs.readdirSync(routesDir());
    expect(files).toHaveLength(1);
    const [key, ...rest] = fs.readFileSync(path.join(routesDir(), files[0]), 'utf8').split('\n');
    expect(key.split('\t').slice(0, 2)).toEqual(['tbs-build-routes 1', (fake as { nvinfer: string }).nvinfer]);
    expect(JSON.parse(rest.join('\n'))).toMatchObject({ tuner_version: '2.19.15' });
  });

  it('the knob filter, with or without the dash, and a bad knob name (exit 2, naming the knobs there are)', async () => {
    const one = await cli(['trtexec', '--helpBuildRoute=kgen:codegen:cuda_tile']);
    expect(one.code).toBe(0);
    expect((JSON.parse(one.stdout) as Db).tuner_options.map((o) => o.option)).toEqual(['-kgen:codegen:cuda_tile']);
    const dashed = await cli(['trtexec', '--helpBuildRoute=-conv_use_long_w']);
    expect((JSON.parse(dashed.stdout) as Db).tuner_options).toEqual([{ option: '-conv_use_long_w', allowed_values: '-conv_use_long_w=[on|off]', default_value: 'on' }]);
    const bad = await cli(['trtexec', '--helpBuildRoute=warp_speed']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('--helpBuildRoute=warp_speed: no such knob in the database (knobs: -conv_use_long_w, -kgen:codegen:cuda_tile)');
  });

  it('later listings report the routes from the disk cache, and routes are checked against them', async () => {
    const trt = await tensorrt();
    expect(trt.buildRoutes).toEqual(['-conv_use_long_w=[on|off]', '-kgen:codegen:cuda_tile=[0|1|2|3]']);
    expect(JSON.parse(trt.detail!.buildRoutesJson!)).toMatchObject({ tuner_version: '2.19.15' });
    const engine = path.join(dir, 'p.engine');
    const pattern = await cli(['build', model, '-o', engine, '--backend', 'tensorrt', '--build-route', '-conv_use_long_w=[on|off]']);
    expect(pattern.code).toBe(2);
    expect(pattern.stderr).toContain('knob -conv_use_long_w');
    const value = await cli(['build', model, '-o', engine, '--backend', 'tensorrt', '--build-route', '-kgen:codegen:cuda_tile=9']);
    expect(value.code).toBe(2);
    expect(value.stderr).toContain('knob -kgen:codegen:cuda_tile does not take "9"; allowed: -kgen:codegen:cuda_tile=[0|1|2|3]');
    expect(fs.existsSync(engine)).toBe(false);
  });

  it('a later --helpBuildRoute answers from the disk cache, not the library', async () => {
    // The cache file is what a second read uses: change its JSON (same key line) and the answer follows.
    const file = path.join(routesDir(), fs.readdirSync(routesDir())[0]);
    const original = fs.readFileSync(file, 'utf8');
    const key = original.split('\n')[0];
    fs.writeFileSync(file, `${key}\n${JSON.stringify({ tuner_version: 'from-disk', tuner_options: [{ option: '-only_on_disk', allowed_values: '-only_on_disk=[a|b]' }] })}`);
    try {
      const r = await cli(['trtexec', '--helpBuildRoute']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ tuner_version: 'from-disk', tuner_options: [{ option: '-only_on_disk' }] });
    } finally {
      fs.writeFileSync(file, original);
    }
  });

  it("GET /api/backends/build-routes: the form's picker gets the same database, read from the library on a fresh cache", async () => {
    fs.rmSync(routesDir(), { recursive: true, force: true });
    const { createBuildService } = await import('../../service/build-service.js');
    const { createHttpServer } = await import('../../service/http/server.js');
    const saved = { ...process.env };
    Object.assign(process.env, env); // the service's workers inherit it
    const service = createBuildService({ outputDir: path.join(dir, 'engines') });
    fs.mkdirSync(path.join(dir, 'uploads'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'ui'), { recursive: true });
    const token = 'test-token-trt11-routes';
    const server = createHttpServer({ service, token, uploadDir: path.join(dir, 'uploads'), staticDir: path.join(dir, 'ui') });
    try {
      const base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
      const get = async (p: string) => {
        const res = await fetch(`${base}${p}`, { headers: { Authorization: `Bearer ${token}` } });
        return { status: res.status, body: (await res.json()) as unknown };
      };
      const first = await get('/api/backends/build-routes?backend=tensorrt');
      expect(first.status).toBe(200);
      const read = first.body as BuildRoutesRead;
      expect(read).toMatchObject({ backend: 'tensorrt', version: '11.1.0', source: 'library' });
      expect((JSON.parse(read.json) as Db).tuner_options.map((o) => o.option)).toEqual(['-conv_use_long_w', '-kgen:codegen:cuda_tile']);
      expect(fs.readdirSync(routesDir())).toHaveLength(1);
      // The service's listing is refreshed: the picker's next listing has the database.
      const listed = (await get('/api/backends')).body as BackendInfo[];
      expect(listed.find((b) => b.name === 'tensorrt')?.buildRoutes).toEqual(['-conv_use_long_w=[on|off]', '-kgen:codegen:cuda_tile=[0|1|2|3]']);
      const again = (await get('/api/backends/build-routes')).body as BuildRoutesRead;
      expect(again).toMatchObject({ backend: 'tensorrt', source: 'disk cache' });
      expect(await get('/api/backends/build-routes?backend=cuda')).toMatchObject({ status: 400 });
    } finally {
      await server.close();
      await service.shutdown();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  // The fake lists FAKE_TRT_BUILD_ROUTES instead of the header's example (fake_full_nvinfer.cc).
  it('a database with a range and spaced alternatives: printed verbatim, and routes checked as the tuner reads it', async () => {
    fs.rmSync(routesDir(), { recursive: true, force: true });
    const db =
      '{"tuner_version": "2.20", "tuner_options": [{"option": "-threads", "allowed_values": "-threads=[1...64]"}, {"option": "-k", "allowed_values": "-k=[a | b]"}, {"option": "-n", "allowed_values": 7}]}';
    const withDb = (args: string[]) => runCli(args, { env: { ...env, FAKE_TRT_BUILD_ROUTES: db } });
    const help = await withDb(['trtexec', '--helpBuildRoute']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(`${db}\n`);
    const engine = path.join(dir, 'r.engine');
    const out = await withDb(['build', model, '-o', engine, '--backend', 'tensorrt', '--build-route', '-threads=65']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('knob -threads takes an integer from 1 to 64, not "65"');
    const ok = await withDb(['build', model, '-o', engine, '--backend', 'tensorrt', '--build-route', '-threads=8 -k=b -n=anything']);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
  });

  it('an empty database is "no routes", kept on disk and said so', async () => {
    fs.rmSync(routesDir(), { recursive: true, force: true });
    const empty = (args: string[]) => runCli(args, { env: { ...env, FAKE_TRT_BUILD_ROUTES: '' } });
    const help = await empty(['trtexec', '--helpBuildRoute']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe('\n');
    expect(help.stderr).toContain('TensorRT 11.1.0 lists no build routes');
    const files = fs.readdirSync(routesDir());
    expect(files).toHaveLength(1);
    expect(fs.readFileSync(path.join(routesDir(), files[0]), 'utf8').split('\n').slice(1)).toEqual(['']);
    const listed = await empty(['backends', '--json']);
    const trt = (JSON.parse(listed.stdout) as BackendInfo[]).find((b) => b.name === 'tensorrt')!;
    expect(trt.buildRoutes).toEqual([]);
    expect(trt.detail?.buildRoutes).toContain('lists no build routes');
    const knob = await empty(['trtexec', '--helpBuildRoute=threads']);
    expect(knob.code).toBe(2);
    expect(knob.stderr).toContain('--helpBuildRoute=threads: no such knob in the database (TensorRT 11.1.0 lists no build routes)');
  });
});
