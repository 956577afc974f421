// The real native addon through apps/worker/addon.ts: every event validates against the protocol,
// the stream keeps its invariants, cancel works, and a process using it exits on its own.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it, vi } from 'vitest';

import { BackendInfo, BuildEvent, BuildOptions, PhaseNode, type BuildFinished, type LayerInfo } from '../../shared/protocol.js';
import { addonPath, checkEventLayout, listBackends, readBuildRoutes, startBuild, toNativeRequest, type EventLayout } from '../addon.js';
import type { NativeBuildRequest } from '../native-api.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tbs-addon-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const layers: LayerInfo[] = Array.from({ length: 12 }, (_, i) => ({ name: `node_${i}`, op: ['Conv', 'Relu', 'MatMul', 'Add'][i % 4] }));

function request(name: string, options: Record<string, unknown>, extra: Partial<NativeBuildRequest> = {}): NativeBuildRequest {
  return {
    buildId: name,
    backend: 'simulated',
    modelPath: path.join(dir, `${name}.onnx`),
    outputPath: path.join(dir, `${name}.engine`),
    options: BuildOptions.parse({ backend: 'simulated', ...options }),
    layers,
    simThreads: 3,
    ...extra,
  };
}

/** Runs a build, collecting every event; `onFirstStep` may act (e.g. cancel) mid-build. */
async function run(req: NativeBuildRequest, onFirstStep?: (h: ReturnType<typeof startBuild>) => void) {
  const events: BuildEvent[] = [];
  let acted = false;
  let afterFinished = 0;
  const handle = startBuild(req, (batch) => {
    for (const e of batch) {
      if (events.at(-1)?.type === 'build.finished') afterFinished++;
      events.push(e);
      if (!acted && e.type === 'phase.step' && onFirstStep) {
        acted = true;
        onFirstStep(handle);
      }
    }
  });
  const result = await handle.result;
  return { events, result, handle, afterFinished };
}

/** The protocol invariants (same list as the C++ invariants test). */
function checkInvariants(events: BuildEvent[]): string | undefined {
  const open = new Map<number, { parentId: number | null; nbSteps: number; stepsDone: number }>();
  let cancelAt = Infinity;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (i > 0 && e.seq <= events[i - 1].seq) return `seq not rising at ${i}`;
    if (e.type === 'phase.start') {
      if (e.parentId !== null && !open.has(e.parentId)) return `phase ${e.id} started under closed parent ${e.parentId}`;
      open.set(e.id, { parentId: e.parentId, nbSteps: e.nbSteps, stepsDone: 0 });
    } else if (e.type === 'phase.step') {
      const p = open.get(e.id);
      if (!p) return `step for closed phase ${e.id}`;
      if (e.stepsDone !== e.step + 1 || e.stepsDone > p.nbSteps || e.stepsDone <= p.stepsDone) return `bad step ${JSON.stringify(e)}`;
      if (e.t > cancelAt) return `step completed after cancel: ${JSON.stringify(e)}`;
      p.stepsDone = e.stepsDone;
    } else if (e.type === 'phase.finish') {
      const p = open.get(e.id);
      if (!p) return `finish of closed phase ${e.id}`;
      if (e.stepsDone !== p.stepsDone || e.early !== e.stepsDone < p.nbSteps) return `bad finish ${JSON.stringify(e)}`;
      open.delete(e.id);
    } else if (e.type === 'build.cancelling') {
      cancelAt = e.requestedAt;
    }
  }
  if (events.at(-1)?.type !== 'build.finished') return 'build.finished is not last';
  if (open.size) return `${open.size} phases never finished`;
  return undefined;
}

