// @vitest-environment happy-dom
// The engineer's workbench, as a user meets it: one form per model, shapes asked per symbolic
// dimension, a trtexec command that follows every change, the predicted end and the builder's
// liveness in the status line, and a history that tells models apart. Real components, store and
// controller in a DOM, with a scripted client.
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildRecord, ModelSummary } from '../../shared/protocol.js';
import { App } from '../App.js';
import { AppContext } from '../hooks.js';
import { createAppStore, type AppStore } from '../store/app-store.js';
import { Controller } from '../store/controller.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';
import { ScriptedClient, summary } from './scripted-client.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let frames: ((t: number) => void)[] = [];
const sched: FrameScheduler = { request: (cb) => frames.push(cb), now: () => performance.now(), hidden: () => false };
const runFrames = () =>
  act(() => {
    for (let i = 0; i < 100 && frames.length; i++) {
      const q = frames;
      frames = [];
      for (const cb of q) cb(performance.now());
    }
  });

let root: Root;
let host: HTMLElement;
let client: ScriptedClient;
let controller: Controller;
let store: AppStore;

const dynamicModel: ModelSummary = {
  ...summary,
  fileName: 'resnet-dyn.onnx',
  inputs: [{ name: 'images', elemType: 'float32', shape: ['batch', 3, 'height', 'width'] }],
  dynamicInputs: [{ name: 'images', dims: ['batch', 'height', 'width'] }],
};

beforeEach(async () => {
  host = document.createElement('div');
  document.body.appendChild(host);
  client = new ScriptedClient();
  store = createAppStore();
  controller = new Controller(store, client, sched);
  root = createRoot(host);
  await act(async () => {
    root.render(
      <AppContext.Provider value={{ store, controller }}>
        <App />
      </AppContext.Provider>,
    );
    await controller.init();
  });
});

afterEach(() => {
  act(() => root.unmount());
  controller.dispose();
  host.remove();
});

const button = (text: string) => [...host.querySelectorAll('button')].find((b) => b.textContent === text)!;
const status = () => host.querySelector('[role="status"]')!.textContent ?? '';
const command = () => host.querySelector('pre[aria-label="trtexec command"]')?.textContent ?? null;
const field = (label: string) => {
  const l = [...host.querySelectorAll('label')].find((x) => x.textContent?.trim() === label);
  const bound = l && (l.htmlFor ? host.querySelector(`[id="${l.htmlFor}"]`) : l.querySelector('input'));
  const el = (bound ?? host.querySelector(`[aria-label="${label}"]`)) as HTMLInputElement | HTMLSelectElement | null;
  if (!el) throw new Error(`no field "${label}"`);
  return el;
};
/** Types into a React-controlled field the way a user does (the value setter, then an input event). */
function type(label: string, value: string) {
  const el = field(label);
  const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
  act(() => {
    Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(el, value);
    el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));
  });
}
function tick(label: string) {
  act(() => (field(label) as HTMLInputElement).click());
}
async function open(model: ModelSummary, path: string, displayName = model.fileName) {
  client.nextModel = { path, displayName, summary: model };
  await act(async () => button('Open model…').click());
}

