// @vitest-environment happy-dom
// The Engine view on the desktop: the page's client there is the preload's object as host-client.ts
// wraps it (plain data and functions, as contextBridge copies it). With buildLayers offered (the
// preload's tbs:build-layers, apps/main/ipc-handlers.ts), a finished build's "Show layers" and the
// build picker appear and read through it; a host without it shows neither. The preload and main
// halves are tested in apps/main/test/{preload,ipc-handlers}.test.ts; no Electron window runs here.
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildClient, BuildLayers } from '../../shared/build-client.js';
import { checkPrecision, readEngineLayers } from '../../shared/engine-layers.js';
import type { BuildRecord } from '../../shared/protocol.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';
import { chooseClient } from '../host-client.js';
import { closeEngineView, engineViewStore, loadBuild } from '../lib/engine-view-state.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient, summary } from './scripted-client.js';

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

/** IEngineInspector's JSON (10.x) of a small fp16 engine with one layer left in FP32. */
const layerJson = JSON.stringify({
  Layers: [
    { Name: 'conv_0 + relu_1', LayerType: 'CaskConvolution', Outputs: [{ Name: 'a', 'Format/Datatype': 'Channel major FP16 format where channel % 8 == 0' }], TacticValue: '0x1' },
    { Name: 'exp_2', LayerType: 'Exp', Outputs: [{ Name: 'b', 'Format/Datatype': 'Row major linear FP32' }], TacticValue: '0x2' },
  ],
  Bindings: ['input', 'probs'],
});
const read = readEngineLayers(layerJson);
const report: BuildLayers = { ...read, check: checkPrecision(read.layers, 'fp16') };
const outcomeLayers = { count: 2, byPrecision: { fp16: 1, fp32: 1 }, expected: 'fp16', checked: 2, asAsked: 1, wider: 1, widerNames: ['exp_2'] };

const rec = (id: string, extra: Partial<BuildRecord>): BuildRecord => ({
  id,
  state: 'running',
  modelPath: '/m/tiny.onnx',
  model: summary,
  options: { backend: 'simulated', precision: ['fp16'] },
  queuedAt: '',
  lastSeq: 1,
  phases: [],
  engineAvailable: false,
  ...extra,
});

/**
 * The page's client in the desktop app: a plain object of functions (what contextBridge hands
 * over), turned into the page's client by chooseClient on app://, as main.tsx does.
 */
function desktopClient(withLayers: boolean) {
  const scripted = new ScriptedClient();
  scripted.builds = [
    rec('old', { state: 'succeeded', engineAvailable: true, outcome: { status: 'succeeded', durationMs: 10, layers: outcomeLayers } as BuildRecord['outcome'] }),
    rec('run', {}),
  ];
  const asked: string[] = [];
  const bridged: Record<string, unknown> = { capabilities: { host: 'electron', nativeDialogs: true, recentFiles: true } };
  for (const key of Object.getOwnPropertyNames(ScriptedClient.prototype)) {
    const fn = (scripted as unknown as Record<string, unknown>)[key];
    if (key !== 'constructor' && typeof fn === 'function') bridged[key] = fn.bind(scripted);
  }
  if (withLayers) {
    bridged.buildLayers = async (id: string) => {
      asked.push(id);
      if (id !== 'run' && id !== 'old') throw { tbsBridgeError: true, code: 'not_found', message: `unknown build "${id}"` };
      return report;
    };
  }
  const client = chooseClient({ trtBuildStudio: bridged as unknown as BuildClient, location: { protocol: 'app:' } }, () => {
    throw new Error('the web client must not be chosen in the desktop app');
  });
  return { scripted, client, asked };
}

let mounted: MountedApp | undefined;
afterEach(() => {
  act(() => {
    closeEngineView();
    engineViewStore.setState({ a: null, b: null, error: null, busy: false });
  });
  mounted?.unmount();
  mounted = undefined;
  frames = [];
});

/** Mounts the app on a desktop client and lets the running build finish with layer information. */
async function finishedBuild(withLayers: boolean) {
  const d = desktopClient(withLayers);
  // mountApp types its client as the scripted one; the app only uses it as a BuildClient.
  mounted = await mountApp(d.client as unknown as ScriptedClient, sched);
  const w = new StreamWriter('run');
  w.started();
  w.finished('succeeded', { engineBytes: 10, layers: outcomeLayers });
  await act(async () => d.scripted.push('run', w.events));
  runFrames();
  await act(async () => undefined);
  const host = mounted.host;
  const showLayers = () => [...host.querySelectorAll('button')].find((b) => b.textContent === 'Show layers');
  const picker = () => host.querySelector<HTMLSelectElement>('select[aria-label="Show the layers of a build"]');
  return { ...d, host, showLayers, picker };
}

describe('Engine view on the desktop', () => {
  it("with the preload's buildLayers: a finished build's line offers \"Show layers\", which reads that build's layers into the view", async () => {
    const m = await finishedBuild(true);
    expect(m.host.querySelector('.engine-line')!.textContent).toMatch(/exp_2/);
    expect(m.showLayers()).toBeDefined();
    await act(async () => m.showLayers()!.click());
    expect(m.asked).toEqual(['run']);
    const s = engineViewStore.getState();
    expect(s.error).toBeNull();
    expect(s.a?.read.layers.map((l) => [l.name, l.precision])).toEqual([
      ['conv_0 + relu_1', 'fp16'],
      ['exp_2', 'fp32'],
    ]);
    expect(s.a?.check?.wider.map((l) => l.name)).toEqual(['exp_2']);
  });

  it('with buildLayers: the build picker lists the builds with layer information, and an error from main reads as one line', async () => {
    const m = await finishedBuild(true);
    const picker = m.picker()!;
    expect(picker).not.toBeNull();
    expect([...picker.options].map((o) => o.value)).toContain('old');
    await act(async () => {
      picker.value = 'old';
      picker.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(m.asked).toEqual(['old']);
    expect(engineViewStore.getState().a?.label).toMatch(/^old · /);
    // main's not_found, rejected by the preload as plain data, rebuilt on the page's side.
    await act(async () => loadBuild(m.client, 'gone', 'gone'));
    expect(engineViewStore.getState().error).toBe('Build gone: unknown build "gone"');
    expect(m.host.querySelector('[role="alert"]')!.textContent).toBe('Build gone: unknown build "gone"');
  });

  it('a host without buildLayers shows neither "Show layers" nor the build picker (dropped files only)', async () => {
    const m = await finishedBuild(false);
    expect(m.host.querySelector('.engine-line')!.textContent).toMatch(/exp_2/);
    expect(m.showLayers()).toBeUndefined();
    expect(m.picker()).toBeNull();
  });
});
