// @vitest-environment happy-dom
// The options form follows the TensorRT version of the backend in use: the real form, store and
// controller in a DOM, with a scripted client whose backends imitate 10.x or 11.1.
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildRoutesRead } from '../../shared/build-routes.js';
import type { BackendChoice, BackendInfo, ModelSummary } from '../../shared/protocol.js';
import { OptionsForm } from '../components/OptionsForm.js';
import { AppContext } from '../hooks.js';
import { createAppStore } from '../store/app-store.js';
import { Controller } from '../store/controller.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { ScriptedClient, summary } from './scripted-client.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const sched: FrameScheduler = { request: () => {}, now: () => performance.now(), hidden: () => false };

class VersionedClient extends ScriptedClient {
  constructor(private readonly backends: BackendInfo[]) {
    super();
  }
  override async listBackends(): Promise<BackendInfo[]> {
    return this.backends;
  }
}

let root: Root | undefined;
let host: HTMLElement | undefined;
afterEach(() => {
  act(() => root?.unmount());
  host?.remove();
});

async function mount(backends: BackendInfo[], model: ModelSummary = summary) {
  host = document.createElement('div');
  document.body.appendChild(host);
  const client = new VersionedClient(backends);
  client.nextModel = { path: '/srv/m.onnx', displayName: 'm.onnx', summary: model };
  const store = createAppStore();
  const controller = new Controller(store, client, sched);
  root = createRoot(host);
  await act(async () => {
    root!.render(
      <AppContext.Provider value={{ store, controller }}>
        <OptionsForm />
      </AppContext.Provider>,
    );
    await controller.init();
    await controller.openModel();
  });
  const h = host;
  const labels = () => [...h.querySelectorAll('label')].map((l) => l.textContent?.trim());
  const button = (text: string) => [...h.querySelectorAll('button')].find((b) => b.textContent === text)!;
  const copy = async () => {
    await act(async () => button('Copy as trtexec command').click());
    return h.querySelector('pre[aria-label="trtexec command"]')?.textContent ?? '';
  };
  return { store, controller, client, labels, copy, host: h };
}

const sim = (emulates?: string): BackendInfo[] => [
  { name: 'tensorrt', available: false, reason: 'no libnvinfer' },
  { name: 'simulated', available: true, version: 'sim-1', ...(emulates ? { emulates } : {}) },
];