describe('the options form', () => {
  it('labels every CLI build option, and sends what is set', async () => {
    await open(summary, '/srv/tiny.onnx');
    for (const label of [
      'TF32',
      'Profiling verbosity',
      'Hardware compatibility',
      'Max auxiliary streams',
      'Time budget (s)',
      'Device',
      'Workspace (MiB)',
      'Tactic shared memory (KiB)',
      'Tactic DRAM (MiB)',
    ]) {
      expect(() => field(label), label).not.toThrow();
    }
    tick('TF32');
    type('Profiling verbosity', 'detailed');
    type('Hardware compatibility', 'ampere_plus');
    type('Max auxiliary streams', '2');
    type('Tactic shared memory (KiB)', '48');
    type('Time budget (s)', '90');
    await act(async () => button('Build').click());
    expect(client.started[0].options).toMatchObject({
      tf32: false,
      profilingVerbosity: 'detailed',
      hardwareCompatibility: 'ampere_plus',
      maxAuxStreams: 2,
      tacticSharedMemoryKiB: 48,
    });
    expect(client.startedRun[0]).toEqual({ timeBudgetSeconds: 90 });
  });

  it('shows the seed builds use (1), not "random"', async () => {
    await open(summary, '/srv/tiny.onnx');
    expect((field('Seed') as HTMLInputElement).value).toBe('1');
    await act(async () => button('Build').click());
    expect(client.started[0].options.simSeed).toBe(1);
  });

  it('keeps a form per model: nothing carries over, and reopening a model restores its own', async () => {
    await open(summary, '/srv/tiny.onnx');
    type('Optimization level', '5');
    type('Workspace (MiB)', '2048');
    await open(dynamicModel, '/srv/resnet-dyn.onnx');
    expect(field('Optimization level').value).toBe('3');
    expect(field('Workspace (MiB)').value).toBe('');
    type('images batch max', '8');
    await open(summary, '/srv/tiny.onnx');
    expect(field('Optimization level').value).toBe('5');
    expect(field('Workspace (MiB)').value).toBe('2048');
    await open(dynamicModel, '/srv/resnet-dyn.onnx');
    expect(field('images batch max').value).toBe('8');
  });

  it('applies options typed while a model uploads to that model, and those typed before any model to the first', async () => {
    type('Workspace (MiB)', '1024');
    await open(summary, '/srv/tiny.onnx');
    expect(field('Workspace (MiB)').value).toBe('1024');
    type('Optimization level', '1');
    let arrive!: (m: { path: string; displayName: string; summary: ModelSummary }) => void;
    client.openModel = () => new Promise((r) => (arrive = r));
    await act(async () => button('Open model…').click());
    type('Optimization level', '4');
    await act(async () => arrive({ path: '/srv/resnet-dyn.onnx', displayName: 'resnet-dyn.onnx', summary: dynamicModel }));
    expect(field('Optimization level').value).toBe('4');
    expect(field('Workspace (MiB)').value).toBe('');
    // The model left keeps its form as it was when the other was opened.
    client.openModel = async () => ({ path: '/srv/tiny.onnx', displayName: 'tiny.onnx', summary });
    await act(async () => button('Open model…').click());
    expect(field('Optimization level').value).toBe('1');
    expect(field('Workspace (MiB)').value).toBe('1024');
  });

  it('asks only for the symbolic dimensions, fills in the fixed ones, and says what is wrong as you type', async () => {
    await open(dynamicModel, '/srv/resnet-dyn.onnx');
    const rows = [...host.querySelectorAll('.dims tbody th')].map((t) => t.textContent);
    expect(rows).toEqual(['batch', 'height', 'width']);
    // Untouched: the field is empty and says what an empty field builds.
    expect(field('images shape').value).toBe('');
    expect((field('images shape') as HTMLInputElement).placeholder).toBe('?x3x?x? → built as 1x3x1x1 if left empty');
    for (const [dim, min, opt, max] of [
      ['batch', '1', '4', '2'],
      ['height', '224', '224', '224'],
      ['width', '224', '224', '224'],
    ]) {
      type(`images ${dim} min`, min);
      type(`images ${dim} opt`, opt);
      type(`images ${dim} max`, max);
    }
    expect(host.querySelector('.field-error')!.textContent).toContain('dimension 0 must satisfy min ≤ opt ≤ max (got 1, 4, 2)');
    type('images batch max', '16');
    expect(host.querySelector('.field-error')).toBeNull();
    expect(field('images shape').value).toBe('1x3x224x224:4x3x224x224:16x3x224x224');
    await act(async () => button('Build').click());
    expect(client.started[0].options.shapes).toEqual({ images: { min: [1, 3, 224, 224], opt: [4, 3, 224, 224], max: [16, 3, 224, 224] } });
  });

  it('types a symbol shared by several inputs once', async () => {
    const bert: ModelSummary = {
      ...summary,
      fileName: 'bert.onnx',
      inputs: [
        { name: 'input_ids', elemType: 'int64', shape: ['batch', 'seq'] },
        { name: 'attention_mask', elemType: 'int64', shape: ['batch', 'seq'] },
      ],
      dynamicInputs: [
        { name: 'input_ids', dims: ['batch', 'seq'] },
        { name: 'attention_mask', dims: ['batch', 'seq'] },
      ],
    };
    await open(bert, '/srv/bert.onnx');
    type('input_ids batch min', '1');
    type('input_ids seq max', '512');
    expect(field('attention_mask batch min').value).toBe('1');
    expect(field('attention_mask seq max').value).toBe('512');
    expect(field('attention_mask seq min').value).toBe('');
    // A later change of the shared size follows too; other symbols are left alone.
    type('attention_mask batch min', '2');
    expect(field('input_ids batch min').value).toBe('2');
    expect(field('input_ids seq max').value).toBe('512');
  });

  it('disables Build while a symbolic dimension is empty, naming it beside the button and in the status line', async () => {
    await open(dynamicModel, '/srv/resnet-dyn.onnx');
    type('images batch min', '1');
    expect(button('Build').disabled).toBe(true);
    const reason = 'Input "images": min of dimension 2 (height) is empty.';
    expect(host.querySelector('#build-blocker')!.textContent).toBe(reason);
    expect(button('Build').getAttribute('aria-describedby')).toBe('build-blocker');
    expect(button('Build').title).toBe(`Not ready to build: ${reason}`);
    expect(host.querySelector('[role="status"]')!.textContent).toBe(`Idlenot ready to build: ${reason}`);
    await act(async () => button('Build').click());
    expect(client.started).toHaveLength(0);
  });

  it('keeps the trtexec command current: every option change and every model, with the upload’s own file name', async () => {
    await open(summary, '/srv/upload-1f2e.onnx', 'tiny.onnx');
    expect(command()).toBe('trtexec --onnx=tiny.onnx --saveEngine=tiny.sim.sim-1.engine --builderOptimizationLevel=3 --skipInference');
    tick('TF32');
    type('Max auxiliary streams', '0');
    expect(command()).toBe('trtexec --onnx=tiny.onnx --saveEngine=tiny.sim.sim-1.engine --builderOptimizationLevel=3 --noTF32 --maxAuxStreams=0 --skipInference');
    await open(dynamicModel, '/srv/upload-9a8b.onnx', 'resnet-dyn.onnx');
    // No shapes given: trtexec builds each dynamic dimension as 1, and so does the studio; the
    // command is this model's, never the previous model's.
    expect(command()).toBe('trtexec --onnx=resnet-dyn.onnx --saveEngine=resnet-dyn.sim.sim-1.engine --builderOptimizationLevel=3 --skipInference');
    // Partly typed shapes are still incomplete: the reason instead of a command.
    type('images batch min', '1');
    expect(command()).toBeNull();
    expect(host.textContent).toContain('The trtexec command appears once the options are complete.');
    for (const d of ['batch', 'height', 'width']) for (const w of ['min', 'opt', 'max']) type(`images ${d} ${w}`, d === 'batch' ? { min: '1', opt: '2', max: '4' }[w]! : '64');
    expect(command()).toBe(
      'trtexec --onnx=resnet-dyn.onnx --saveEngine=resnet-dyn.sim.sim-1.engine --builderOptimizationLevel=3 --minShapes=images:1x3x64x64 --optShapes=images:2x3x64x64 --maxShapes=images:4x3x64x64 --skipInference',
    );
  });

  it('refuses a relative timing-cache path, saying where paths are resolved', async () => {
    await open(summary, '/srv/tiny.onnx');
    type('Timing cache file', 'caches/t.cache');
    expect(button('Build').disabled).toBe(true);
    expect(host.querySelector('#build-blocker')!.textContent).toMatch(/"caches\/t\.cache" is a relative path: give the full path on the machine that runs the builds/);
    await act(async () => button('Build').click());
    expect(client.started).toHaveLength(0);
    type('Timing cache file', '/var/cache/t.cache');
    await act(async () => button('Build').click());
    expect(client.started[0].options.timingCache).toBe('/var/cache/t.cache');
  });
});

