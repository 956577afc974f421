// The real thing: `trt-build-studio serve` as a child process (bin → dist), real worker processes
// running simulated builds, real HTTP from fetch and node:http. Needs `npm run build:ts` and the
// native addon (build/native/Release) — the builds run in the addon's simulated backend.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildRecord, type BuildEvent } from '../../../shared/protocol.js';
import { tempDir, writeBadFile, writeModel } from '../../../../test/support/onnx-gen.js';
import { openSse, type SseStream } from './sse-client.js';
import { alive, childPids } from './proc-info.js';
import { killLeftoverServers, startServe, type ServeProcess } from './serve-process.js';

const SIM = { backend: 'simulated', simDuration: 0.4, simSeed: 7 };

let dir: string;
let model: string;
let serve: ServeProcess;

function api(p: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${serve.base}${p}`, { ...init, headers: { Authorization: `Bearer ${serve.token}`, ...(init.headers as Record<string, string>) } });
}

function postJson(p: string, body: unknown): Promise<Response> {
  return api(p, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

async function start(options: Record<string, unknown> = SIM, modelPath = model): Promise<string> {
  const res = await postJson('/api/builds', { modelPath, options });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

async function record(id: string): Promise<BuildRecord> {
  const res = await api(`/api/builds/${id}`);
  expect(res.status).toBe(200);
  return BuildRecord.parse(await res.json());
}

function events(id: string, headers: Record<string, string> = {}, query = ''): Promise<SseStream> {
  return openSse(`${serve.base}/api/builds/${id}/events${query}`, { Authorization: `Bearer ${serve.token}`, ...headers });
}

/** The protocol's invariants over a complete stream (read from its first event). */
function checkInvariants(list: BuildEvent[]): void {
  expect(list[0].type).toBe('build.started');
  expect(list.at(-1)!.type).toBe('build.finished');
  const open = new Map<number, { nbSteps: number }>();
  const seen = new Set<number>();
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (i > 0) expect(e.seq).toBeGreaterThan(list[i - 1].seq);
    if (e.type === 'phase.start') {
      expect(seen.has(e.id)).toBe(false);
      if (e.parentId !== null) expect(open.has(e.parentId)).toBe(true);
      seen.add(e.id);
      open.set(e.id, { nbSteps: e.nbSteps });
    } else if (e.type === 'phase.step') {
      expect(open.has(e.id)).toBe(true);
      expect(e.step).toBeLessThan(open.get(e.id)!.nbSteps);
      expect(e.stepsDone).toBe(e.step + 1);
    } else if (e.type === 'phase.finish') {
      expect(open.delete(e.id)).toBe(true);
    }
  }
  if (list.at(-1)!.type === 'build.finished' && (list.at(-1) as { status: string }).status === 'succeeded') expect(open.size).toBe(0);
}

/** Everything but steps, which the protocol lets a replay coalesce. */
const nonSteps = (list: BuildEvent[]) => list.filter((e) => e.type !== 'phase.step');

beforeAll(async () => {
  dir = tempDir('tbs-serve-it-');
  model = writeModel(path.join(dir, 'model ü net.onnx'), { layers: 6 });
  serve = await startServe(['--concurrency', '1', '--output-dir', path.join(dir, 'engines'), '--heartbeat-ms', '100']);
}, 30_000);

afterAll(async () => {
  if (serve) await serve.stop();
  // A test that failed midway may have left its own server running.
  killLeftoverServers();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('serve: start and auth', () => {
  it('prints one URL line with the token and binds to 127.0.0.1', () => {
    expect(serve.urlLine).toBe(`http://127.0.0.1:${serve.port}/?token=${encodeURIComponent(serve.token)}`);
    expect(serve.token.length).toBeGreaterThanOrEqual(32);
  });

  it('refuses a missing or wrong token, accepts the cookie from the token link', async () => {
    expect((await fetch(`${serve.base}/api/builds`)).status).toBe(401);
    expect((await fetch(`${serve.base}/api/builds`, { headers: { Authorization: 'Bearer nope' } })).status).toBe(401);
    const link = await fetch(serve.urlLine, { redirect: 'manual' });
    expect(link.status).toBe(302);
    const cookie = link.headers.get('set-cookie')!.split(';')[0];
    const res = await fetch(`${serve.base}/api/builds`, { headers: { Cookie: cookie } });
    expect(res.status).toBe(200);
    expect(Array.isArray(await res.json())).toBe(true);
  });

  it('uses a given token and warns loudly about a non-loopback bind', async () => {
    const s = await startServe(['--host', '0.0.0.0', '--token', 'given-token_123']);
    try {
      expect(s.token).toBe('given-token_123');
      expect(s.stderr()).toMatch(/WARNING: binding to 0\.0\.0\.0 makes the build service reachable from other machines/);
      const res = await fetch(`${s.base}/api/builds`, { headers: { Authorization: 'Bearer given-token_123' } });
      expect(res.status).toBe(200);
    } finally {
      expect(await s.stop('SIGINT')).toBe(0);
    }
    expect(serve.stderr()).not.toMatch(/WARNING/);
  });

  it('serves the web UI from dist/renderer with its CSP (or says it is not built)', async () => {
    const index = path.join(__dirname, '../../../../dist/renderer/index.html');
    const res = await fetch(`${serve.base}/`);
    if (fs.existsSync(index)) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'self'; connect-src 'self'/);
      const html = await res.text();
      expect(html).toBe(fs.readFileSync(index, 'utf8'));
      const assets = [...html.matchAll(/(?:src|href)="\.?(\/assets\/[^"]+\.(js|css))"/g)];
      expect(assets.length).toBeGreaterThan(0);
      for (const [, asset, ext] of assets) {
        const a = await fetch(`${serve.base}${asset}`);
        expect(a.status, asset).toBe(200);
        expect(a.headers.get('content-type')).toBe(ext === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
        expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      }
    } else {
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/npm run build:renderer/);
    }
  });

  it('rejects usage errors with exit code 2', async () => {
    await expect(startServe(['--port', 'abc'], 10_000)).rejects.toThrow(/exited \(2\).*--port/s);
    await expect(startServe(['--bogus'], 10_000)).rejects.toThrow(/exited \(2\)/);
    // A taken port is not a usage error but a clear failure (exit 1); the later --port wins.
    await expect(startServe(['--port', String(serve.port)], 10_000)).rejects.toThrow(/exited \(1\).*cannot listen on 127\.0\.0\.1:\d+.*EADDRINUSE/s);
  });
});

