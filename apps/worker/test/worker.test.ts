// The build worker as a real process (dist/apps/worker/worker.js) spoken to over its message
// protocol, the way the service's launchers do.
import { fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { BATCH_MAX_EVENTS } from '../ipc-batcher.js';
import type { ParentToWorker, WorkerToParent } from '../messages.js';
import { readWorkerMessage } from '../../../test/support/worker-messages.js';
import { requireBuilt, REPO_ROOT } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const WORKER = path.join(REPO_ROOT, 'dist/apps/worker/worker.js');
let dir: string;
let model: string;

interface Run {
  child: ChildProcess;
  messages: WorkerToParent[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startWorker(script = WORKER, args: string[] = [], { autoRelease = true, env = {} as NodeJS.ProcessEnv } = {}): Run {
  const child = fork(script, args, { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: { ...process.env, ...env } });
  const messages: WorkerToParent[] = [];
  child.on('message', (m) => {
    const msg = readWorkerMessage(m);
    messages.push(msg);
    // Like the service: each batch of events is acknowledged (the worker sends the next one only
    // then), and once the answer is in, the worker is told it may go.
    if (msg.type === 'events' && child.connected) child.send({ type: 'ack' });
    if (autoRelease && (msg.type === 'result' || msg.type === 'backends') && child.connected) child.send({ type: 'release' });
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  return { child, messages, exit };
}

function request(id: string, out: string, options: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): ParentToWorker {
  return {
    type: 'start',
    request: {
      ...extra,
      buildId: id,
      backend: 'simulated',
      modelPath: model,
      outputPath: out,
      options: { backend: 'simulated', simDuration: 0.4, simSeed: 3, ...options },
      layers: Array.from({ length: 12 }, (_, i) => ({ name: `conv_${i}`, op: 'Conv' })),
    },
  };
}

/** Resolves once the worker has sent a message matching `pred` (so the test acts mid-build, not mid-boot). */
function waitFor(run: Run, pred: (m: WorkerToParent) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (run.messages.some(pred)) resolve();
      else if (run.child.exitCode !== null || run.child.signalCode !== null) reject(new Error(`worker exited: ${JSON.stringify(run.messages).slice(0, 500)}`));
      else setTimeout(check, 20);
    };
    check();
  });
}
const building = (m: WorkerToParent) => m.type === 'events' && m.events.some((e) => e.type === 'phase.start');

const eventsOf = (msgs: WorkerToParent[]): BuildEvent[] => msgs.flatMap((m) => (m.type === 'events' ? m.events : []));

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-worker-');
  model = writeModel(path.join(dir, 'm.onnx'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('build worker process', () => {
  it('says ready, answers a backends query and exits', async () => {
    const w = startWorker();
    w.child.send({ type: 'backends' });
    expect(await w.exit).toEqual({ code: 0, signal: null });
    expect(w.messages[0]).toMatchObject({ type: 'ready', pid: w.child.pid });
    const list = w.messages.find((m) => m.type === 'backends');
    expect(list?.type === 'backends' && list.list.map((b) => b.name).sort()).toEqual(['simulated', 'tensorrt']);
  });

  it('runs one build: batched events, then the result, then exits 0', async () => {
    const out = path.join(dir, 'one.engine');
    const w = startWorker();
    w.child.send(request('w1', out));
    expect(await w.exit).toEqual({ code: 0, signal: null });
    const batches = w.messages.filter((m) => m.type === 'events');
    const events = eventsOf(w.messages);
    assertEventStream(events);
    expect(batches.every((b) => b.type === 'events' && b.events.length <= BATCH_MAX_EVENTS)).toBe(true);
    // Batched: far fewer messages than events.
    expect(batches.length).toBeLessThan(events.length / 3);
    const last = w.messages[w.messages.length - 1];
    expect(last.type).toBe('result');
    expect(last.type === 'result' && last.finished).toEqual(events[events.length - 1]);
    expect(fs.existsSync(out)).toBe(true);
  });

  describe('liveness on heartbeats', () => {
    // The fake NVML and CUDA driver (native/test/fake_*.cc) built beside the addon: CUDA device 0
    // sits on PCI bus 5E, device 1 on 3B, and NVML numbers them the other way round.
    const FAKES = path.join(REPO_ROOT, 'build/native/gpu-fakes');
    const fakeGpu = {
      TBS_NVML_LIB: path.join(FAKES, 'libnvidia-ml.so.1'),
      TBS_CUDA_DRIVER_LIB: path.join(FAKES, 'libcuda.so.1'),
      FAKE_NVML_UTIL_5E: '87',
      FAKE_NVML_UTIL_3B: '12',
    };
    const beats = async (env: NodeJS.ProcessEnv, options: Record<string, unknown> = {}) => {
      const w = startWorker(WORKER, [], { env });
      w.child.send(request(`hb-${Math.random()}`, path.join(dir, `hb-${Math.random()}.engine`), { simDuration: 0.5, ...options }, { heartbeatMs: 40 }));
      expect(await w.exit).toEqual({ code: 0, signal: null });
      const hb = eventsOf(w.messages).filter((e) => e.type === 'heartbeat');
      expect(hb.length).toBeGreaterThanOrEqual(3);
      return hb as Extract<BuildEvent, { type: 'heartbeat' }>[];
    };

    it('carry the worker CPU time, rising', async () => {
      const hb = await beats({ TBS_GPU_PROBE: 'off' });
      const cpu = hb.map((h) => h.workerCpuMs ?? -1);
      expect(cpu.every((c) => c >= 0)).toBe(true);
      expect(cpu[cpu.length - 1]).toBeGreaterThan(cpu[0]);
      expect(hb.some((h) => h.gpuUtilPercent !== undefined || h.gpuNote !== undefined)).toBe(false);
    });

    it("carry the build's GPU utilisation through NVML, found by PCI bus (not NVML's numbering)", async () => {
      const d0 = await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always' });
      expect(d0.map((h) => h.gpuUtilPercent)).toEqual(d0.map(() => 87));
      const d1 = await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always' }, { device: 1 });
      expect(d1.map((h) => h.gpuUtilPercent)).toEqual(d1.map(() => 12));
      expect([...d0, ...d1].some((h) => h.gpuNote !== undefined)).toBe(false);
    });

    it("carry the worker's host memory, and its own GPU memory, clock and temperature from NVML", async () => {
      // "self" is the fake's getpid(): the worker process that loaded it.
      const hb = await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always', FAKE_NVML_PROCS_5E: '1:999,self:3221225472' });
      expect(hb.every((h) => (h.hostMemoryBytes ?? 0) > 10 * 2 ** 20)).toBe(true);
      expect(hb.map((h) => h.gpuMemoryBytes)).toEqual(hb.map(() => 3221225472));
      expect(hb.map((h) => [h.gpuUtilization, h.gpuClockMhz, h.gpuTemperatureC])).toEqual(hb.map(() => [0.87, 1410, 67]));
      expect(hb.map((h) => h.gpuMemorySource)).toEqual(hb.map(() => 'process'));
      // Not listed (no CUDA context yet) in the host's PID namespace: holds nothing.
      expect((await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always' })).map((h) => h.gpuMemoryBytes)).toEqual(expect.arrayContaining([0]));
      // NVML without the process list: the device's growth since the first sample, labelled, with
      // the reason; the utilisation note stays unset (the GPU figure itself is there).
      const noList = await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always', FAKE_NVML_NO_PROCESSES: '1' });
      expect(noList.map((h) => [h.gpuMemoryBytes, h.gpuMemorySource])).toEqual(noList.map(() => [0, 'device-delta']));
      expect(noList.every((h) => /^NVML did not list the GPU's processes: Not Supported/.test(h.gpuMemoryUnknown ?? ''))).toBe(true);
      expect(noList.some((h) => h.gpuNote !== undefined)).toBe(false);
    });

    it('say once why there is no GPU figure', async () => {
      const none = await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always', TBS_NVML_LIB: path.join(dir, 'no-such-libnvidia-ml.so.1') });
      const notes = none.filter((h) => h.gpuNote !== undefined);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toBe(none[0]);
      expect(notes[0].gpuNote).toMatch(/^no GPU utilisation: NVML .*not found.*no-such-libnvidia-ml/);
      expect(none.some((h) => h.gpuUtilPercent !== undefined)).toBe(false);

      const unsupported = await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always', FAKE_NVML_UNSUPPORTED: '1' });
      expect(unsupported.filter((h) => h.gpuNote !== undefined).map((h) => h.gpuNote)).toEqual(['no GPU utilisation: this GPU does not report its utilisation through NVML']);
      const wrongDevice = await beats({ ...fakeGpu, TBS_GPU_PROBE: 'always' }, { device: 5 });
      expect(wrongDevice[0].gpuNote).toMatch(/no CUDA device 5: invalid device ordinal/);
    });

    it('leave the GPU out of simulated builds unless asked (the simulation uses no GPU)', async () => {
      const hb = await beats(fakeGpu);
      expect(hb.some((h) => h.gpuUtilPercent !== undefined || h.gpuNote !== undefined)).toBe(false);
    });
  });

  it('stays until the host releases it after the result, so the result cannot be lost', async () => {
    const w = startWorker(WORKER, [], { autoRelease: false });
    w.child.send(request('b-release', path.join(dir, 'release.engine')));
    await waitFor(w, (m) => m.type === 'result');
    await new Promise((r) => setTimeout(r, 500));
    expect(w.child.exitCode).toBeNull();
    const t0 = Date.now();
    w.child.send({ type: 'release' });
    expect(await w.exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('honours a cancel that arrives right after start, in protocol order', async () => {
    const out = path.join(dir, 'early-cancel.engine');
    const w = startWorker();
    w.child.send(request('w2', out, { simDuration: 20 }));
    w.child.send({ type: 'cancel', reason: 'user' });
    await w.exit;
    const events = assertEventStream(eventsOf(w.messages));
    expect(events[0].type).toBe('build.started');
    expect(events[events.length - 1]).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    expect(fs.existsSync(out)).toBe(false);
  });

  it('rejects a malformed message with an error and exits 2', async () => {
    const w = startWorker();
    w.child.send({ type: 'start', request: { buildId: 'x' } });
    expect((await w.exit).code).toBe(2);
    const err = w.messages.find((m) => m.type === 'error');
    expect(err?.type === 'error' && err.message).toMatch(/invalid message from host: request\.backend/);
  });

  it('stops its build and exits when the host goes away (no orphans)', async () => {
    const out = path.join(dir, 'orphan.engine');
    const w = startWorker();
    w.child.send(request('w3', out, { simDuration: 60 }));
    await waitFor(w, building);
    const t0 = Date.now();
    w.child.disconnect();
    await w.exit;
    expect(Date.now() - t0).toBeLessThan(5500);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('ignores a terminal SIGINT (the host decides how to stop the build)', async () => {
    const w = startWorker();
    w.child.send(request('w4', path.join(dir, 'sigint.engine'), { simDuration: 0.8 }));
    await waitFor(w, building);
    w.child.kill('SIGINT');
    expect(await w.exit).toEqual({ code: 0, signal: null });
    expect(eventsOf(w.messages).pop()).toMatchObject({ status: 'succeeded' });
  });

  it('speaks Electron utilityProcess framing (process.parentPort, { data } events)', async () => {
    // No Electron binary here: a shim gives the worker a parentPort shaped like Electron's.
    const shim = path.join(dir, 'electron-shim.js');
    fs.writeFileSync(
      shim,
      `const send = process.send.bind(process);
       const listeners = [];
       process.on('message', (m) => listeners.forEach((cb) => cb({ data: m, ports: [] })));
       process.parentPort = { postMessage: (m) => send({ viaParentPort: true, m }), on: (e, cb) => e === 'message' && listeners.push(cb) };
       require(${JSON.stringify(WORKER)});`,
    );
    const child = fork(shim, [], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const got: WorkerToParent[] = [];
    child.on('message', (m: { viaParentPort?: boolean; m: unknown }) => {
      expect(m.viaParentPort).toBe(true);
      const msg = readWorkerMessage(m.m);
      got.push(msg);
      if (msg.type === 'events') child.send({ type: 'ack' });
      if (msg.type === 'result') child.send({ type: 'release' });
    });
    child.send(request('w5', path.join(dir, 'electron.engine')));
    await new Promise((r) => child.on('exit', r));
    expect(got[0].type).toBe('ready');
    expect(got[got.length - 1]).toMatchObject({ type: 'result', finished: { status: 'succeeded' } });
  });
});