describe('the status line while building', () => {
  async function building(): Promise<StreamWriter> {
    await open(summary, '/srv/tiny.onnx');
    await act(async () => button('Build').click());
    const w = new StreamWriter('b1');
    w.started();
    w.start('Building engine', null, 6);
    return w;
  }
  const heartbeat = (w: StreamWriter, t: number, extra: Partial<Extract<BuildEvent, { type: 'heartbeat' }>>) => {
    w.t = t - 1;
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false, ...extra } as never);
  };

  it('says nothing about the end without a basis, then "about N s left (low–high)"', async () => {
    const w = await building();
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    expect(status()).not.toMatch(/left/);
    heartbeat(w, 2000, { estimate: { remainingMs: 40_000, lowMs: 30_000, highMs: 55_000, basis: 2 } });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    expect(status()).toContain('about 40 s left (30–55 s)');
  });

  it('tells a busy builder from an idle one, and marks a long silence beyond colour', async () => {
    const w = await building();
    heartbeat(w, 10_000, { sinceLastCallbackMs: 5000, workerCpuMs: 1000 });
    heartbeat(w, 11_000, { sinceLastCallbackMs: 6000, workerCpuMs: 2600 });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    expect(status()).toMatch(/last TensorRT callback \d s ago · builder busy · 1\.6 cores/);
    expect(host.querySelector('.liveness.silent')).toBeNull();
    heartbeat(w, 45_000, { sinceLastCallbackMs: 40_000, workerCpuMs: 2600 });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    expect(status()).toMatch(/⚠ last TensorRT callback 4\d s ago \(a long silence\) · no CPU use — waiting on the GPU or stalled/);
    expect(host.querySelector('.liveness.silent')).not.toBeNull();
  });

  it('counts a busy GPU as a working builder in a silent stretch, and tells why a figure is missing', async () => {
    const w = await building();
    heartbeat(w, 40_000, { sinceLastCallbackMs: 35_000, workerCpuMs: 1000, gpuUtilPercent: 93 });
    heartbeat(w, 41_000, { sinceLastCallbackMs: 36_000, workerCpuMs: 1010, gpuUtilPercent: 91 });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    expect(status()).toMatch(/last TensorRT callback 3\d s ago \(a long silence\) · builder busy · CPU idle · GPU 91%/);
    expect(host.querySelector('.liveness .cpu.busy')).not.toBeNull();
    heartbeat(w, 42_000, { sinceLastCallbackMs: 37_000, workerCpuMs: 1011, gpuUtilPercent: 0 });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    expect(status()).toMatch(/no CPU or GPU use — the builder looks stalled/);
    expect(host.querySelector('.liveness .cpu.idle')).not.toBeNull();
  });

  it('shows memory: the peak per phase row, a timeline with peaks, the GPU memory beside its utilisation, and a memory stop', async () => {
    const GiB = 2 ** 30;
    const w = await building();
    w.start('Timing tactics', 1, 3);
    heartbeat(w, 1000, { hostMemoryBytes: 2 * GiB, workerCpuMs: 0 });
    heartbeat(w, 2000, { hostMemoryBytes: 3.5 * GiB, workerCpuMs: 1500, gpuUtilPercent: 94, gpuMemoryBytes: 31 * GiB });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    const rows = [...host.querySelectorAll('.trow')];
    expect(rows.map((r) => r.querySelector('.peak')?.textContent)).toEqual(['3.5 GiB', '3.5 GiB']);
    const panel = host.querySelector('section.memory')!;
    expect(panel.querySelector('svg.mem-spark path.mem-host')).not.toBeNull();
    expect(panel.querySelector('svg.mem-spark path.mem-gpu')).not.toBeNull();
    expect(panel.textContent).toContain('Peak host3.5 GiB');
    expect(panel.textContent).toContain('Peak GPU31 GiB');
    expect(status()).toMatch(/GPU 94% · 31 GiB/);
    w.emit({ type: 'build.cancelling', requestedAt: 2100, reason: 'memory' } as never);
    w.finished('cancelled', {
      error: 'stopped: host memory 3.5 GiB passed the 3 GiB limit during Building engine › Timing tactics',
      memory: { peakHostBytes: 3.5 * GiB, peakGpuBytes: 31 * GiB, byPhase: [] },
    });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    const summaryBox = host.querySelector('.summary')!;
    expect(summaryBox.textContent).toContain('Cancelled after');
    expect(summaryBox.textContent).toContain('it passed its memory limit');
    expect(summaryBox.textContent).toContain('peak host memory 3.5 GiB, GPU 31 GiB');
    expect(summaryBox.textContent).toContain('stopped: host memory 3.5 GiB passed the 3 GiB limit during Building engine › Timing tactics');
  });

  it('opens the log filter to everything for a build that asked for the verbose log', async () => {
    await open(summary, '/srv/tiny.onnx');
    await act(async () => button('Build').click());
    const w = new StreamWriter('b1');
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, options: { backend: 'simulated', verboseLog: true } } as never);
    w.emit({ type: 'log', severity: 'verbose', message: '[simulated] Tactic 0x1 time 0.1 ms' } as never);
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    const filter = [...host.querySelectorAll('select')].find((s) => [...s.options].some((o) => o.textContent === 'everything'))!;
    expect(filter.value).toBe('verbose');
    expect(host.textContent).toContain('[simulated] Tactic 0x1 time 0.1 ms');
  });

  it('shows why there is no GPU figure on the liveness hint', async () => {
    const w = await building();
    heartbeat(w, 1000, { workerCpuMs: 0, gpuNote: 'no GPU utilisation: NVML was not found' });
    heartbeat(w, 2000, { sinceLastCallbackMs: 1000, workerCpuMs: 900 });
    act(() => client.push('b1', w.events.splice(0)));
    runFrames();
    expect(status()).toMatch(/builder busy · 0\.9 cores$/);
    expect(host.querySelector('.liveness .cpu')!.getAttribute('title')).toBe('no GPU utilisation: NVML was not found');
  });
});

