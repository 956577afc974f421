// GET /api/engines and POST /api/engines/delete over a real socket, against the real build
// service running simulated builds into its default output folder.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineFile } from '../../../shared/engine-files.js';
import { createBuildService, type BuildService } from '../../build-service.js';
import { createHttpServer, type BuildHttpServer } from '../server.js';
import { requireBuilt } from '../../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../../test/support/onnx-gen.js';

const TOKEN = 'engines-token-0123456789';
const auth = { Authorization: `Bearer ${TOKEN}` };

let dir: string;
let engines: string;
let model: string;
let svc: BuildService;
let server: BuildHttpServer;
let base: string;

function api(p: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${p}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
}
function del(body: unknown): Promise<Response> {
  return api('/api/engines/delete', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}
async function list(): Promise<EngineFile[]> {
  const res = await api('/api/engines');
  expect(res.status).toBe(200);
  return (await res.json()) as EngineFile[];
}
async function build(simDuration: number): Promise<string> {
  const res = await api('/api/builds', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelPath: model, options: { backend: 'simulated', simDuration, simSeed: 3 } }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  requireBuilt();
  dir = tempDir('tbs-http-engines-');
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
  engines = path.join(dir, 'engines');
  model = writeModel(path.join(dir, 'net.onnx'), { layers: 4 });
  svc = createBuildService({ outputDir: engines });
  server = createHttpServer({ service: svc, token: TOKEN, uploadDir: path.join(dir, 'uploads'), heartbeatMs: 1000 });
  base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
});
afterAll(async () => {
  await server.close();
  await svc.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('/api/engines', () => {
  it('needs the token like every /api route', async () => {
    expect((await fetch(`${base}/api/engines`)).status).toBe(401);
    expect((await fetch(`${base}/api/engines/delete`, { method: 'POST' })).status).toBe(401);
  });

  it('lists the engines of the default folder, newest first, with the build that wrote them', async () => {
    expect(await list()).toEqual([]); // no folder yet: nothing, not an error
    const id = await build(0.2);
    expect((await svc.waitForResult(id)).status).toBe('succeeded');
    const written = svc.getBuild(id)!.outputPath!;
    expect(path.dirname(written)).toBe(engines);
    // Things that are not finished engines of this folder stay out of the list.
    const foreign = path.join(engines, 'other.engine');
    fs.writeFileSync(foreign, 'not a simulated header, e.g. a real TensorRT plan');
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(foreign, old, old);
    fs.writeFileSync(path.join(engines, 'half.engine.tmp-123-0'), 'partial');
    fs.writeFileSync(path.join(engines, 'notes.txt'), 'x');
    fs.mkdirSync(path.join(engines, 'folder.engine'));
    fs.writeFileSync(path.join(dir, 'outside.engine'), 'x');
    fs.symlinkSync(path.join(dir, 'outside.engine'), path.join(engines, 'link.engine'));

    // An engine with no manifest of this product beside it (another program's, or a copy) is not
    // one of this user's engines of this folder: it stays out too (issue 23: the panel lists this
    // user's engines from the product's own folder).
    const files = await list();
    expect(files.map((f) => f.name)).toEqual([path.basename(written)]);
    expect(files[0]).toMatchObject({ buildId: id, simulated: true, bytes: fs.statSync(written).size });
  });

  it('serves and attributes an engine only while it is the file the build wrote (size, inode, mtime)', async () => {
    const id = await build(0.2);
    expect((await svc.waitForResult(id)).status).toBe('succeeded');
    const written = svc.getBuild(id)!.outputPath!;
    const original = fs.readFileSync(written);
    expect((await api(`/api/builds/${id}/engine`)).status).toBe(200);
    expect((await list()).find((f) => f.name === path.basename(written))?.buildId).toBe(id);

    // Someone swaps the file after the build (same size, same name: only the inode differs).
    const planted = `${written}.planted`;
    fs.writeFileSync(planted, Buffer.alloc(original.length, 0x41));
    fs.renameSync(planted, written);
    const res = await api(`/api/builds/${id}/engine`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/was replaced after the build wrote it/);
    expect(svc.getBuild(id)!.engineAvailable).toBe(false);
    const listed = (await list()).find((f) => f.name === path.basename(written));
    expect(listed).toBeDefined(); // still in the folder, but not attributed to the build
    expect(listed!.buildId).toBeUndefined();

    // Rewritten in place (same inode, new mtime): not the build's either.
    const id2 = await build(0.2);
    expect((await svc.waitForResult(id2)).status).toBe('succeeded');
    const second = svc.getBuild(id2)!.outputPath!;
    expect((await api(`/api/builds/${id2}/engine`)).status).toBe(200);
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(second, later, later);
    expect((await api(`/api/builds/${id2}/engine`)).status).toBe(404);
    // The folder as the next test expects it.
    for (const f of [written, second]) fs.rmSync(f);
  });

  it('refuses names that are paths, not engines, not regular files or missing, and touches nothing', async () => {
    const res = await del({ names: ['../outside.engine', 'a/b.engine', '..', 'notes.txt', 'half.engine.tmp-123-0', 'link.engine', 'folder.engine', 'gone.engine'] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { deleted: string[]; refused: Array<{ name: string; reason: string }> };
    expect(body.deleted).toEqual([]);
    const reason = Object.fromEntries(body.refused.map((r) => [r.name, r.reason]));
    expect(reason['../outside.engine']).toMatch(/plain file name/);
    expect(reason['a/b.engine']).toMatch(/plain file name/);
    expect(reason['..']).toMatch(/plain file name/);
    expect(reason['notes.txt']).toMatch(/not an engine/);
    expect(reason['half.engine.tmp-123-0']).toMatch(/not an engine/);
    expect(reason['link.engine']).toMatch(/not a regular file/);
    expect(reason['folder.engine']).toMatch(/not a regular file/);
    expect(reason['gone.engine']).toMatch(/no such file/);
    for (const f of ['notes.txt', 'half.engine.tmp-123-0', 'link.engine', 'folder.engine']) expect(fs.existsSync(path.join(engines, f))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'outside.engine'))).toBe(true);
  });

  it('answers 400 naming the field for a bad body', async () => {
    for (const body of [{}, { names: 'x.engine' }, { names: [1] }, { names: [] }, ['x.engine']]) {
      const res = await del(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/names/);
    }
    const res = await api('/api/engines/delete', { method: 'POST', body: 'names=x' });
    expect(res.status).toBe(400);
  });

  it('refuses the file a running build will write, deletes finished ones', async () => {
    const running = await build(60);
    const target = path.basename(svc.getBuild(running)!.outputPath!);
    const [done] = (await list()).filter((f) => f.buildId);
    const res = await del({ names: [target, done.name, 'other.engine'] });
    const body = (await res.json()) as { deleted: string[]; refused: Array<{ name: string; reason: string }> };
    expect(body.refused).toEqual([{ name: target, reason: expect.stringMatching(/running or queued build/) }]);
    expect(body.deleted.sort()).toEqual([done.name, 'other.engine'].sort());
    expect(fs.existsSync(path.join(engines, done.name))).toBe(false);
    expect(fs.existsSync(path.join(engines, 'other.engine'))).toBe(false);
    expect((await list()).map((f) => f.name)).toEqual([]);
    expect(svc.getBuild(done.buildId!)!.engineAvailable).toBe(false);
    svc.cancelBuild(running);
    await svc.waitForResult(running);
  });
});

describe('GET /api/engines/check', () => {
  it('answers as `check` does: fits for a listed engine, rebuild naming an option, unknown without a manifest', async () => {
    const id = await build(0.2);
    expect((await svc.waitForResult(id)).status).toBe('succeeded');
    const written = svc.getBuild(id)!.outputPath!;
    const name = path.basename(written);
    const fits = await api(`/api/engines/check?engine=${encodeURIComponent(name)}`);
    expect(fits.status).toBe(200);
    expect(await fits.json()).toMatchObject({ verdict: 'fits', engine: written, manifest: `${written}.manifest.json`, reasons: [] });
    const opts = encodeURIComponent(JSON.stringify({ backend: 'simulated', simSeed: 3, optLevel: 1 }));
    const rebuild = await (await api(`/api/engines/check?engine=${encodeURIComponent(written)}&options=${opts}`)).json();
    expect(rebuild).toMatchObject({ verdict: 'rebuild', reasons: [{ kind: 'option', what: 'option optLevel', was: '3', now: '1' }] });
    fs.rmSync(`${written}.manifest.json`);
    expect(await (await api(`/api/engines/check?engine=${encodeURIComponent(name)}`)).json()).toMatchObject({ verdict: 'unknown', missing: [{ kind: 'no-manifest' }] });
  });

  it('refuses bad input with 400 and a message', async () => {
    const none = await api('/api/engines/check');
    expect(none.status).toBe(400);
    expect(JSON.stringify(await none.json())).toMatch(/engine/);
    const badJson = await api('/api/engines/check?engine=x.engine&options=%7B');
    expect(badJson.status).toBe(400);
    const badOpt = await api(`/api/engines/check?engine=x.engine&options=${encodeURIComponent('{"optLevel":9}')}`);
    expect(badOpt.status).toBe(400);
    expect(JSON.stringify(await badOpt.json())).toMatch(/optLevel/);
    expect((await api('/api/engines/check?engine=../../etc/passwd')).status).toBe(400);
  });
});
