// The HTTP layer on its own, in-process, against an in-memory build service whose builds move
// only when the test says so. Real sockets, real fetch, real multipart bodies, real files.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHttpServer, type BuildHttpServer } from '../server.js';
import { CONTENT_SECURITY_POLICY } from '../static-files.js';
import { FAKE_MAGIC, FakeBuildService } from './fake-service.js';
import { rawRequest } from './raw-request.js';
import { openSse } from './sse-client.js';

const TOKEN = 'test-token-0123456789';
const UPLOAD_LIMIT = 64 * 1024;

let dir: string;
let uploadDir: string;
let staticDir: string;
let fake: FakeBuildService;
let server: BuildHttpServer;
let port: number;
let base: string;
let model: string;

const auth = { Authorization: `Bearer ${TOKEN}` };

function api(p: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${p}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
}

function postJson(p: string, body: unknown): Promise<Response> {
  return api(p, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

async function expectError(res: Response, status: number, code: string, message?: RegExp): Promise<string> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status).toBe(status);
  expect(body.error.code).toBe(code);
  if (message) expect(body.error.message).toMatch(message);
  return body.error.message;
}

async function startBuild(options: Record<string, unknown> = {}): Promise<string> {
  const res = await postJson('/api/builds', { modelPath: model, options });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

function uploads(): string[] {
  return fs.readdirSync(uploadDir);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-http-unit-'));
  uploadDir = path.join(dir, 'uploads');
  staticDir = path.join(dir, 'renderer');
  fs.mkdirSync(uploadDir);
  fs.mkdirSync(path.join(staticDir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>TRT Build Studio</title>');
  fs.writeFileSync(path.join(staticDir, 'assets', 'index-3f2a1b.js'), 'console.log(1)');
  fs.writeFileSync(path.join(staticDir, 'assets', 'index-9c8d7e.css'), 'body{}');
  fs.writeFileSync(path.join(staticDir, 'favicon.svg'), '<svg/>');
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'outside the UI folder');
  fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(staticDir, 'link.txt'));
  model = path.join(dir, 'model.onnx');
  fs.writeFileSync(model, `${FAKE_MAGIC} weights`);
  fake = new FakeBuildService(dir);
  server = createHttpServer({ service: fake, token: TOKEN, uploadDir, staticDir, heartbeatMs: 50, maxUploadBytes: UPLOAD_LIMIT });
  port = await server.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('token', () => {
  it('refuses /api calls without a token, naming how to send one', async () => {
    const res = await fetch(`${base}/api/builds`);
    await expectError(res, 401, 'unauthorized', /Authorization: Bearer/);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('refuses a wrong or malformed token', async () => {
    await expectError(await fetch(`${base}/api/builds`, { headers: { Authorization: `Bearer ${TOKEN}x` } }), 401, 'unauthorized', /wrong token/);
    await expectError(await fetch(`${base}/api/builds`, { headers: { Authorization: 'Basic abc' } }), 401, 'unauthorized', /malformed/);
    await expectError(await fetch(`${base}/api/builds`, { headers: { Cookie: 'tbs_token=nope' } }), 401, 'unauthorized');
  });

  it('does not reveal which routes exist to a caller without the token', async () => {
    await expectError(await fetch(`${base}/api/nothing-here`), 401, 'unauthorized');
  });

  it('trades the token link for an HttpOnly SameSite cookie, then accepts the cookie', async () => {
    const res = await fetch(`${base}/?token=${TOKEN}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/');
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^tbs_token=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const ok = await fetch(`${base}/api/builds`, { headers: { Cookie: cookie.split(';')[0] } });
    expect(ok.status).toBe(200);
  });

  it('refuses a token link with the wrong token and sets no cookie', async () => {
    const res = await fetch(`${base}/?token=wrong`, { redirect: 'manual' });
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
  });
});

describe('host and origin', () => {
  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const res = await rawRequest(port, { path: '/api/builds', headers: { ...auth, Host: `evil.example:${port}` } });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe('forbidden');
    const wrongPort = await rawRequest(port, { path: '/', headers: { Host: `127.0.0.1:${port + 1}` } });
    expect(wrongPort.status).toBe(403);
  });

  it('accepts localhost, 127.0.0.1 and [::1] with the right port', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const res = await rawRequest(port, { path: '/api/builds', headers: { ...auth, Host: host } });
      expect(res.status, host).toBe(200);
    }
  });

  it('refuses a cross-origin request even with the token', async () => {
    const res = await rawRequest(port, { path: '/api/builds', headers: { ...auth, Origin: 'http://evil.example' } });
    expect(res.status).toBe(403);
    const same = await rawRequest(port, { path: '/api/builds', headers: { ...auth, Origin: `http://127.0.0.1:${port}` } });
    expect(same.status).toBe(200);
  });
});

describe('routes and errors', () => {
  it('answers unknown routes with 404 and wrong methods with 405 + Allow', async () => {
    await expectError(await api('/api/nothing-here'), 404, 'not_found', /no such API route/);
    const doubleSlash = await rawRequest(port, { path: '//evil/api/builds', headers: auth });
    expect(doubleSlash.status).toBe(200); // a UI path ("//evil/api/builds"), not a route and not a host
    expect(doubleSlash.headers['content-type']).toMatch(/text\/html/);
    const res = await api('/api/builds', { method: 'DELETE' });
    expect(res.headers.get('allow')).toBe('GET, POST');
    await expectError(res, 405, 'method_not_allowed');
    await expectError(await api('/api/builds/b1/cancel'), 405, 'method_not_allowed');
  });

  it('lists backends', async () => {
    const res = await api('/api/backends');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(await fake.listBackends());
  });

  it('rejects invalid JSON, a missing content type and an empty body with 400', async () => {
    await expectError(await api('/api/builds', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"modelPath": ' }), 400, 'bad_input', /invalid JSON/);
    await expectError(await api('/api/builds', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' }), 400, 'bad_input', /Content-Type/);
    await expectError(await api('/api/builds', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '' }), 400, 'bad_input', /empty/);
  });

  it('names the field in schema errors', async () => {
    await expectError(await postJson('/api/builds', {}), 400, 'bad_input', /modelPath/);
    await expectError(await postJson('/api/builds', { modelPath: model, options: { optLevel: 9 } }), 400, 'bad_input', /options\.optLevel/);
    await expectError(await postJson('/api/builds', { modelPath: model, options: { optlevel: 3 } }), 400, 'bad_input', /optlevel/);
    await expectError(await postJson('/api/builds', { modelPath: model, options: { shapes: ['x:1x3/2'] } }), 400, 'bad_input', /options\.shapes/);
    await expectError(await postJson('/api/builds', { modelPath: model, extra: 1 }), 400, 'bad_input', /extra/);
    await expectError(await postJson('/api/builds', [1, 2]), 400, 'bad_input');
  });

  it('rejects ".." segments and NUL bytes in every path field', async () => {
    const bad = [
      { modelPath: `${dir}/../etc/passwd` },
      { modelPath: '..\\secret.onnx' },
      { modelPath: `${model}\0.txt` },
      { modelPath: model, outputPath: `${dir}/out/../../x.engine` },
      { modelPath: model, options: { timingCache: '../cache.bin' } },
    ];
    for (const body of bad) {
      const msg = await expectError(await postJson('/api/builds', body), 400, 'bad_input');
      expect(msg).toMatch(/"\.\."|NUL/);
    }
    await expectError(await postJson('/api/models', { path: '../../etc/passwd' }), 400, 'bad_input', /path: ".."/);
    expect(fake.listBuilds().filter((b) => b.modelPath.includes('..'))).toEqual([]);
  });

  it('resolves paths to absolute ones before the service sees them', async () => {
    const res = await postJson('/api/builds', { modelPath: `${dir}/./model.onnx`, outputPath: `${dir}//./out.engine` });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(fake.builds.get(id)!.input.modelPath).toBe(model);
    expect(fake.builds.get(id)!.input.outputPath).toBe(path.join(dir, 'out.engine'));
    fake.finish(id, 'failed');
  });

  it('maps service errors: a missing model is 404, a bad one 422 with the reader message', async () => {
    await expectError(await postJson('/api/builds', { modelPath: path.join(dir, 'missing.onnx') }), 404, 'not_found', /missing\.onnx/);
    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'hello');
    await expectError(await postJson('/api/builds', { modelPath: text }), 422, 'bad_model', /notes\.txt is not an ONNX model/);
    await expectError(await postJson('/api/models', { path: text }), 422, 'bad_model', /not an ONNX model/);
  });

  it('hides internal errors behind a 500 without details', async () => {
    const original = fake.listBuilds;
    fake.listBuilds = () => {
      throw new Error('secret internals at /home/x');
    };
    try {
      const msg = await expectError(await api('/api/builds'), 500, 'internal');
      expect(msg).not.toMatch(/secret/);
    } finally {
      fake.listBuilds = original;
    }
  });

  it('refuses JSON bodies over 1 MiB with 413, declared or streamed', async () => {
    const big = JSON.stringify({ modelPath: model, pad: 'x'.repeat(1024 * 1024) });
    await expectError(await api('/api/builds', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: big }), 413, 'too_large');
    // Without a Content-Length (chunked), the limit applies while reading.
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res = await fetch(`${base}/api/builds`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: chunked, duplex: 'half' } as RequestInit);
    await expectError(res, 413, 'too_large');
  });
});

describe('uploads', () => {
  beforeEach(() => {
    for (const f of uploads()) fs.rmSync(path.join(uploadDir, f));
  });

  function form(content: string | Buffer, fileName = 'resnet.onnx', extra: Record<string, string> = {}): FormData {
    const fd = new FormData();
    for (const [k, v] of Object.entries(extra)) fd.append(k, v);
    fd.append('model', new Blob([content]), fileName);
    return fd;
  }

  it('streams the model to a generated name and inspects it', async () => {
    const content = `${FAKE_MAGIC} ${'w'.repeat(5000)}`;
    const res = await api('/api/models', { method: 'POST', body: form(content, '../../evil name ü.onnx') });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { path: string; displayName: string; summary: { fileBytes: number } };
    expect(body.displayName).toBe('evil name ü.onnx');
    expect(path.dirname(body.path)).toBe(uploadDir);
    expect(path.basename(body.path)).toMatch(/^upload-[0-9a-f]{24}\.onnx$/);
    expect(fs.readFileSync(body.path, 'utf8')).toBe(content);
    expect(body.summary.fileBytes).toBe(Buffer.byteLength(content));
  });

  it('deletes an uploaded file that is not a model and answers 422', async () => {
    await expectError(await api('/api/models', { method: 'POST', body: form('just text') }), 422, 'bad_model', /not an ONNX model/);
    expect(uploads()).toEqual([]);
  });

  it('refuses an upload over the limit with 413 and leaves no partial file', async () => {
    const res = await api('/api/models', { method: 'POST', body: form(Buffer.alloc(UPLOAD_LIMIT + 1, 1)) });
    await expectError(res, 413, 'too_large');
    await new Promise((r) => setTimeout(r, 50));
    expect(uploads()).toEqual([]);
  });

  it("keeps the user's file name for display: model summary, build record, engine download", async () => {
    // Path parts, control characters (a tab is legal in a header; C1) and bidi overrides go; the
    // rest (spaces, non-ASCII) stays.
    const sent = '..\\dir/rés\u202enet 50\t\u0085.onnx';
    const up = await api('/api/models', { method: 'POST', body: form(`${FAKE_MAGIC}x`, sent) });
    expect(up.status).toBe(201);
    const ref = (await up.json()) as { path: string; displayName: string; fileName: string; summary: { fileName: string } };
    expect(ref.displayName).toBe('résnet 50.onnx');
    expect(ref.fileName).toBe('résnet 50.onnx');
    expect(ref.summary.fileName).toBe('résnet 50.onnx');
    expect(path.basename(ref.path)).toMatch(/^upload-[0-9a-f]{24}\.onnx$/);

    // The web UI's way: upload first, then build the returned path with JSON.
    const viaPath = await startBuildFrom({ modelPath: ref.path });
    // The other way: one multipart request.
    const res = await api('/api/builds', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'c:\\models\\yolo v8.onnx') });
    const started = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(started)).toBe(201);
    const viaForm = started.id;
    for (const [id, name, stem] of [
      [viaPath, 'résnet 50.onnx', 'résnet 50'],
      [viaForm, 'yolo v8.onnx', 'yolo v8'],
    ] as const) {
      expect(fake.builds.get(id)!.input.modelDisplayName).toBe(name);
      const rec = (await (await api(`/api/builds/${id}`)).json()) as { model: { fileName: string }; modelPath: string };
      expect(rec.model.fileName).toBe(name);
      expect(path.dirname(rec.modelPath)).toBe(uploadDir);
      const listed = ((await (await api('/api/builds')).json()) as Array<{ id: string; model: { fileName: string } }>).find((b) => b.id === id)!;
      expect(listed.model.fileName).toBe(name);
      fake.finish(id, 'succeeded');
      const dl = await api(`/api/builds/${id}/engine`);
      expect(dl.status).toBe(200);
      const cd = dl.headers.get('content-disposition')!;
      // RFC 6266: an ASCII fallback, then the UTF-8 name in filename*.
      expect(cd).toBe(`attachment; filename="${`${stem}-${id}.engine`.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(`${stem}-${id}.engine`)}`);
      await dl.arrayBuffer();
    }
  });

  it('does not rename a download whose engine path the client chose', async () => {
    const up = (await (await api('/api/models', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'shown.onnx') })).json()) as { path: string };
    const id = await startBuildFrom({ modelPath: up.path, outputPath: path.join(dir, 'chosen.engine') });
    fake.finish(id, 'succeeded');
    const dl = await api(`/api/builds/${id}/engine`);
    expect(dl.headers.get('content-disposition')).toBe(`attachment; filename="chosen.engine"; filename*=UTF-8''chosen.engine`);
    await dl.arrayBuffer();
  });

  async function startBuildFrom(body: Record<string, unknown>): Promise<string> {
    const res = await postJson('/api/builds', body);
    const answer = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(answer)).toBe(201);
    return answer.id;
  }

  it('starts a build from an upload with options as a JSON field', async () => {
    const res = await api('/api/builds', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'm.onnx', { options: JSON.stringify({ optLevel: 2, simDuration: 0.5 }) }) });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const rec = fake.getBuild(id)!;
    expect(rec.options.optLevel).toBe(2);
    expect(path.dirname(rec.modelPath)).toBe(uploadDir);
    fake.finish(id, 'failed');
  });

  it('rejects a multipart body without the model file, or with bad options, keeping nothing', async () => {
    const noFile = new FormData();
    noFile.append('options', '{}');
    await expectError(await api('/api/builds', { method: 'POST', body: noFile }), 400, 'bad_input', /no file field "model"/);
    await expectError(await api('/api/builds', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'm.onnx', { options: '{bad' }) }), 400, 'bad_input', /options: invalid JSON/);
    await expectError(
      await api('/api/builds', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'm.onnx', { options: '{"optLevel":"high"}' }) }),
      400,
      'bad_input',
      /options\.optLevel/,
    );
    await expectError(await api('/api/builds', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'm.onnx', { timeBudgetSeconds: 'soon' }) }), 400, 'bad_input', /timeBudgetSeconds/);
    await expectError(
      await api('/api/builds', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'm.onnx', { outputPath: '../out.engine' }) }),
      400,
      'bad_input',
      /outputPath: "\.\."/,
    );
    await expectError(await api('/api/builds', { method: 'POST', body: form(`${FAKE_MAGIC}x`, 'm.onnx', { modelPath: model }) }), 400, 'bad_input', /not both/);
    const wrongField = new FormData();
    wrongField.append('weights', new Blob(['x']), 'w.bin');
    await expectError(await api('/api/models', { method: 'POST', body: wrongField }), 400, 'bad_input', /unexpected file field "weights"/);
    await new Promise((r) => setTimeout(r, 50));
    expect(uploads()).toEqual([]);
  });

  it('deletes the upload when the build it was sent for is refused', async () => {
    await expectError(await api('/api/builds', { method: 'POST', body: form('not a model', 'x.onnx') }), 422, 'bad_model', /"x\.onnx" \(uploaded\)/);
    expect(uploads()).toEqual([]);
  });

  it('leaves no partial file when the client aborts mid-upload', async () => {
    const boundary = 'XBOUNDARYX';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"; filename="m.onnx"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/models',
      headers: { ...auth, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(head.length + 50_000) },
    });
    req.on('error', () => undefined);
    req.write(head);
    req.write(Buffer.alloc(20_000, 1));
    await expect.poll(() => uploads().length).toBe(1);
    req.destroy();
    await expect.poll(() => uploads()).toEqual([]);
  });

  it('rejects a malformed multipart body', async () => {
    const res = await api('/api/models', { method: 'POST', headers: { 'Content-Type': 'multipart/form-data' }, body: 'x' });
    await expectError(res, 400, 'bad_input', /multipart/);
  });
});

