// The real `serve` process at its edges: signals that keep coming after shutdown has started, and
// the upload folder a killed server leaves behind. Needs `npm run build:ts` and the native addon.
// Each server runs with its own TMPDIR, so the upload-folder sweep sees only this test's folders.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../../test/support/onnx-gen.js';
import { alive, childPids } from './proc-info.js';
import { openSse } from './sse-client.js';
import { killLeftoverServers, startServe, type ServeProcess } from './serve-process.js';

let dir: string;
let model: string;
const started: ServeProcess[] = [];

beforeAll(() => {
  dir = tempDir('tbs-serve-life-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 4 });
});

afterEach(() => {
  // Whatever a failed test left running goes now.
  for (const s of started.splice(0)) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
});

afterAll(() => {
  killLeftoverServers();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function serve(tmp: string): Promise<ServeProcess> {
  const s = await startServe(['--output-dir', path.join(dir, 'engines')], 20_000, { ...process.env, TMPDIR: tmp });
  started.push(s);
  return s;
}

async function hangingBuild(s: ServeProcess): Promise<{ workers: number[]; sse: Awaited<ReturnType<typeof openSse>> }> {
  const headers = { Authorization: `Bearer ${s.token}` };
  const fd = new FormData();
  fd.append('options', JSON.stringify({ backend: 'simulated', simDuration: 0.4, simFault: 'hang' }));
  fd.append('model', new Blob([fs.readFileSync(model)]), 'm.onnx');
  const res = await fetch(`${s.base}/api/builds`, { method: 'POST', body: fd, headers });
  const { id } = (await res.json()) as { id: string };
  const sse = await openSse(`${s.base}/api/builds/${id}/events?lastEventId=-1`, headers);
  await sse.waitFor((m) => m.event === 'message' && JSON.parse(m.data).type === 'phase.start');
  const workers = childPids(s.proc.pid!);
  expect(workers.length).toBeGreaterThan(0);
  return { workers, sse };
}

/** Sends `signal` every few ms until the process is gone, so every window of shutdown gets one. */
function signalStorm(s: ServeProcess, signals: NodeJS.Signals[]): () => number {
  let sent = 0;
  const timer = setInterval(() => {
    if (s.proc.exitCode !== null || s.proc.signalCode !== null) return clearInterval(timer);
    try {
      s.proc.kill(signals[sent % signals.length]);
      sent++;
    } catch {
      clearInterval(timer);
    }
  }, 3);
  void s.exit.then(() => clearInterval(timer));
  return () => sent;
}

describe('serve: late signals', () => {
  it('exits 0 (not by signal) under a storm of SIGINT/SIGTERM while a hung build is cancelled, leaving no worker', async () => {
    const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
    const s = await serve(tmp);
    const { workers, sse } = await hangingBuild(s);
    s.proc.kill('SIGTERM');
    const sent = signalStorm(s, ['SIGINT', 'SIGTERM']);
    const exit = await s.exit;
    expect(exit, s.stderr()).toEqual({ code: 0, signal: null });
    expect(sent()).toBeGreaterThan(1);
    await sse.ended;
    expect(sse.events().at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    for (const pid of workers) expect(alive(pid), `worker ${pid}`).toBe(false);
    expect(fs.existsSync(s.uploadDir)).toBe(false);
  });

  it('exits 0 when signals keep arriving after an idle shutdown has finished', async () => {
    const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
    // Repeated so the storm lands in every window: during shutdown, after it, before the exit.
    for (let i = 0; i < 3; i++) {
      const s = await serve(tmp);
      s.proc.kill('SIGINT');
      signalStorm(s, ['SIGINT', 'SIGTERM']);
      expect(await s.exit, s.stderr()).toEqual({ code: 0, signal: null });
    }
  });
});

describe('serve: finished builds beyond --keep-build-details', () => {
  it('keeps the summary of an evicted build, marked, with no phases and nothing to replay', async () => {
    const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
    const s = await startServe(['--output-dir', path.join(dir, 'engines'), '--keep-build-details', '1'], 20_000, { ...process.env, TMPDIR: tmp });
    started.push(s);
    const headers = { Authorization: `Bearer ${s.token}` };
    const build = async () => {
      const res = await fetch(`${s.base}/api/builds`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ modelPath: model, options: { backend: 'simulated', simDuration: 0.05 } }),
      });
      const { id } = (await res.json()) as { id: string };
      const sse = await openSse(`${s.base}/api/builds/${id}/events?lastEventId=-1`, headers);
      await sse.ended;
      return id;
    };
    const first = await build();
    const second = await build();
    const get = (id: string) => fetch(`${s.base}/api/builds/${id}`, { headers });
    // The second build's worker exit is what evicts the first one's details.
    let old: Response | undefined;
    for (let i = 0; i < 300 && old?.headers.get('build-details') !== 'evicted'; i++) {
      if (i) await new Promise((r) => setTimeout(r, 50));
      old = await get(first);
    }
    expect(old!.status).toBe(200);
    expect(old!.headers.get('build-details')).toBe('evicted');
    expect(await old!.json()).toMatchObject({ id: first, state: 'succeeded', engineAvailable: true, outcome: { status: 'succeeded' } });
    const view = (id: string) => fetch(`${s.base}/api/builds/${id}/view`, { headers });
    const oldView = await view(first);
    expect(oldView.headers.get('build-details')).toBe('evicted');
    expect(await oldView.json()).toMatchObject({ status: 'succeeded', rows: { rows: [] } });
    const recent = await get(second);
    expect(recent.headers.get('build-details')).toBeNull();
    expect(((await (await view(second)).json()) as { rows: { rows: unknown[] } }).rows.rows.length).toBeGreaterThan(0);
    const list = (await (await fetch(`${s.base}/api/builds`, { headers })).json()) as Array<{ id: string }>;
    expect(list.map((b) => b.id)).toEqual([first, second]);

    // The stream of an evicted build: its summary as the snapshot, a reset to its outcome alone
    // (the events are gone: said plainly, not left as a gap), then the end; no events.
    const sse = await openSse(`${s.base}/api/builds/${first}/events?lastEventId=-1`, headers);
    await sse.ended;
    expect(sse.status).toBe(200);
    expect(sse.headers['build-details']).toBe('evicted');
    expect(sse.snapshot()).toMatchObject({ id: first, state: 'succeeded' });
    expect(sse.resets()).toMatchObject([{ status: 'succeeded', rows: { rows: [] } }]);
    expect(sse.events()).toEqual([]);
    expect(await s.stop('SIGTERM')).toBe(0);
  });
});

describe('serve: upload folders of dead servers', () => {
  it('removes the folder a SIGKILLed server left, keeps the one of a live server', async () => {
    const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
    const live = await serve(tmp);
    const killed = await serve(tmp);
    const fd = new FormData();
    fd.append('model', new Blob([fs.readFileSync(model)]), 'm.onnx');
    const up = await fetch(`${killed.base}/api/models`, { method: 'POST', body: fd, headers: { Authorization: `Bearer ${killed.token}` } });
    expect(up.status).toBe(201);
    expect(fs.readdirSync(killed.uploadDir)).toHaveLength(1);
    killed.proc.kill('SIGKILL');
    expect((await killed.exit).signal).toBe('SIGKILL');
    expect(fs.existsSync(killed.uploadDir)).toBe(true);

    // A folder of an older layout (no owner marker) is not ours to judge: it stays.
    const foreign = fs.mkdtempSync(path.join(tmp, 'tbs-uploads-'));

    const next = await serve(tmp);
    expect(fs.existsSync(killed.uploadDir), 'stale folder of the killed server').toBe(false);
    expect(fs.existsSync(live.uploadDir), 'folder of the live server').toBe(true);
    expect(fs.existsSync(next.uploadDir)).toBe(true);
    expect(fs.existsSync(foreign)).toBe(true);
    expect(next.stderr()).toContain(`removed the upload folder of a server that is gone: ${killed.uploadDir}`);

    expect(await live.stop('SIGTERM')).toBe(0);
    expect(await next.stop('SIGTERM')).toBe(0);
    expect(fs.readdirSync(tmp).sort()).toEqual([path.basename(foreign)]);
  });
});