describe('a build the time budget ended', () => {
  it('says the budget ran out, not that Stop was pressed', async () => {
    await open(summary, '/srv/tiny.onnx');
    await act(async () => button('Build').click());
    const w = new StreamWriter('b1');
    w.started();
    w.start('Building engine', null, 6);
    w.emit({ type: 'build.cancelling', requestedAt: 2000, reason: 'timeout' } as never);
    w.finished('cancelled', { cancelLatencyMs: 12 });
    await act(async () => client.push('b1', w.events));
    runFrames();
    expect(host.querySelector('[aria-label="Build summary"]')!.textContent).toMatch(
      /^Cancelled after .*: the time budget ran out.*builder stopped 12 ms after the time budget ran out/,
    );
    expect(status()).not.toContain('after Stop');
  });
});

describe('history', () => {
  it('shows the names the server keeps, and tells two models of one name apart', async () => {
    const rec = (id: string, path: string, bytes: number): BuildRecord => ({
      id,
      state: 'succeeded',
      modelPath: path,
      model: { ...summary, fileName: 'model.onnx', fileBytes: bytes },
      options: { backend: 'auto' },
      queuedAt: '',
      lastSeq: 1,
      phases: [],
      engineAvailable: true,
    });
    client.builds = [rec('a', '/srv/uploads/upload-aa.onnx', 2048), rec('b', '/srv/uploads/upload-bb.onnx', 4 * 1024 * 1024), rec('c', '/srv/uploads/upload-cc.onnx', 2048)];
    await act(async () => controller.refreshHistory());
    const cells = [...host.querySelectorAll('.hist td.path')];
    expect(cells.map((c) => c.textContent)).toEqual(['model.onnx (2.00 KiB)', 'model.onnx (4.00 MiB)', 'model.onnx (2.00 KiB)']);
    // The server's copies of browser uploads: their paths mean nothing to the user, so only the name.
    expect(cells[1].getAttribute('title')).toBe('model.onnx\n4.00 MiB, 10 nodes');
  });

  it('never says "running" beside the build on screen once its stream has ended', async () => {
    await open(summary, '/srv/tiny.onnx');
    client.builds = [
      { id: 'b1', state: 'running', modelPath: '/srv/tiny.onnx', model: summary, options: { backend: 'auto' }, queuedAt: '', lastSeq: 1, phases: [], engineAvailable: false },
    ];
    await act(async () => button('Build').click());
    const w = new StreamWriter('b1');
    w.started();
    w.finished('succeeded', { engineBytes: 10 });
    // The service's list still says running (its record lags the stream by a moment).
    await act(async () => client.push('b1', w.events));
    runFrames();
    await act(async () => undefined);
    expect(host.querySelector('.hist td.outcome')!.textContent).toBe('succeeded');
  });
});