describe('event stream', () => {
  const url = (id: string, q = '') => `${base}/api/builds/${id}/events${q}`;

  it('sends the snapshot, then each event with id = seq, and ends after build.finished', async () => {
    const id = await startBuild();
    const sse = await openSse(url(id), auth);
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
    await sse.waitFor((m) => m.event === 'snapshot');
    fake.emit(id, [
      { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 3, instance: 0 },
      { type: 'phase.step', id: 1, step: 0, stepsDone: 1 },
    ]);
    fake.emit(id, [{ type: 'phase.finish', id: 1, stepsDone: 3, early: false }]);
    const finished = fake.finish(id, 'succeeded');
    await sse.ended;
    expect(sse.snapshot().id).toBe(id);
    // A fresh connect: record, then the view to start from (a reset), then the events after it.
    expect(sse.messages.slice(0, 2).map((m) => m.event)).toEqual(['snapshot', 'reset']);
    const [reset] = sse.resets();
    expect(reset).toMatchObject({ buildId: id, seq: 0, status: 'running' });
    const events = sse.events();
    expect(events.map((e) => e.type)).toEqual(['phase.start', 'phase.step', 'phase.finish', 'build.finished']);
    expect(events[0].seq).toBe(reset.seq + 1);
    expect(events.at(-1)).toEqual(finished);
  });

  it('replays exactly the events after Last-Event-ID (header or query)', async () => {
    const id = await startBuild();
    for (let i = 0; i < 5; i++) fake.emit(id, [{ type: 'log', severity: 'info', message: `line ${i}` }]);
    const all = fake.builds.get(id)!.events;
    const viaHeader = await openSse(url(id), { ...auth, 'Last-Event-ID': '2' });
    const viaQuery = await openSse(url(id, '?lastEventId=2'), auth);
    await viaHeader.waitFor((m) => m.id === String(all.at(-1)!.seq));
    await viaQuery.waitFor((m) => m.id === String(all.at(-1)!.seq));
    fake.finish(id, 'cancelled');
    await Promise.all([viaHeader.ended, viaQuery.ended]);
    const expected = fake.builds.get(id)!.events.filter((e) => e.seq > 2);
    expect(viaHeader.events()).toEqual(expected);
    expect(viaQuery.events()).toEqual(expected);
  });

  it('gives two subscribers the same events', async () => {
    const id = await startBuild();
    const [a, b] = await Promise.all([openSse(url(id), auth), openSse(url(id), auth)]);
    await Promise.all([a.waitFor((m) => m.event === 'snapshot'), b.waitFor((m) => m.event === 'snapshot')]);
    for (let i = 0; i < 20; i++)
      fake.emit(id, [
        { type: 'log', severity: 'verbose', message: `m${i}` },
        { type: 'log', severity: 'info', message: `n${i}` },
      ]);
    fake.finish(id, 'succeeded');
    await Promise.all([a.ended, b.ended]);
    expect(a.events()).toHaveLength(41);
    expect(a.events()).toEqual(b.events());
  });

  it('writes each batch of events in one write', async () => {
    const id = await startBuild();
    const writes: string[] = [];
    // Runs after the server's own request handler, which has already sent the snapshot.
    const spy = (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (!req.url?.endsWith('/events')) return;
      const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
      res.write = ((chunk: unknown, ...rest: unknown[]) => {
        writes.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof res.write;
    };
    server.server.on('request', spy);
    try {
      const sse = await openSse(url(id), auth);
      await sse.waitFor((m) => m.event === 'snapshot');
      fake.emit(
        id,
        Array.from({ length: 5 }, (_, i) => ({ type: 'log' as const, severity: 'info' as const, message: `batch line ${i}` })),
      );
      await sse.waitFor((m) => m.data.includes('batch line 4'));
      const batchWrites = writes.filter((w) => w.includes('batch line'));
      expect(batchWrites).toHaveLength(1);
      expect(batchWrites[0].match(/^id: /gm)).toHaveLength(5);
      sse.close();
    } finally {
      server.server.off('request', spy);
      fake.finish(id, 'failed');
    }
  });

  it('sends heartbeat comments while the build is silent', async () => {
    const id = await startBuild();
    const sse = await openSse(url(id), auth);
    await expect.poll(() => sse.comments.filter((c) => c === 'heartbeat').length, { timeout: 3000 }).toBeGreaterThanOrEqual(3);
    expect(sse.messages.filter((m) => m.event !== 'snapshot' && m.event !== 'reset')).toEqual([]); // comments, not events
    sse.close();
    fake.finish(id, 'failed');
  });

  it('unsubscribes when the client goes away', async () => {
    const id = await startBuild();
    const before = fake.subscriberCount;
    const sse = await openSse(url(id), auth);
    await sse.waitFor((m) => m.event === 'snapshot');
    expect(fake.subscriberCount).toBe(before + 1);
    sse.close();
    await expect.poll(() => fake.subscriberCount).toBe(before);
    fake.finish(id, 'failed');
  });

  it('ends at once for a finished build, and answers a resume past the end with 204', async () => {
    const id = await startBuild();
    const finished = fake.finish(id, 'succeeded');
    const late = await openSse(url(id), auth);
    await late.ended;
    expect(late.snapshot().state).toBe('succeeded');
    expect(late.events()).toEqual([]);
    const past = await openSse(url(id), { ...auth, 'Last-Event-ID': String(finished.seq) });
    expect(past.status).toBe(204);
    const resumed = await openSse(url(id), { ...auth, 'Last-Event-ID': String(finished.seq - 1) });
    await resumed.ended;
    expect(resumed.events()).toEqual([finished]);
  });

  describe('resume cases (Last-Event-ID), each on a running and on a finished build', () => {
    /** A running build with a few events after build.started. */
    async function running(): Promise<{ id: string; last: number }> {
      const id = await startBuild();
      for (let i = 0; i < 3; i++) fake.emit(id, [{ type: 'log', severity: 'info', message: `before ${i}` }]);
      return { id, last: fake.builds.get(id)!.events.at(-1)!.seq };
    }
    const liveTail = (id: string) => {
      fake.emit(id, [{ type: 'log', severity: 'info', message: 'after' }]);
      return fake.finish(id, 'succeeded');
    };

    it('running, no id: the view (reset), then live events to build.finished, then the end', async () => {
      const { id, last } = await running();
      const sse = await openSse(url(id), auth);
      await sse.waitFor((m) => m.event === 'reset');
      const finished = liveTail(id);
      await sse.ended;
      expect(sse.resets()[0].seq).toBe(last);
      expect(sse.events().map((e) => e.type)).toEqual(['log', 'build.finished']);
      expect(sse.events().at(-1)).toEqual(finished);
    });

    it('running, an id inside the build: exactly the events after it, then live ones, then the end', async () => {
      const { id, last } = await running();
      const sse = await openSse(url(id), { ...auth, 'Last-Event-ID': String(last - 1) });
      await sse.waitFor((m) => m.id === String(last));
      const finished = liveTail(id);
      await sse.ended;
      expect(sse.resets()).toEqual([]);
      expect(sse.events().map((e) => e.seq)).toEqual([last, last + 1, finished.seq]);
    });

    it('running, the last id: no replay, live events, then the end', async () => {
      const { id, last } = await running();
      const sse = await openSse(url(id), { ...auth, 'Last-Event-ID': String(last) });
      await sse.waitFor((m) => m.event === 'snapshot');
      const finished = liveTail(id);
      await sse.ended;
      expect(sse.resets()).toEqual([]);
      expect(sse.events().map((e) => e.seq)).toEqual([last + 1, finished.seq]);
    });

    it('running, an id beyond the last event (999999): a reset, then live events to build.finished, and the connection closes', async () => {
      const { id, last } = await running();
      for (const headers of [{ 'Last-Event-ID': '999999' }, {}]) {
        const q = 'Last-Event-ID' in headers ? '' : `?lastEventId=${last + 1}`;
        const sse = await openSse(url(id, q), { ...auth, ...headers });
        const reset = await sse.waitFor((m) => m.event === 'reset');
        expect(Number(reset.id)).toBe(last);
        sse.close();
      }
      const sse = await openSse(url(id), { ...auth, 'Last-Event-ID': '999999' });
      await sse.waitFor((m) => m.event === 'reset');
      const finished = liveTail(id);
      await sse.ended;
      expect(sse.resets().map((r) => r.seq)).toEqual([last]);
      expect(sse.events().at(-1)).toEqual(finished);
      expect(sse.events().map((e) => e.seq)).toEqual([last + 1, finished.seq]);
    });

    it('finished: an id inside replays to build.finished, the last id is 204, an id beyond gets the final view and the end', async () => {
      const { id } = await running();
      const finished = liveTail(id);
      const inside = await openSse(url(id), { ...auth, 'Last-Event-ID': String(finished.seq - 2) });
      await inside.ended;
      expect(inside.events().map((e) => e.seq)).toEqual([finished.seq - 1, finished.seq]);
      const atEnd = await openSse(url(id), { ...auth, 'Last-Event-ID': String(finished.seq) });
      expect(atEnd.status).toBe(204);
      const beyond = await openSse(url(id), { ...auth, 'Last-Event-ID': '999999' });
      await beyond.ended;
      expect(beyond.status).toBe(200);
      expect(beyond.resets()).toHaveLength(1);
      expect(beyond.resets()[0]).toMatchObject({ seq: finished.seq, status: 'succeeded' });
      expect(beyond.events()).toEqual([]);
    });

    it('a non-numeric or negative id (other than -1, "from the start") is 400, on a running and a finished build', async () => {
      const { id: live } = await running();
      const { id: done } = await running();
      liveTail(done);
      for (const id of [live, done]) {
        for (const bad of ['abc', '-2', '-999999', '1.5', '1e3', '12x', '0x10', '9'.repeat(16)]) {
          await expectError(await api(`/api/builds/${id}/events`, { headers: { 'Last-Event-ID': bad } }), 400, 'bad_input', /Last-Event-ID must be an event seq/);
          await expectError(await api(`/api/builds/${id}/events?lastEventId=${encodeURIComponent(bad)}`), 400, 'bad_input', /Last-Event-ID/);
        }
      }
      fake.finish(live, 'cancelled');
    });
  });

  it('rejects a malformed Last-Event-ID and unknown builds', async () => {
    await expectError(await api(`/api/builds/b1/events`, { headers: { 'Last-Event-ID': 'abc' } }), 400, 'bad_input', /Last-Event-ID/);
    await expectError(await api('/api/builds/nope/events'), 404, 'not_found', /unknown build "nope"/);
    expect(fake.subscriberCount).toBe(0);
  });
});

describe('builds, cancel and engine', () => {
  it('lists builds oldest first and returns one build', async () => {
    const id = await startBuild();
    const list = (await (await api('/api/builds')).json()) as Array<{ id: string }>;
    expect(list.map((b) => b.id)).toEqual(fake.listBuilds().map((b) => b.id));
    const one = (await (await api(`/api/builds/${id}`)).json()) as { id: string; state: string };
    expect(one).toEqual(fake.getBuild(id));
    fake.finish(id, 'failed');
    await expectError(await api('/api/builds/%E0%A4%A'), 404, 'not_found');
  });

  it('cancels a running build with 202, a finished one with 409, an unknown one with 404', async () => {
    const id = await startBuild();
    const res = await api(`/api/builds/${id}/cancel`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ id, state: 'cancelling' });
    expect((await fake.waitForResult(id)).status).toBe('cancelled');
    await expectError(await api(`/api/builds/${id}/cancel`, { method: 'POST' }), 409, 'conflict', /already finished \(cancelled\)/);
    await expectError(await api('/api/builds/b999/cancel', { method: 'POST' }), 404, 'not_found');
  });

  it('serves the engine of a succeeded build only', async () => {
    const id = await startBuild();
    await expectError(await api(`/api/builds/${id}/engine`), 409, 'conflict', /running/);
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    fake.finish(id, 'succeeded', bytes);
    const res = await api(`/api/builds/${id}/engine`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="/);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    const head = await api(`/api/builds/${id}/engine`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.length));
    fs.rmSync(fake.builds.get(id)!.enginePath!);
    await expectError(await api(`/api/builds/${id}/engine`), 404, 'not_found', /no longer exists/);
  });
});

describe('web UI files', () => {
  it('serves index.html with the CSP, no-cache and the right type', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toBe("default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'");
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toMatch(/TRT Build Studio/);
  });

  it('serves hashed assets as immutable with their MIME types', async () => {
    const js = await fetch(`${base}/assets/index-3f2a1b.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${base}/assets/index-9c8d7e.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await fetch(`${base}/favicon.svg`)).headers.get('content-type')).toBe('image/svg+xml');
  });

  it('revalidates with ETag', async () => {
    const first = await fetch(`${base}/favicon.svg`);
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${base}/favicon.svg`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
  });

  it('falls back to index.html for client routes, 404s for missing files', async () => {
    const route = await fetch(`${base}/builds/b1`);
    expect(route.status).toBe(200);
    expect(route.headers.get('content-type')).toMatch(/text\/html/);
    expect((await fetch(`${base}/missing.png`)).status).toBe(404);
  });

  it('never serves files outside the UI folder', async () => {
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/link.txt', '/%00', '//secret.txt']) {
      const res = await rawRequest(port, { path: p });
      expect(res.status, p).toBe(404);
      expect(res.body).not.toMatch(/outside the UI folder/);
    }
    await expectError(await fetch(`${base}/`, { method: 'POST' }), 405, 'method_not_allowed');
  });
});

describe('close', () => {
  it('ends open event streams and stops listening', async () => {
    const s = createHttpServer({ service: fake, token: TOKEN, uploadDir, staticDir: path.join(dir, 'nope') });
    const p = await s.listen(0, '127.0.0.1');
    const missingUi = await fetch(`http://127.0.0.1:${p}/`);
    await expectError(missingUi, 404, 'not_found', /web UI is not built/);
    const id = await startBuild();
    const sse = await openSse(`http://127.0.0.1:${p}/api/builds/${id}/events`, auth);
    await sse.waitFor((m) => m.event === 'snapshot');
    const closing = s.close();
    // Events racing the shutdown must not be written to an ended response (an 'error' event).
    fake.emit(id, [{ type: 'log', severity: 'info', message: 'during close' }]);
    await closing;
    await sse.ended;
    expect(sse.messages.some((m) => m.data.includes('during close'))).toBe(false);
    await expect(fetch(`http://127.0.0.1:${p}/`)).rejects.toThrow();
    fake.finish(id, 'failed');
  });
});
