// @vitest-environment happy-dom
// Plugin libraries in the options form (issues 34 item 3, 38 item 2). On the desktop the page
// cannot name a library: it shows what the host's dialog picked for the open model, with Add… and
// Remove, and sends those (main checks them again). In the browser the paths are typed and the
// server's refusal (its --plugin-dir folders) is shown as it says it.
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRef, PluginLibraryLists, PluginOption } from '../../shared/build-client.js';
import type { BuildOptionsInput } from '../../shared/protocol.js';
import { OptionsForm } from '../components/OptionsForm.js';
import { AppContext } from '../hooks.js';
import { createAppStore } from '../store/app-store.js';
import { Controller } from '../store/controller.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { ScriptedClient } from './scripted-client.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const sched: FrameScheduler = { request: () => {}, now: () => performance.now(), hidden: () => false };

/** The desktop host as the page sees it: main's dialog answers `nextPick`, main keeps the lists per model. */
class DesktopClient extends ScriptedClient {
  readonly picks = new Map<string, PluginLibraryLists>();
  nextPick: string[] = [];
  calls: string[] = [];
  private lists(model: ModelRef): PluginLibraryLists {
    if (!this.picks.has(model.path)) this.picks.set(model.path, { staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] });
    return this.picks.get(model.path)!;
  }
  async pluginLibraries(model: ModelRef): Promise<PluginLibraryLists> {
    this.calls.push(`list ${model.path}`);
    return structuredClone(this.lists(model));
  }
  async choosePluginLibraries(model: ModelRef, option: PluginOption): Promise<PluginLibraryLists> {
    this.calls.push(`choose ${model.path} ${option}`);
    this.lists(model)[option].push(...this.nextPick);
    return structuredClone(this.lists(model));
  }
  async forgetPluginLibrary(model: ModelRef, option: PluginOption, library: string): Promise<PluginLibraryLists> {
    this.calls.push(`forget ${model.path} ${option} ${library}`);
    const l = this.lists(model);
    l[option] = l[option].filter((p) => p !== library);
    return structuredClone(l);
  }
}

class RefusingWebClient extends ScriptedClient {
  override async startBuild(_m: ModelRef, options: BuildOptionsInput): Promise<{ id: string }> {
    throw new Error(
      `staticPlugins[0]: ${options.staticPlugins?.[0]} is not inside a plugin folder of this service (allowed: /opt/plugins); its operator names them with --plugin-dir`,
    );
  }
}

let root: Root | undefined;
let host: HTMLElement | undefined;
afterEach(() => {
  act(() => root?.unmount());
  host?.remove();
});

async function mount(client: ScriptedClient) {
  host = document.createElement('div');
  document.body.appendChild(host);
  client.nextModel = { path: '/models/m.onnx', displayName: 'm.onnx', summary: (client.nextModel as ModelRef).summary };
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
  const group = (name: string) => h.querySelector(`[role="group"][aria-label="${name}"]`)!;
  const click = async (el: Element | null | undefined) => {
    if (!el) throw new Error('no such element');
    await act(async () => (el as HTMLElement).click());
  };
  return { store, controller, host: h, group, click };
}

describe('plugin libraries on the desktop', () => {
  it('shows the host’s picks for the model, adds through the host’s dialog, removes, and builds with exactly those; nothing to type', async () => {
    const client = new DesktopClient();
    client.picks.set('/models/m.onnx', { staticPlugins: ['/opt/p/libkept.so'], dynamicPlugins: [], pluginsToSerialize: [] });
    const f = await mount(client);
    expect(client.calls).toEqual(['list /models/m.onnx']);
    expect(f.host.querySelectorAll('textarea')).toHaveLength(0);
    expect(f.group('Static plugin libraries').textContent).toContain('/opt/p/libkept.so');
    expect(f.group('Dynamic plugin libraries').textContent).toContain('none');

    client.nextPick = ['/opt/p/libdyn.so'];
    await f.click([...f.group('Dynamic plugin libraries').querySelectorAll('button')].find((b) => b.textContent === 'Add…'));
    expect(client.calls.at(-1)).toBe('choose /models/m.onnx dynamicPlugins');
    expect(f.group('Dynamic plugin libraries').textContent).toContain('/opt/p/libdyn.so');

    await f.click(f.group('Static plugin libraries').querySelector('button[aria-label="Remove /opt/p/libkept.so"]'));
    expect(client.calls.at(-1)).toBe('forget /models/m.onnx staticPlugins /opt/p/libkept.so');
    expect(f.group('Static plugin libraries').textContent).not.toContain('libkept');

    await act(async () => f.controller.build());
    expect(client.started[0].options).toMatchObject({ dynamicPlugins: ['/opt/p/libdyn.so'] });
    expect(client.started[0].options.staticPlugins).toBeUndefined();
  });

  it('another model shows its own picks, not the last model’s', async () => {
    const client = new DesktopClient();
    client.picks.set('/models/m.onnx', { staticPlugins: ['/opt/p/liba.so'], dynamicPlugins: [], pluginsToSerialize: [] });
    const f = await mount(client);
    expect(f.group('Static plugin libraries').textContent).toContain('liba.so');
    client.nextModel = { path: '/models/other.onnx', displayName: 'other.onnx', summary: (client.nextModel as ModelRef).summary };
    await act(async () => f.controller.openModel());
    expect(client.calls.at(-1)).toBe('list /models/other.onnx');
    expect(f.group('Static plugin libraries').textContent).not.toContain('liba.so');
    await act(async () => f.controller.build());
    expect(client.started[0].options.staticPlugins).toBeUndefined();
  });
});

describe('plugin libraries in the browser', () => {
  it('paths are typed, the folders rule is said, and the server’s refusal is shown as it says it', async () => {
    const f = await mount(new RefusingWebClient());
    expect(f.host.querySelectorAll('textarea')).toHaveLength(3);
    expect(f.host.textContent).toContain('only libraries inside the folders its operator named with --plugin-dir');
    act(() => f.store.setState((s) => ({ form: { ...s.form, staticPlugins: '/tmp/x.so' } })));
    await act(async () => f.controller.build());
    expect(f.host.querySelector('[role="alert"]')?.textContent).toBe(
      'staticPlugins[0]: /tmp/x.so is not inside a plugin folder of this service (allowed: /opt/plugins); its operator names them with --plugin-dir',
    );
  });
});