describe('native addon', () => {
  it('lists backends with the protocol shape, off the JS thread', async () => {
    const pending = listBackends();
    expect(pending).toBeInstanceOf(Promise);
    const backends = await pending;
    for (const b of backends) BackendInfo.parse(b);
    const sim = backends.find((b) => b.name === 'simulated');
    expect(sim).toMatchObject({ available: true, version: 'sim-1', emulates: process.env.TBS_SIM_TRT_VERSION || '10.16.0' });
    const trt = backends.find((b) => b.name === 'tensorrt');
    expect(trt).toBeDefined();
    expect(Array.isArray(trt!.adapters)).toBe(true);
    if (!trt!.available) expect(trt!.reason).toMatch(/TensorRT/);
  });

  it('reads TensorRT build routes only when asked, off the JS thread, and says why there are none', async () => {
    const pending = readBuildRoutes();
    expect(pending).toBeInstanceOf(Promise);
    const settled = await pending.then(
      (json) => ({ json, error: undefined }),
      (error: Error) => ({ json: undefined, error }),
    );
    const trt = (await listBackends()).find((b) => b.name === 'tensorrt')!;
    if (trt.available && trt.library && /^11\.([1-9]|\d\d)/.test(trt.library.version)) {
      expect(settled.json).toMatch(/allowed_values|knob/i);
    } else {
      // No TensorRT 11.1+ here (no headers on CI, no library anywhere): a reason, never a hang.
      expect(settled.error?.message).toMatch(/TensorRT|build routes/);
    }
  });

  it('maps the TensorRT 10/11 options into the native request', () => {
    const o = { device: 1, buildRoute: '-conv_use_long_w=off', inferCacheMisses: true, shapeValues: { target: { min: [1, -1], opt: [2, -1], max: [4, -1] } } };
    const n = toNativeRequest(request('opts', o));
    expect(n).toMatchObject({ device: 1, buildRoute: '-conv_use_long_w=off', inferCacheMisses: true, shapeValues: { target: { min: [1, -1], opt: [2, -1], max: [4, -1] } } });
  });

  it('maxGpuMemory caps the workspace and tactic DRAM pools (the smaller wins); simMemory goes in bytes', () => {
    const GiB = 2 ** 30;
    expect(toNativeRequest(request('g', { maxGpuMemory: 8 * GiB }))).toMatchObject({ workspaceBytes: 8 * GiB, tacticDramBytes: 8 * GiB });
    expect(toNativeRequest(request('g', { maxGpuMemory: 8 * GiB, workspaceMiB: 1024, tacticDramMiB: 16384 }))).toMatchObject({
      workspaceBytes: 1024 * 2 ** 20,
      tacticDramBytes: 8 * GiB,
    });
    expect(toNativeRequest(request('g', {}))).toMatchObject({ workspaceBytes: undefined, tacticDramBytes: undefined });
    expect(toNativeRequest(request('s', { simMemory: '2G' }))).toMatchObject({ simMemoryBytes: 2 * GiB });
  });

  it('passes verboseLog on by itself: it does not turn on inferCacheMisses', () => {
    expect(toNativeRequest(request('v', { verboseLog: true }))).toMatchObject({ verboseLog: true, inferCacheMisses: undefined });
    expect(toNativeRequest(request('q', {})).verboseLog).toBeUndefined();
  });

  it('verboseLog reaches the native backend: VERBOSE lines only when asked', async () => {
    const verboseLines = async (name: string, options: Record<string, unknown>) => {
      const { events, result } = await run(request(name, { simDuration: 0.05, simSeed: 2, ...options }));
      expect(result).toMatchObject({ status: 'succeeded' });
      return events.filter((e) => e.type === 'log' && e.severity === 'verbose');
    };
    expect(await verboseLines('vq', {})).toEqual([]);
    const loud = await verboseLines('vl', { verboseLog: true });
    expect(loud.length).toBeGreaterThan(10);
    expect(loud.some((e) => e.type === 'log' && e.message.startsWith('[simulated] '))).toBe(true);
  });

  it('runs a simulated build whose every event validates', async () => {
    const req = request('ok', { simDuration: 0.2, simSeed: 4, timingCache: path.join(dir, 'ok.cache') }, { heartbeatMs: 20 });
    const model = {
      fileName: 'ok.onnx',
      fileBytes: 10,
      irVersion: 8,
      opsetImports: [],
      producer: { name: 't', version: '1' },
      graphName: 'g',
      inputs: [],
      outputs: [],
      nodeCount: 12,
      opHistogram: {},
      initializerBytes: 0,
      externalData: { files: [], bytes: 0 },
      dynamicInputs: [],
    };
    const { events, result, handle, afterFinished } = await run({ ...req, model });
    for (const e of events) BuildEvent.parse(e);
    expect(checkInvariants(events)).toBeUndefined();
    expect(afterFinished).toBe(0);
    const started = events[0];
    expect(started.type).toBe('build.started');
    if (started.type === 'build.started') {
      expect(started).toMatchObject({ v: 1, buildId: 'ok', backend: 'simulated', backendVersion: 'sim-1', simulated: true, outputPath: req.outputPath, model });
      expect(started.options?.simSeed).toBe(4);
      expect(Math.abs((started.startedAtMs ?? 0) - Date.now())).toBeLessThan(60_000);
    }
    expect(result).toBe(events.at(-1));
    expect(result).toMatchObject({ type: 'build.finished', status: 'succeeded', outputPath: req.outputPath });
    expect(result.cache).toMatchObject({ entriesBefore: 0, hits: 0 });
    expect(result.cache!.entriesAfter).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === 'heartbeat').length).toBeGreaterThan(2);
    expect(events.some((e) => e.type === 'log' && e.severity === 'warning')).toBe(true);
    const names = new Set(events.flatMap((e) => (e.type === 'phase.start' ? [e.name] : [])));
    expect([...names]).toEqual(expect.arrayContaining(['Building engine', 'Timing graph nodes', 'Measuring tactic time']));
    const bytes = readFileSync(req.outputPath);
    expect(bytes.length).toBe(result.engineBytes);
    expect(bytes.toString('latin1').split('\n')[0]).toBe('TRT-BUILD-STUDIO SIMULATED ENGINE - NOT A TENSORRT ENGINE');
    const snap = handle.snapshot();
    expect(snap.length).toBe(events.filter((e) => e.type === 'phase.start').length);
    for (const n of snap) PhaseNode.parse(n);
    expect(snap.every((n) => n.endT !== undefined)).toBe(true);
  });

  it('keeps invariants over several seeded builds with cancels', async () => {
    for (let seed = 0; seed < 8; seed++) {
      const cancel = seed % 2 === 1;
      const { events, result } = await run(request(`inv${seed}`, { simDuration: cancel ? 1 : 0.05, simSeed: seed }), cancel ? (h) => h.cancel('user') : undefined);
      expect(checkInvariants(events), `seed ${seed}`).toBeUndefined();
      expect(result.status).toBe(cancel ? 'cancelled' : 'succeeded');
    }
  });

  it('cancels a hanging build promptly and writes nothing', async () => {
    const req = request('hang', { simDuration: 0.1, simSeed: 2, simFault: 'hang@Timing graph nodes' }, { simHangMs: 10_000 });
    const events: BuildEvent[] = [];
    const t0 = Date.now();
    const handle: ReturnType<typeof startBuild> = startBuild(req, (batch) => {
      events.push(...batch);
      if (batch.some((e) => e.type === 'log' && e.message.includes('simulated hang'))) setTimeout(() => handle.cancel('timeout'), 100);
    });
    const result: BuildFinished = await handle.result;
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(result.status).toBe('cancelled');
    expect(result.cancelLatencyMs).toBeGreaterThanOrEqual(0);
    expect(result.cancelLatencyMs!).toBeLessThan(200);
    expect(result.stopToFinishMs!).toBeLessThan(500);
    expect(events.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'timeout' });
    expect(checkInvariants(events)).toBeUndefined();
    handle.cancel('user'); // after the end: harmless
    expect(existsSync(req.outputPath)).toBe(false);
  });

  it('a held build pauses at the outbox bound (the builder waits, memory stays put) and Stop releases it', async () => {
    // 3,000 layers make hundreds of thousands of events: far more than the outbox's 16 MiB.
    const big = Array.from({ length: 3000 }, (_, i) => ({ name: `node_${i}`, op: ['Conv', 'Relu', 'MatMul', 'Add'][i % 4] }));
    const req = request('held', { simDuration: 4, simSeed: 1 }, { layers: big });
    const events: BuildEvent[] = [];
    const handle = startBuild(req, (batch) => void events.push(...batch));
    expect(handle.hold).toBeTypeOf('function');
    expect(handle.backPressure).toBeTypeOf('function');
    handle.hold!(true); // a reader that stopped reading
    const bp = () => handle.backPressure!();
    const deadline = Date.now() + 60_000;
    while (bp().gateClosings === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const closed = bp();
    expect(closed.gateClosings).toBe(1);
    expect(closed.outboxHighBytes).toBe(16 * 1024 * 1024);
    // Paused: what the outbox holds stops growing, and the phase tree stops moving.
    await new Promise((r) => setTimeout(r, 300));
    const a = bp();
    const phasesA = handle.snapshot().length;
    await new Promise((r) => setTimeout(r, 500));
    const b = bp();
    // (The flusher's heartbeat still reports the silence: coalesced, one event at most.)
    expect(b.outboxBytes - a.outboxBytes).toBeLessThanOrEqual(256);
    expect(handle.snapshot().length).toBe(phasesA);
    // The bound plus at most what was under way when the gate closed (bounded_outbox.h).
    expect(b.outboxPeakBytes).toBeGreaterThanOrEqual(b.outboxHighBytes);
    expect(b.outboxPeakBytes).toBeLessThanOrEqual(b.outboxHighBytes + b.inFlightBytes);
    // Stop while held: the builder threads are released, the hold is lifted (as the worker does
    // on a cancel) and the whole stream arrives, ending cancelled.
    handle.cancel('user');
    handle.hold!(false);
    const result = await handle.result;
    expect(result.status).toBe('cancelled');
    expect(bp().builderWaitedMs).toBeGreaterThan(500);
    expect(checkInvariants(events)).toBeUndefined();
    expect(events.filter((e) => e.type === 'phase.start').length).toBeGreaterThan(10_000);
  }, 120_000);

  it('reports an injected failure naming the phase', async () => {
    const req = request('fail', { simDuration: 0.05, simFault: 'fail@Optimizing graph' });
    const { result, events } = await run(req);
    expect(result.status).toBe('failed');
    expect(result.error).toContain('"Optimizing graph"');
    expect(events.some((e) => e.type === 'log' && e.severity === 'error')).toBe(true);
    expect(existsSync(req.outputPath)).toBe(false);
  });

  it('fails clearly for an unwritable output path', async () => {
    const req = request('nodir', { simDuration: 0.05 }, { outputPath: path.join(dir, 'missing', 'x.engine') });
    const { result } = await run(req);
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/missing does not exist/);
  });

  it('runs two builds at once with separate streams', async () => {
    const [a, b] = await Promise.all([run(request('par-a', { simDuration: 0.1, simSeed: 1 })), run(request('par-b', { simDuration: 0.1, simSeed: 2 }))]);
    for (const r of [a, b]) {
      expect(checkInvariants(r.events)).toBeUndefined();
      expect(r.result.status).toBe('succeeded');
    }
    expect(a.events.every((e) => e.buildId === 'par-a') && b.events.every((e) => e.buildId === 'par-b')).toBe(true);
  });

  it('rejects bad requests with a clear error', () => {
    expect(() => startBuild({ ...request('bad', {}), backend: 'nope' as never }, () => {})).toThrow(/unknown backend "nope"/);
    expect(() => startBuild({ ...request('bad2', {}), simThreads: 'x' as never }, () => {})).toThrow(/"simThreads" must be a number/);
  });

  it('converts options to native units', () => {
    const req = request('conv', { workspaceMiB: 512, tacticSharedMemoryKiB: 48, simDuration: 1.5, simFault: 'hang@Timing graph nodes', tf32: false, shapes: ['x:1x3/2x3/4x3'] });
    const n = toNativeRequest(req);
    expect(n).toMatchObject({
      workspaceBytes: 512 * 1024 * 1024,
      tacticSharedMemoryBytes: 48 * 1024,
      simDurationMs: 1500,
      simFault: 'hang',
      simFaultPhase: 'Timing graph nodes',
      tf32: 0,
    });
    expect(n.shapes).toEqual({ x: { min: [1, 3], opt: [2, 3], max: [4, 3] } });
  });

  // A process that only runs a build must exit by itself: the thread-safe function is released.
  it('lets the process exit after a build (and after a cancelled one)', () => {
    const script = `
      const addon = require(${JSON.stringify(addonPath())});
      const cancel = process.argv[1] === 'cancel';
      let last;
      const h = addon.startBuild({ buildId: 'x', backend: 'simulated', outputPath: ${JSON.stringify(path.join(dir, 'exit.engine'))},
        simDurationMs: cancel ? 10000 : 50, heartbeatMs: 10 }, (nums) => { last = nums[nums.length - 8]; });
      if (cancel) setTimeout(() => h.cancel('user'), 50);
      process.on('exit', () => console.log('last-event-type', last));`;
    for (const mode of ['done', 'cancel']) {
      const r = spawnSync(process.execPath, ['-e', script, mode], { encoding: 'utf8', timeout: 10_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('last-event-type 8'); // build.finished arrived before exit
    }
  });

  it('snapshots the live tree mid-build', async () => {
    let mid: ReturnType<ReturnType<typeof startBuild>['snapshot']> = [];
    const { result } = await run(request('snap', { simDuration: 0.6, simSeed: 9 }), (h) => {
      setTimeout(() => (mid = h.snapshot()), 100);
    });
    expect(result.status).toBe('succeeded');
    for (const n of mid) PhaseNode.parse(n);
    expect(mid.some((n) => n.name === 'Building engine' && n.endT === undefined)).toBe(true);
  });

  it('names the missing addon file and the command to build it', async () => {
    expect(addonPath()).toMatch(/build\/native\/Release\/trt_build_studio\.node$/);
    const prev = process.env.TBS_ADDON_PATH;
    process.env.TBS_ADDON_PATH = path.join(dir, 'nowhere', 'x.node');
    try {
      vi.resetModules(); // a fresh module: nothing loaded yet
      const fresh = await import('../addon.js');
      expect(fresh.addonPath()).toBe(path.join(dir, 'nowhere', 'x.node'));
      await expect(fresh.listBackends()).rejects.toThrow(/native addon not found at .*nowhere\/x\.node: run "npm run build:native"/);
    } finally {
      if (prev === undefined) delete process.env.TBS_ADDON_PATH;
      else process.env.TBS_ADDON_PATH = prev;
    }
  });

  it('loads only an addon whose batch layout is the one addon.ts decodes', () => {
    const layout = (require(addonPath()) as { eventLayout: EventLayout }).eventLayout;
    expect(layout.slots).toBe(8);
    expect(() => checkEventLayout(layout)).not.toThrow();
    const moved: EventLayout = { ...layout, types: { ...layout.types, heartbeat: 9, spans: 10 } };
    expect(() => checkEventLayout(moved, 'x.node')).toThrow(
      /x\.node packs events differently .*event type "heartbeat": addon 9, addon\.ts 6; event type "spans": addon 10, addon\.ts absent/,
    );
    expect(() => checkEventLayout({ ...layout, fields: ['seq', 'type', 't', 'a', 'b', 'c', 'd', 'e'] })).toThrow(/slot order/);
    expect(() => checkEventLayout({ ...layout, slots: 9 })).toThrow(/slots per event: addon 9, addon\.ts 8/);
    expect(() => checkEventLayout(undefined, 'old.node')).toThrow(/old\.node does not export eventLayout/);
  });

  it('maps crashRecordPath into the native request', () => {
    expect(toNativeRequest(request('crash-map', {}, { crashRecordPath: '/tmp/x.crash' })).crashRecordPath).toBe('/tmp/x.crash');
  });

  it('crash fault really kills the process (worker isolation depends on it)', () => {
    const script = `require(${JSON.stringify(addonPath())}).startBuild({ buildId: 'c', backend: 'simulated', outputPath: ${JSON.stringify(path.join(dir, 'c.engine'))}, simDurationMs: 50, simFault: 'crash', simFaultPhase: 'Timing graph nodes' }, () => {});`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(r.signal).toBe('SIGABRT');
    expect(r.stderr).toContain('simulated crash in phase "Timing graph nodes"');
  });
});