describe('serve: builds', () => {
  it('uploads a generated model, builds it, streams valid events ending with build.finished, serves the engine', async () => {
    const fd = new FormData();
    fd.append('options', JSON.stringify(SIM));
    fd.append('model', new Blob([fs.readFileSync(model)]), 'uploaded model.onnx');
    const res = await api('/api/builds', { method: 'POST', body: fd });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const sse = await events(id, {}, '?lastEventId=-1');
    await sse.ended;
    expect(sse.snapshot().id).toBe(id);
    const list = sse.events(); // schema-checked, id === seq
    checkInvariants(list);
    const finished = list.at(-1)!;
    expect(finished).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(list[0]).toMatchObject({ type: 'build.started', backend: 'simulated', simulated: true });

    const rec = await record(id);
    expect(rec.state).toBe('succeeded');
    expect(path.dirname(rec.modelPath)).toBe(serve.uploadDir);
    const engine = await api(`/api/builds/${id}/engine`);
    expect(engine.status).toBe(200);
    const bytes = Buffer.from(await engine.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.equals(fs.readFileSync(rec.outputPath!))).toBe(true);
    expect(bytes.length).toBe((finished as { engineBytes?: number }).engineBytes);
  });

  it('rejects path traversal in modelPath, outputPath and timingCache', async () => {
    for (const body of [
      { modelPath: `${dir}/../${path.basename(dir)}/model ü net.onnx` },
      { modelPath: model, outputPath: `${dir}/../x.engine` },
      { modelPath: model, options: { ...SIM, timingCache: `${dir}/../cache` } },
    ]) {
      const res = await postJson('/api/builds', body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/"\.\."/);
    }
    expect(fs.existsSync(path.join(path.dirname(dir), 'x.engine'))).toBe(false);
  });

  it('refuses bad build input with 400 naming the problem, writing nothing', async () => {
    const missingDir = path.join(dir, 'no such dir', 'out.engine');
    const res = await postJson('/api/builds', { modelPath: model, outputPath: missingDir, options: SIM });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/directory does not exist/);
    expect(fs.existsSync(path.dirname(missingDir))).toBe(false);

    const dynamic = writeModel(path.join(dir, 'dynamic.onnx'), { dynamic: true });
    // Issue 34: no shapes at all builds as trtexec does (each dynamic dimension 1); bad ones are 400.
    const badRank = await postJson('/api/builds', { modelPath: dynamic, options: { ...SIM, shapes: ['input:1x3x32/1x3x32/1x3x32'] } });
    expect(badRank.status).toBe(400);
    expect(((await badRank.json()) as { error: { message: string } }).error.message).toMatch(/shapes for "input" have the wrong rank.*batch/s);
    const badRange = await postJson('/api/builds', { modelPath: dynamic, options: { ...SIM, shapes: ['input:4x3x32x32/2x3x32x32/1x3x32x32'] } });
    expect(badRange.status).toBe(400);
    expect(((await badRange.json()) as { error: { message: string } }).error.message).toMatch(/min 4 <= opt 2 <= max 1 does not hold/);
  });

  it('refuses an output path that is a FIFO or a device with 400, leaving the node untouched', async () => {
    const fifo = path.join(dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    const ident = (p: string) => {
      const st = fs.lstatSync(p, { bigint: true });
      return [st.ino, st.mode, st.size, st.mtimeNs, st.ctimeNs].join(':');
    };
    for (const node of [fifo, '/dev/null']) {
      const before = ident(node);
      const res = await postJson('/api/builds', { modelPath: model, outputPath: node, options: SIM });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/is a (FIFO \(named pipe\)|character device), not a regular file; it is left untouched/);
      expect(ident(node)).toBe(before);
    }
  });

  it('names a text file given as a timing cache by its kind, quoting none of its bytes', async () => {
    const secret = 'root:x:0:0:root-shell-user:/root:/bin/bash\ndaemon:x:1:1:daemon-user:/usr/sbin:/usr/sbin/nologin\n';
    const cache = path.join(dir, 'passwd-copy');
    fs.writeFileSync(cache, secret);
    const res = await postJson('/api/builds', { modelPath: model, options: { ...SIM, timingCache: cache } });
    expect(res.status).toBe(400);
    const message = ((await res.json()) as { error: { message: string } }).error.message;
    expect(message).toMatch(/passwd-copy is not a timing cache: it looks like a text file/);
    for (const piece of secret.split(/[:\n]+/).filter((t) => t.length >= 3)) expect(message).not.toContain(piece);
  });

  it('builds a dynamic model with trtexec-style shapes', async () => {
    const dynamic = writeModel(path.join(dir, 'dynamic2.onnx'), { dynamic: true });
    const id = await start({ ...SIM, shapes: ['input:1x3x32x32/2x3x64x64/4x3x128x128'] }, dynamic);
    const sse = await events(id, {}, '?lastEventId=-1');
    await sse.ended;
    expect(sse.events().at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect((await record(id)).options.shapes).toEqual({ input: { min: [1, 3, 32, 32], opt: [2, 3, 64, 64], max: [4, 3, 128, 128] } });
  });

  it('answers bad models with 422 and the reader message, naming the uploaded file', async () => {
    const kept = fs.readdirSync(serve.uploadDir);
    for (const kind of ['empty', 'random', 'truncated', 'text'] as const) {
      const bad = writeBadFile(path.join(dir, `bad-${kind}.onnx`), kind);
      const fd = new FormData();
      fd.append('model', new Blob([fs.readFileSync(bad)]), `bad-${kind}.onnx`);
      const res = await api('/api/models', { method: 'POST', body: fd });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, kind).toBe(422);
      expect(body.error.code).toBe('bad_model');
      expect(body.error.message).toContain(`"bad-${kind}.onnx" (uploaded)`);
      expect(body.error.message).toMatch(/empty|not a valid ONNX model|not an ONNX model/);
    }
    const missing = await postJson('/api/builds', { modelPath: path.join(dir, 'missing model.onnx'), options: SIM });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/not found: .*missing model\.onnx/);
    const absurd = writeModel(path.join(dir, 'absurd.onnx'), { inputs: [{ name: 'x', shape: [2 ** 40, 3, -3] }] });
    const absurdRes = await postJson('/api/models', { path: absurd });
    expect(absurdRes.status).toBe(422);
    expect(((await absurdRes.json()) as { error: { code: string } }).error.code).toBe('bad_model');
    const dirAsModel = await postJson('/api/builds', { modelPath: dir, options: SIM });
    expect(dirAsModel.status).toBe(422);
    expect(((await dirAsModel.json()) as { error: { message: string } }).error.message).toMatch(/is a directory/);
    expect(fs.readdirSync(serve.uploadDir)).toEqual(kept); // the bad uploads are gone
  });

  it('queues builds in order, cancels with 202, and two subscribers see the same events', async () => {
    const first = await start({ ...SIM, simFault: 'hang' });
    const second = await start();
    expect((await record(second)).state).toBe('queued');
    // Both subscribe while the second build is still queued, so both see all of it live.
    const [a, b] = await Promise.all([events(second), events(second)]);
    await Promise.all([a.waitFor((m) => m.event === 'snapshot'), b.waitFor((m) => m.event === 'snapshot')]);
    const firstStream = await events(first, {}, '?lastEventId=-1');
    await firstStream.waitFor((m) => m.event === 'message' && JSON.parse(m.data).type === 'phase.start');

    const cancel = await api(`/api/builds/${first}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    expect(((await cancel.json()) as { id: string }).id).toBe(first);
    await firstStream.ended;
    expect(firstStream.events().at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    expect(firstStream.events().some((e) => e.type === 'build.cancelling')).toBe(true);

    await Promise.all([a.ended, b.ended]);
    checkInvariants(a.events());
    expect(a.events()).toEqual(b.events());
    expect(a.events().at(-1)).toMatchObject({ status: 'succeeded' });

    const r1 = await record(first);
    const r2 = await record(second);
    expect(r1.state).toBe('cancelled');
    expect(Date.parse(r2.startedAt!)).toBeGreaterThanOrEqual(Date.parse(r1.finishedAt!));

    const again = await api(`/api/builds/${first}/cancel`, { method: 'POST' });
    expect(again.status).toBe(409);
    const noEngine = await api(`/api/builds/${first}/engine`);
    expect(noEngine.status).toBe(409);
    expect(fs.existsSync(r1.outputPath!)).toBe(false);
    expect((await api('/api/builds/b999-nope/cancel', { method: 'POST' })).status).toBe(404);
  });

  it('resumes with Last-Event-ID: exactly the missing events, no duplicates', async () => {
    const id = await start({ ...SIM, simDuration: 0.8 });
    const full = await events(id, {}, '?lastEventId=-1');
    const part = await events(id, {}, '?lastEventId=-1');
    const cut = await part.waitFor((m) => m.event === 'message' && JSON.parse(m.data).type === 'phase.finish');
    part.close();
    const lastSeen = Number(part.events().at(-1)!.seq);
    expect(Number(cut.id)).toBeLessThanOrEqual(lastSeen);
    const resumed = await events(id, { 'Last-Event-ID': String(lastSeen) });
    await Promise.all([full.ended, resumed.ended]);
    const rest = resumed.events();
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((e) => e.seq > lastSeen)).toBe(true);
    // Same non-step events as the uninterrupted stream after the cut, and every resumed event
    // is one the full stream had (steps may be coalesced in a replay, never invented).
    const after = full.events().filter((e) => e.seq > lastSeen);
    expect(nonSteps(rest)).toEqual(nonSteps(after));
    const fullBySeq = new Map(full.events().map((e) => [e.seq, e]));
    for (const e of rest) expect(fullBySeq.get(e.seq)).toEqual(e);
    checkInvariants(full.events());
  });

  it('curl with Last-Event-ID: 999999 on a running build gets a reset, then build.finished, and the connection closes', async () => {
    const id = await start({ ...SIM, simDuration: 1.5 });
    const first = await events(id, {}, '?lastEventId=-1');
    await first.waitFor((m) => m.event === 'message' && JSON.parse(m.data).type === 'phase.start');
    expect((await record(id)).state).toBe('running');
    // curl ends when the server closes the stream; --max-time only bounds a regression.
    const curl = spawn('curl', [
      '-sS',
      '-N',
      '--max-time',
      '60',
      '-H',
      `Authorization: Bearer ${serve.token}`,
      '-H',
      'Last-Event-ID: 999999',
      `${serve.base}/api/builds/${id}/events`,
    ]);
    let out = '';
    curl.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => curl.on('close', (c) => resolve(c)));
    expect(code, out).toBe(0); // 28 would be curl's timeout: a stream that never ended
    const blocks = out.split('\n\n').filter((b) => b.trim() !== '');
    expect(blocks[0]).toMatch(/^event: snapshot\n/);
    expect(blocks[1]).toMatch(/^event: reset\nid: \d+\n/);
    const last = JSON.parse(/^data: (.*)$/m.exec(blocks.filter((b) => !b.startsWith(':')).at(-1)!)![1]);
    expect(last).toMatchObject({ type: 'build.finished', buildId: id, status: 'succeeded' });
    await first.ended;
  });

  it('survives a crashing build: state crashed, server alive, next build succeeds', async () => {
    const id = await start({ ...SIM, simFault: 'crash' });
    const sse = await events(id, {}, '?lastEventId=-1');
    await sse.ended;
    expect(sse.events().at(-1)).toMatchObject({ type: 'build.finished', status: 'crashed' });
    expect((await record(id)).state).toBe('crashed');
    expect((await api('/api/backends')).status).toBe(200);
    const next = await start();
    const s2 = await events(next, {}, '?lastEventId=-1');
    await s2.ended;
    expect(s2.events().at(-1)).toMatchObject({ status: 'succeeded' });
  });
});

describe('serve: shutdown', () => {
  it('on SIGTERM cancels running builds (streams get build.finished), leaves no worker, removes uploads', async () => {
    const s = await startServe([]);
    const headers = { Authorization: `Bearer ${s.token}` };
    const fd = new FormData();
    fd.append('options', JSON.stringify({ ...SIM, simFault: 'hang' }));
    fd.append('model', new Blob([fs.readFileSync(model)]), 'm.onnx');
    const res = await fetch(`${s.base}/api/builds`, { method: 'POST', body: fd, headers });
    const { id } = (await res.json()) as { id: string };
    const sse = await openSse(`${s.base}/api/builds/${id}/events?lastEventId=-1`, headers);
    await sse.waitFor((m) => m.event === 'message' && JSON.parse(m.data).type === 'phase.start');
    const workers = childPids(s.proc.pid!);
    expect(workers.length).toBeGreaterThan(0);
    expect(fs.readdirSync(s.uploadDir)).toHaveLength(1);

    expect(await s.stop('SIGTERM')).toBe(0);
    await sse.ended;
    expect(sse.events().at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    expect(fs.existsSync(s.uploadDir)).toBe(false);
    for (const pid of workers) expect(alive(pid), `worker ${pid}`).toBe(false);
  });
});
