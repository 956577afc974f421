// The build service with real worker processes (dist/apps/worker/worker.js) and the real addon's
// simulated backend: queue, subscribers, replay, cancel, crash isolation, shutdown.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { createBuildService, type BuildService } from '../build-service.js';
import { childProcessLauncher, type WorkerLauncher } from '../worker-host.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const services: BuildService[] = [];

function service(opts: Parameters<typeof createBuildService>[0] = {}): BuildService {
  const s = createBuildService({ outputDir: path.join(dir, 'engines'), ...opts });
  services.push(s);
  return s;
}

const sim = (extra: Record<string, unknown> = {}) => ({ backend: 'simulated' as const, simDuration: 0.3, simSeed: 7, ...extra });

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Collects every event of a build from the moment it is accepted. */
function record(svc: BuildService, id: string): BuildEvent[] {
  const events: BuildEvent[] = [];
  svc.subscribe(id, (evs) => events.push(...evs), { afterSeq: -1 });
  return events;
}

/** Files in `d` other than `keep` (leftover temp files would show up here). */
function strayFiles(d: string, keep: string[] = []): string[] {
  return fs.readdirSync(d).filter((f) => !keep.includes(f));
}

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-service-');
  // Build profiles (predicted end) go to the state directory: this test's, not the user's.
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
});
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('build service', () => {
  it('lists backends from a worker and runs a simulated build to success', async () => {
    const svc = service();
    const backends = await svc.listBackends();
    expect(backends.find((b) => b.name === 'simulated')?.available).toBe(true);
    const out = path.join(dir, 'ok.engine');
    const rec = await svc.startBuild({ modelPath: model, outputPath: out, options: sim() });
    const events = record(svc, rec.id);
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('succeeded');
    assertEventStream(events);
    const started = events[0];
    expect(started.type === 'build.started' && started.backend).toBe('simulated');
    const final = svc.getBuild(rec.id)!;
    expect(final).toMatchObject({ state: 'succeeded', backend: 'simulated', simulated: true, engineAvailable: true, outputPath: out });
    expect(final.lastSeq).toBe(events[events.length - 1].seq);
    expect(svc.enginePath(rec.id)).toBe(out);
    expect(fs.statSync(out).size).toBe(fin.engineBytes);
  });

  it('runs queued builds one at a time in FIFO order (concurrency 1)', async () => {
    const svc = service();
    const recs = [];
    for (let i = 0; i < 3; i++) recs.push(await svc.startBuild({ modelPath: model, options: sim({ simDuration: 0.2 }) }));
    expect(svc.listBuilds().map((r) => r.state)).toEqual(['running', 'queued', 'queued']);
    await Promise.all(recs.map((r) => svc.waitForResult(r.id)));
    const done = svc.listBuilds();
    expect(done.map((r) => r.id)).toEqual(recs.map((r) => r.id));
    expect(done.every((r) => r.state === 'succeeded')).toBe(true);
    for (let i = 1; i < done.length; i++) {
      // A build starts only after the previous one finished.
      expect(Date.parse(done[i].startedAt!)).toBeGreaterThanOrEqual(Date.parse(done[i - 1].finishedAt!));
    }
  });

  it('runs builds side by side with concurrency 2', async () => {
    const svc = service({ concurrency: 2 });
    const a = await svc.startBuild({ modelPath: model, options: sim() });
    const b = await svc.startBuild({ modelPath: model, options: sim() });
    expect(svc.listBuilds().map((r) => r.state)).toEqual(['running', 'running']);
    await Promise.all([svc.waitForResult(a.id), svc.waitForResult(b.id)]);
  });

  it('gives builds of one model started at once (no output path) different default engine names', async () => {
    const svc = service({ concurrency: 4 });
    // Validated side by side: each picks its name after the same awaits, so the pick must be held at once.
    const recs = await Promise.all([0, 1, 2].map(() => svc.startBuild({ modelPath: model, options: sim({ simDuration: 0.05 }) })));
    const outputs = recs.map((r) => r.outputPath);
    expect(new Set(outputs).size).toBe(3);
    await Promise.all(recs.map((r) => svc.waitForResult(r.id)));
    for (const p of outputs) expect(fs.existsSync(p!)).toBe(true);
  });

  it('gives two subscribers the same events, and a late one a snapshot that the live events complete', async () => {
    const svc = service();
    const rec = await svc.startBuild({ modelPath: model, options: sim({ simDuration: 0.8 }) });
    const a = record(svc, rec.id);
    const b = record(svc, rec.id);
    // Join mid-build: start from the snapshot, then apply the live stream.
    await phaseStarted(svc, rec.id, 20);
    const live: BuildEvent[] = [];
    const sub = svc.subscribe(rec.id, (evs) => live.push(...evs));
    expect(sub.reset).toBe(false);
    expect(sub.view.seq).toBe(sub.snapshot.lastSeq);
    const view = BuildView.fromSnapshot(sub.view);
    await svc.waitForResult(rec.id);
    expect(a.length).toBeGreaterThan(10);
    expect(b).toEqual(a);
    expect(live.length).toBeGreaterThan(0);
    expect(live[0].seq).toBeGreaterThan(sub.snapshot.lastSeq);
    for (const e of live) view.apply(e);
    // The view rebuilt from the snapshot and continued by the live events is the service's own.
    expect(view.snapshot()).toEqual(svc.getView(rec.id));
    expect(view.status).toBe('succeeded');
    expect(view.rows.openCount).toBe(0);
  });

  it('replays retained events after a given seq (resume)', async () => {
    const svc = service();
    const rec = await svc.startBuild({ modelPath: model, options: sim() });
    const all = record(svc, rec.id);
    await svc.waitForResult(rec.id);
    const k = all[Math.floor(all.length / 2)].seq;
    const replay: BuildEvent[] = [];
    svc.subscribe(rec.id, (evs) => replay.push(...evs), { afterSeq: k });
    await new Promise((r) => setImmediate(r));
    expect(replay.length).toBeGreaterThan(0);
    expect(replay.every((e) => e.seq > k)).toBe(true);
    // Steps may be coalesced in the retained log; everything else is kept exactly.
    const notSteps = (evs: BuildEvent[]) => evs.filter((e) => e.type !== 'phase.step');
    expect(notSteps(replay)).toEqual(notSteps(all.filter((e) => e.seq > k)));
    expect(replay[replay.length - 1].type).toBe('build.finished');
  });

  it('isolates a crashing worker: status crashed, partial output removed, the next build works', async () => {
    const outDir = fs.mkdtempSync(path.join(dir, 'crash-'));
    const out = path.join(outDir, 'crash.engine');
    const cache = path.join(outDir, 'timing.cache');
    // Simulate the half-written temp files a native crash leaves behind (named as atomic_file.cc
    // names them), for the engine and the timing cache.
    let armed = false;
    const launcher: WorkerLauncher = () => {
      const ch = childProcessLauncher();
      if (armed) {
        fs.writeFileSync(`${out}.tmp-${ch.pid}-999`, 'partial engine');
        fs.writeFileSync(`${cache}.tmp-${ch.pid}-998`, 'partial cache');
      }
      armed = false;
      return ch;
    };
    const svc = service({ launcher });
    await svc.listBackends(); // its worker is not the build's
    armed = true;
    const rec = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simFault: 'crash', timingCache: cache }) });
    const events = record(svc, rec.id);
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('crashed');
    expect(fin.error).toMatch(/exited without a result \(signal SIG[A-Z]+\)/);
    assertEventStream(events, { allowOpenPhases: true });
    expect(strayFiles(outDir)).toEqual([]);
    expect(svc.getBuild(rec.id)!.state).toBe('crashed');

    const next = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ timingCache: cache }) });
    expect((await svc.waitForResult(next.id)).status).toBe('succeeded');
    // (timing.cache.lock is the native layer's persistent flock file for merging the cache; the
    // engine's manifest and layer information are written beside it, docs/engines.md.)
    expect(strayFiles(outDir, ['timing.cache.lock']).sort()).toEqual(['crash.engine', 'crash.engine.layers.json', 'crash.engine.manifest.json', 'timing.cache']);
  });

  it('cancels at the next step; no output', async () => {
    const svc = service();
    const out = path.join(dir, 'cancel.engine');
    const rec = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simDuration: 30 }) });
    const events = record(svc, rec.id);
    await phaseStarted(svc, rec.id);
    expect(svc.cancelBuild(rec.id)).toBe(true);
    expect(svc.getBuild(rec.id)!.state).toBe('cancelling');
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('cancelled');
    expect(fin.cancelLatencyMs).toBeLessThan(1000);
    assertEventStream(events);
    expect(events.some((e) => e.type === 'build.cancelling' && e.reason === 'user')).toBe(true);
    expect(fs.existsSync(out)).toBe(false);
    expect(svc.cancelBuild(rec.id)).toBe(false); // already finished
    expect(svc.cancelBuild('no-such-build')).toBe(false);
  });

  it('kills a worker that ignores cancel: after cancelKillMs, and at once on a second cancel', async () => {
    // A real worker whose cancel messages are dropped: stands in for a native layer stuck in a step.
    const deaf: WorkerLauncher = () => {
      const ch = childProcessLauncher();
      return { ...ch, pid: ch.pid, send: (m) => (m.type === 'cancel' ? undefined : ch.send(m)) };
    };
    const svc = service({ launcher: deaf, cancelKillMs: 400 });
    const out = path.join(dir, 'deaf.engine');
    const r1 = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simDuration: 30 }) });
    await phaseStarted(svc, r1.id);
    const t0 = Date.now();
    svc.cancelBuild(r1.id);
    const f1 = await svc.waitForResult(r1.id);
    expect(f1.status).toBe('cancelled');
    expect(f1.error).toMatch(/killed .* after cancel \(no result in time\)/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
    expect(fs.existsSync(out)).toBe(false);

    const r2 = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simDuration: 30 }) });
    await phaseStarted(svc, r2.id);
    svc.cancelBuild(r2.id);
    svc.cancelBuild(r2.id);
    const f2 = await svc.waitForResult(r2.id);
    expect(f2.error).toMatch(/second cancel/);
  });

  it('cancels with reason "timeout" when the time budget runs out', async () => {
    const svc = service();
    const rec = await svc.startBuild({ modelPath: model, options: sim({ simDuration: 30 }), timeBudgetSeconds: 0.5 });
    const events = record(svc, rec.id);
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('cancelled');
    expect(events.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'timeout' });
  });

  it('cancels a queued build without running it', async () => {
    const svc = service();
    const first = await svc.startBuild({ modelPath: model, options: sim({ simDuration: 0.5 }) });
    const second = await svc.startBuild({ modelPath: model, options: sim() });
    const events = record(svc, second.id);
    expect(svc.cancelBuild(second.id)).toBe(true);
    const fin = await svc.waitForResult(second.id);
    expect(fin.status).toBe('cancelled');
    expect(svc.getBuild(second.id)!.startedAt).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(events.map((e) => e.type)).toEqual(['build.cancelling', 'build.finished']);
    expect((await svc.waitForResult(first.id)).status).toBe('succeeded');
  });

  it('keeps going with a corrupt timing cache: a warning, and the build succeeds', async () => {
    const svc = service();
    const cache = path.join(dir, 'corrupt.cache');
    fs.writeFileSync(cache, 'TBSSIMTC' + 'this is not a timing cache \x00\x01\x02');
    const rec = await svc.startBuild({ modelPath: model, options: sim({ timingCache: cache }) });
    const events = record(svc, rec.id);
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status, fin.error).toBe('succeeded');
    const stats = events.filter((e) => e.type === 'cache.stats');
    const warned = stats.some((e) => e.type === 'cache.stats' && e.warning) || events.some((e) => e.type === 'log' && e.severity === 'warning' && /cache/i.test(e.message));
    expect(warned).toBe(true);
  });

  it('shutdown() cancels running and queued builds and leaves no worker behind', async () => {
    const pids: number[] = [];
    const tracking: WorkerLauncher = () => {
      const ch = childProcessLauncher();
      pids.push(ch.pid!);
      return ch;
    };
    const svc = createBuildService({ launcher: tracking, outputDir: path.join(dir, 'engines') });
    const a = await svc.startBuild({ modelPath: model, options: sim({ simDuration: 30 }) });
    const b = await svc.startBuild({ modelPath: model, options: sim({ simDuration: 30 }) });
    await phaseStarted(svc, a.id);
    await svc.shutdown();
    const results: BuildFinished[] = await Promise.all([svc.waitForResult(a.id), svc.waitForResult(b.id)]);
    expect(results.map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.filter(alive)).toEqual([]);
    await expect(svc.startBuild({ modelPath: model })).rejects.toThrow(/shutting down/);
  });

  // The worker's batches (eventLines) replaced by garbage of each kind the host must refuse: event
  // objects that are no events, a line that is no event, a line that is not JSON, and a line
  // holding two values (which would shift every later line onto the wrong event).
  it.each([
    ['event objects', { type: 'events', events: [{ bogus: true }] }],
    ['an event line', { type: 'eventLines', lines: ['{"bogus":true}'] }],
    ['a line that is not JSON', { type: 'eventLines', lines: ['{"v":1,'] }],
    ['a line with two values', { type: 'eventLines', lines: ['{"v":1},{"v":1}'] }],
  ])('reports a worker that sends garbage (%s) as failed and kills it', async (_what, garbage) => {
    let pid = 0;
    const liar: WorkerLauncher = () => {
      const ch = childProcessLauncher();
      pid = ch.pid!;
      return {
        ...ch,
        pid: ch.pid,
        onMessage: (cb) => ch.onMessage((m) => cb(m.type === 'eventLines' ? (garbage as never) : m)),
      };
    };
    const svc = service({ launcher: liar });
    const rec = await svc.startBuild({ modelPath: model, options: sim() });
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('failed');
    expect(fin.error).toMatch(/invalid message/);
    await waitUntil(() => !alive(pid));
  });

  it('fails a build whose worker cannot be started, and runs the next one', async () => {
    let calls = 0;
    const flaky: WorkerLauncher = () => {
      calls++;
      if (calls === 2) throw new Error('spawn EAGAIN');
      return childProcessLauncher();
    };
    const svc = service({ launcher: flaky });
    const a = await svc.startBuild({ modelPath: model, options: sim() });
    const fa = await svc.waitForResult(a.id);
    expect(fa).toMatchObject({ status: 'failed', error: 'could not start a build worker: spawn EAGAIN' });
    const b = await svc.startBuild({ modelPath: model, options: sim() });
    expect((await svc.waitForResult(b.id)).status).toBe('succeeded');
  });

  it('rejects bad requests before queueing and reports unknown builds', async () => {
    const svc = service();
    await expect(svc.startBuild({ modelPath: path.join(dir, 'missing.onnx') })).rejects.toMatchObject({ code: 'not_found' });
    await expect(svc.startBuild({ modelPath: model, options: { optLevel: 7 } as never })).rejects.toMatchObject({ code: 'bad_input' });
    expect(svc.listBuilds()).toEqual([]);
    expect(() => svc.subscribe('nope', () => {})).toThrow(/unknown build/);
    await expect(svc.waitForResult('nope')).rejects.toMatchObject({ code: 'not_found' });
    expect(svc.getBuild('nope')).toBeUndefined();
  });

  it('keeps full details of the last N finished builds only; older ones keep their summary', async () => {
    // Without a bound every finished build kept its event log and phase tree for the life of the
    // server (about 1 MiB each for real models). Measured through the service API: what a
    // subscriber replaying from the start (afterSeq -1) gets back, and the phase tree a record holds.
    // The bound is the service's option (serve --keep-build-details); a small one shows the same
    // eviction with a quarter of the worker processes.
    const keep = 5;
    const total = 15;
    // One at a time, so "the most recent to finish" is the order they were started in.
    const svc = service({ concurrency: 1, retainFinishedBuilds: keep });
    const out = path.join(dir, 'evict');
    fs.mkdirSync(out, { recursive: true });
    const ids: string[] = [];
    for (let i = 0; i < total; i++) {
      const r = await svc.startBuild({ modelPath: model, outputPath: path.join(out, `e${i}.engine`), options: sim({ simDuration: 0.05 }) });
      ids.push(r.id);
    }
    for (const id of ids) expect((await svc.waitForResult(id)).status).toBe('succeeded');
    // Workers exit a moment after their result; eviction follows the exit.
    // The last build's exit evicts the one `keep` before it: after that nothing changes.
    await waitUntil(() => svc.detailsEvicted(ids[total - 1 - keep]));

    const replayed = (id: string) => {
      let n = 0;
      const sub = svc.subscribe(id, (evs) => (n += evs.length), { afterSeq: -1 });
      return new Promise<{ n: number; snapshot: typeof sub.snapshot; view: typeof sub.view; reset: boolean }>((r) =>
        setTimeout(() => r({ n, snapshot: sub.snapshot, view: sub.view, reset: sub.reset }), 0),
      );
    };
    const counts = await Promise.all(ids.map(replayed));
    const detailed = counts.filter((c) => c.n > 0);
    expect(detailed).toHaveLength(keep);
    // The ones kept are the most recent to finish; every kept one still replays a whole stream.
    for (const c of counts.slice(-keep)) {
      expect(c.n).toBeGreaterThan(10);
      expect(c.view.rows.rows.length).toBeGreaterThan(0);
      expect(c.reset).toBe(false);
    }
    const totalEvents = counts.reduce((a, c) => a + c.n, 0);
    expect(totalEvents).toBeLessThanOrEqual(keep * Math.max(...counts.map((c) => c.n)));

    // Evicted: no events, no phase tree, but the summary is all there.
    for (const [i, c] of counts.slice(0, total - keep).entries()) {
      expect(c.n).toBe(0);
      // A resume from -1 is told plainly that the events are gone: a reset to the outcome alone.
      expect(c.reset).toBe(true);
      expect(c.view).toMatchObject({ status: 'succeeded', outcome: { status: 'succeeded' } });
      expect(c.view.rows.rows).toEqual([]);
      expect(c.snapshot).toMatchObject({ id: ids[i], state: 'succeeded', engineAvailable: true, outcome: { status: 'succeeded' } });
      expect(svc.detailsEvicted(ids[i])).toBe(true);
    }
    expect(svc.detailsEvicted(ids[total - 1])).toBe(false);
    const list = svc.listBuilds();
    expect(list.map((b) => b.id)).toEqual(ids);
    expect(list.every((b) => b.state === 'succeeded' && b.outcome?.status === 'succeeded')).toBe(true);
    expect(svc.getBuild(ids[0])).toMatchObject({ id: ids[0], state: 'succeeded', modelPath: model });
    expect(svc.getView(ids[0])!.rows.rows).toEqual([]);
    expect(await svc.waitForResult(ids[0])).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(svc.enginePath(ids[0])).toBe(path.join(out, 'e0.engine'));
    expect(svc.cancelBuild(ids[0])).toBe(false);
    // The engine is looked up live: a deleted file is no longer offered.
    fs.rmSync(path.join(out, 'e0.engine'));
    expect(svc.getBuild(ids[0])?.engineAvailable).toBe(false);
    expect(svc.enginePath(ids[0])).toBeUndefined();
  }, 120_000);

  it('shows a display name as the model file name, and refuses one that is a path or hides characters', async () => {
    const svc = service();
    const r = await svc.startBuild({ modelPath: model, modelDisplayName: 'résnet 50.onnx', options: sim({ simDuration: 0.05 }) });
    expect(r.model?.fileName).toBe('résnet 50.onnx');
    expect(r.modelPath).toBe(model);
    await svc.waitForResult(r.id);
    expect(svc.getBuild(r.id)?.model?.fileName).toBe('résnet 50.onnx');
    for (const bad of ['../x.onnx', 'a\\b.onnx', 'a\u202eb.onnx', 'a\nb', '', 'x'.repeat(256)]) {
      await expect(svc.startBuild({ modelPath: model, modelDisplayName: bad, options: sim() }), JSON.stringify(bad)).rejects.toMatchObject({
        code: 'bad_input',
        message: expect.stringMatching(/modelDisplayName/),
      });
    }
  });

  it('takes the bound as an option (0 keeps no finished details)', async () => {
    expect(() => service({ retainFinishedBuilds: -1 })).toThrow(/retainFinishedBuilds/);
    const svc = service({ retainFinishedBuilds: 0 });
    const r = await svc.startBuild({ modelPath: model, options: sim({ simDuration: 0.05 }) });
    await svc.waitForResult(r.id);
    await waitUntil(() => svc.detailsEvicted(r.id));
    expect(svc.getBuild(r.id)).toMatchObject({ state: 'succeeded' });
    expect(svc.getView(r.id)).toMatchObject({ status: 'succeeded', rows: { rows: [] } });
  });
});

/** Resolves once the build has started `n` phases (it is really running, not just launched). */
function phaseStarted(svc: BuildService, id: string, n = 1): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const sub = svc.subscribe(
      id,
      (evs) => {
        seen += evs.filter((e) => e.type === 'phase.start').length;
        if (seen >= n) {
          queueMicrotask(() => sub.unsubscribe());
          resolve();
        }
      },
      { afterSeq: -1 },
    );
  });
}

async function waitUntil(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