describe('OptionsForm by TensorRT version', () => {
  it('10.x: precision checkboxes and strongly typed; no build route', async () => {
    const f = await mount(sim('10.3.0'));
    expect(f.labels()).toEqual(expect.arrayContaining(['Strongly typed', 'fp16', 'bf16', 'int8', 'fp8', 'Device']));
    expect(f.labels()).not.toContain('Build route');
    act(() => f.store.setState((s) => ({ form: { ...s.form, precision: ['fp16'], device: '2' } })));
    expect(await f.copy()).toBe('trtexec --onnx=m.onnx --saveEngine=m.sim.10.3.0.engine --builderOptimizationLevel=3 --fp16 --device=2 --skipInference');
  });

  it('int4 from 10.1 and fp4 from 10.8; every precision flag marked deprecated from 10.12; int8 says what it builds', async () => {
    const early = await mount(sim('10.3.0'));
    expect(early.labels()).toContain('int4');
    expect(early.labels()).toContain('fp16');
    act(() => early.store.setState((s) => ({ form: { ...s.form, precision: ['int8'] } })));
    expect(early.labels()).toContain('int8 without Q/DQ nodes: placeholder ranges, accuracy meaningless (performance only)');
    expect(early.labels()).not.toContain('fp4');
    act(() => root?.unmount());
    early.host.remove();
    const late = await mount(sim('10.16.0'));
    expect(late.labels()).toEqual(expect.arrayContaining(['fp16 (deprecated)', 'int8 (deprecated)', 'int4 (deprecated)', 'fp4 (deprecated)']));
    act(() => root?.unmount());
    late.host.remove();
    const first = await mount(sim('10.0.1'));
    expect(first.labels()).not.toEqual(expect.arrayContaining(['int4']));
  });

  it('sends plugin libraries, one path per line, and the copied command names them as trtexec does', async () => {
    const f = await mount(sim('10.16.0'));
    expect(f.labels()).toEqual(expect.arrayContaining(['Static plugin libraries', 'Dynamic plugin libraries', 'Plugin libraries to serialize']));
    act(() => f.store.setState((s) => ({ form: { ...s.form, dynamicPlugins: '/opt/p/libA.so\n\n  /opt/p/libB.so ', pluginsToSerialize: '/opt/p/libA.so' } })));
    await act(async () => f.controller.build());
    expect(f.client.started[0].options.dynamicPlugins).toEqual(['/opt/p/libA.so', '/opt/p/libB.so']);
    expect(f.client.started[0].options.pluginsToSerialize).toEqual(['/opt/p/libA.so']);
    expect(f.client.started[0].options.staticPlugins).toBeUndefined();
    expect(await f.copy()).toContain('--dynamicPlugins=/opt/p/libA.so --dynamicPlugins=/opt/p/libB.so --setPluginsToSerialize=/opt/p/libA.so');
  });

  it('sends "infer timing-cache misses" when ticked', async () => {
    const f = await mount(sim('10.16.0'));
    const box = [...f.host.querySelectorAll('label')].find((l) => l.textContent?.trim() === 'Infer timing-cache misses')!.querySelector('input')!;
    await act(async () => box.click());
    await act(async () => f.controller.build());
    expect(f.client.started[0].options.inferCacheMisses).toBe(true);
  });

  it('"Verbose log" sends verboseLog alone and the copied command says --verbose', async () => {
    const f = await mount(sim('10.16.0'));
    expect(await f.copy()).not.toContain('--verbose');
    const box = [...f.host.querySelectorAll('label')].find((l) => l.textContent?.trim() === 'Verbose log')!.querySelector('input')!;
    await act(async () => box.click());
    expect((await f.copy()).split(' ')).toContain('--verbose');
    await act(async () => f.controller.build());
    expect(f.client.started[0].options.verboseLog).toBe(true);
    expect(f.client.started[0].options.inferCacheMisses).toBeUndefined();
  });

  it('11.1: no precision flags (the reason is shown), strongly typed implied, one choice per knob composing the route', async () => {
    // The simulator imitating 11.1 reports its knob patterns as the addon does (the CLI tests
    // check the addon's own report: apps/cli/test/cli-build-routes.test.ts).
    const [trt, simulated] = sim('11.1.0');
    const f = await mount([trt, { ...simulated, buildRoutes: ['-conv_use_long_w=[on|off]', '-kgen:codegen:cuda_tile=[0|1|2|3]'] }]);
    expect(f.labels()).not.toEqual(expect.arrayContaining(['fp16']));
    expect(f.labels()).not.toContain('Strongly typed');
    expect(f.host.textContent).toContain('TensorRT 11.1.0 has no precision flags');
    expect(f.labels()).toEqual(expect.arrayContaining(['conv_use_long_w', 'kgen:codegen:cuda_tile']));
    const knob = (id: string) => f.host.querySelector<HTMLSelectElement>(`select[id="knob-${id}"]`)!;
    expect([...knob('conv_use_long_w').options].map((o) => o.textContent)).toEqual(['not set (default)', 'on', 'off']);
    const choose = (id: string, value: string) =>
      act(() => {
        const el = knob(id);
        el.value = value;
        el.dispatchEvent(new Event('change', { bubbles: true }));
      });
    choose('kgen:codegen:cuda_tile', '2');
    choose('conv_use_long_w', 'off');
    expect(f.store.getState().form.buildRoute).toBe('-conv_use_long_w=off -kgen:codegen:cuda_tile=2');
    expect(f.host.querySelector('[aria-label="build route"]')?.textContent).toBe('-conv_use_long_w=off -kgen:codegen:cuda_tile=2');
    expect(await f.copy()).toBe(
      `trtexec --onnx=m.onnx --saveEngine=m.sim.11.1.0.engine --builderOptimizationLevel=3 '--setBuildRoute=-conv_use_long_w=off -kgen:codegen:cuda_tile=2' --skipInference`,
    );
    await act(async () => f.controller.build());
    expect(f.client.started[0].options.buildRoute).toBe('-conv_use_long_w=off -kgen:codegen:cuda_tile=2');
    choose('conv_use_long_w', '');
    expect(f.store.getState().form.buildRoute).toBe('-kgen:codegen:cuda_tile=2');
  });

  it('the copy says what trtexec cannot take, next to the command: tactic DRAM, a comma in an input name', async () => {
    const commaModel: ModelSummary = {
      ...summary,
      inputs: [{ name: 'a,b', elemType: 'float32', shape: ['batch', 3] }],
      dynamicInputs: [{ name: 'a,b', dims: ['batch'] }],
    };
    const f = await mount(sim('10.16.0'), commaModel);
    const warnings = () => [...f.host.querySelectorAll('.cmd-box [role="note"]')].map((p) => p.textContent);
    act(() => f.store.setState((s) => ({ form: { ...s.form, shapes: { 'a,b': { min: '1x3', opt: '2x3', max: '4x3' } } } })));
    expect(await f.copy()).toContain(`--saveEngine=m.sim.10.16.0.engine`);
    expect(warnings()).toEqual([
      '⚠ Input "a,b": trtexec splits shape lists on "," before it reads quotes, so trtexec would reject this command (trt-build-studio trtexec reads it).',
    ]);
    act(() => f.store.setState((s) => ({ form: { ...s.form, tacticDramMiB: '256' } })));
    expect(await f.copy()).not.toContain('256');
    expect(warnings()).toContainEqual(expect.stringContaining('Tactic DRAM (256 MiB) has no trtexec equivalent'));
    act(() => f.store.setState((s) => ({ form: { ...s.form, tacticDramMiB: '' } })));
    expect(warnings()).toHaveLength(1);
  });

  it('a choice the version lacks is dropped, so Build cannot send it', async () => {
    const f = await mount(sim('11.1.0'));
    await act(async () => f.store.setState((s) => ({ form: { ...s.form, precision: ['fp16'], stronglyTyped: true } })));
    expect(f.store.getState().form.precision).toEqual([]);
    expect(f.store.getState().form.stronglyTyped).toBe(false);
    await act(async () => f.controller.build());
    expect(f.client.started[0].options.precision).toBeUndefined();
  });

  it("offers TensorRT's knobs, from its knob database JSON, and a text field when it lists none", async () => {
    const json = JSON.stringify({ tuner_options: [{ option: '-copy_ppg', allowed_values: '-copy_ppg=[on|off]', default_value: 'off', help: 'h' }] });
    const f = await mount([
      {
        name: 'tensorrt',
        available: true,
        version: '11.1.0',
        library: { path: '/l.so', version: '11.1.0' },
        buildRoutes: ['-copy_ppg=[on|off]'],
        detail: { buildRoutesJson: json },
      },
      { name: 'simulated', available: true, version: 'sim-1' },
    ]);
    const select = f.host.querySelector<HTMLSelectElement>('select[id="knob-copy_ppg"]')!;
    expect([...select.options].map((o) => o.textContent)).toEqual(['not set (default off)', 'on', 'off']);
    act(() => root?.unmount());
    const g = await mount([
      { name: 'tensorrt', available: true, version: '11.1.0', library: { path: '/l.so', version: '11.1.0' } },
      { name: 'simulated', available: true, version: 'sim-1' },
    ]);
    expect(g.host.querySelector('input[id="build-route-text"]')).not.toBeNull();
  });

  it('"List knobs" reads the database from the library through the host, then offers one choice per knob', async () => {
    const json = JSON.stringify({ tuner_options: [{ option: '-conv_use_long_w', allowed_values: '-conv_use_long_w=[on|off]', default_value: 'on' }] });
    const trt11: BackendInfo = { name: 'tensorrt', available: true, version: '11.1.0', library: { path: '/l.so', version: '11.1.0' } };
    const answers: Array<() => Promise<BuildRoutesRead>> = [
      async () => {
        throw new Error('TensorRT 11.1.0 could not create a builder to read build routes');
      },
      async () => ({ backend: 'tensorrt', version: '11.1.0', json, source: 'library' }),
    ];
    const asked: string[] = [];
    class ReadingClient extends VersionedClient {
      readBuildRoutes(backend: BackendChoice): Promise<BuildRoutesRead> {
        asked.push(backend);
        return answers.shift()!();
      }
    }
    host = document.createElement('div');
    document.body.appendChild(host);
    const client = new ReadingClient([trt11, { name: 'simulated', available: true, version: 'sim-1' }]);
    const store = createAppStore();
    const controller = new Controller(store, client, sched);
    root = createRoot(host);
    await act(async () => {
      root!.render(
        <AppContext.Provider value={{ store, controller }}>
          <OptionsForm />
        </AppContext.Provider>,
      );
      await controller.init();
    });
    const h = host;
    const listKnobs = () => [...h.querySelectorAll('button')].find((b) => b.textContent === 'List knobs');
    expect(h.querySelector('input[id="build-route-text"]')).not.toBeNull();
    // A failing read says why and leaves the text field.
    await act(async () => listKnobs()!.click());
    expect(h.querySelector('[role="alert"]')?.textContent).toContain('could not create a builder to read build routes');
    expect(h.querySelector('input[id="build-route-text"]')).not.toBeNull();
    await act(async () => listKnobs()!.click());
    expect(asked).toEqual(['auto', 'auto']);
    const select = h.querySelector<HTMLSelectElement>('select[id="knob-conv_use_long_w"]')!;
    expect([...select.options].map((o) => o.textContent)).toEqual(['not set (default on)', 'on', 'off']);
    expect(listKnobs()).toBeUndefined();
    expect(h.querySelector('[role="alert"]')).toBeNull();
  });

  it('asks for shape-tensor values and builds with them', async () => {
    const model: ModelSummary = {
      ...summary,
      inputs: [...summary.inputs, { name: 'target', elemType: 'int64', shape: [2] }],
      shapeTensorInputs: ['target'],
    };
    const f = await mount(sim(), model);
    const inputs = ['min', 'opt', 'max'].map((w) => f.host.querySelector<HTMLInputElement>(`input[aria-label="target ${w} values"]`));
    expect(inputs.every(Boolean)).toBe(true);
    act(() => f.store.setState((s) => ({ form: { ...s.form, shapeValues: { target: { min: '1x-1', opt: '2x-1', max: '4x-1' } } } })));
    await act(async () => f.controller.build());
    expect(f.client.started[0].options.shapeValues).toEqual({ target: { min: [1, -1], opt: [2, -1], max: [4, -1] } });
    expect(await f.copy()).toContain('--minShapes=target:1x-1 --optShapes=target:2x-1 --maxShapes=target:4x-1');
  });
});
