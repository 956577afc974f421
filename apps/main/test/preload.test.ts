// Runs the bundled preload (what `npm run build` writes) the way Electron runs a sandboxed one:
// as a function of require, process, exports and module, where require knows only 'electron'.
// The electron module is a fake that records what the preload bridges and sends.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildClient } from '../../shared/build-client.js';
import { chooseClient, fromBridge } from '../../renderer/host-client.js';
import { INVOKE, PUSH, type IpcResult } from '../ipc-channels.js';

const root = path.resolve(__dirname, '../../..');
let compiled: string;

let out: string;

beforeAll(async () => {
  // Bundled with the build's own config, into a temporary directory (not from dist/), so the
  // test sees the current source.
  out = mkdtempSync(path.join(os.tmpdir(), 'tbs-preload-'));
  await build({ configFile: path.join(root, 'apps/main/preload.vite.config.mts'), logLevel: 'silent', build: { outDir: out } });
  compiled = readFileSync(path.join(out, 'preload.cjs'), 'utf8');
}, 60_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

/**
 * What contextBridge does to values crossing between the preload's world and the page's: plain
 * data is copied, functions and promises are proxied (their arguments and results copied the same
 * way), and an Error arrives as a new Error carrying only its message.
 */
function acrossBridge(value: unknown): unknown {
  if (value instanceof Error) return new Error(value.message);
  if (typeof value === 'function') {
    return (...args: unknown[]) => {
      try {
        return acrossBridge((value as (...a: unknown[]) => unknown)(...args.map(acrossBridge)));
      } catch (err) {
        throw acrossBridge(err);
      }
    };
  }
  if (value instanceof Promise) return value.then(acrossBridge, (err: unknown) => Promise.reject(acrossBridge(err)));
  if (Array.isArray(value)) return value.map(acrossBridge);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, acrossBridge(v)]));
  return value;
}

function runPreload(answer: (channel: string, payload: unknown) => IpcResult<unknown>) {
  const listeners = new Map<string, Array<(e: unknown, m: unknown) => void>>();
  const invoked: Array<[string, unknown]> = [];
  let exposed: { key: string; api: BuildClient } | null = null;
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: BuildClient) => void (exposed = { key, api }) },
    ipcRenderer: {
      invoke: async (channel: string, payload: unknown) => {
        invoked.push([channel, payload]);
        return answer(channel, payload);
      },
      on: (channel: string, fn: (e: unknown, m: unknown) => void) => void listeners.set(channel, [...(listeners.get(channel) ?? []), fn]),
      removeListener: (channel: string, fn: (e: unknown, m: unknown) => void) =>
        void listeners.set(
          channel,
          (listeners.get(channel) ?? []).filter((f) => f !== fn),
        ),
    },
    webUtils: { getPathForFile: (f: { fakePath?: string }) => f.fakePath ?? '' },
  };
  const required: string[] = [];
  const sandboxRequire = (name: string) => {
    required.push(name);
    if (name === 'electron') return electron;
    throw new Error(`module not found: ${name}`);
  };
  const exports = {};
  const fn = vm.runInThisContext(`(function (require, process, exports, module) {${compiled}\n})`);
  fn(sandboxRequire, {}, exports, { exports });
  const push = (channel: string, msg: unknown) => (listeners.get(channel) ?? []).forEach((f) => f({}, msg));
  // What the page gets: the bridged object, as the renderer's client selection wraps it.
  const page = chooseClient({ trtBuildStudio: acrossBridge(exposed!.api) as BuildClient, location: { protocol: 'app:' } }, () => {
    throw new Error('the web client must not be chosen in the desktop app');
  });
  return { api: exposed!.api, page, key: exposed!.key, invoked, push, listeners, required };
}

const ok = (value: unknown): IpcResult<unknown> => ({ ok: true, value });

describe('preload', () => {
  it('requires nothing but electron, and exposes the client as window.trtBuildStudio', () => {
    const p = runPreload(() => ok(null));
    expect(p.required).toEqual(['electron']);
    expect(p.key).toBe('trtBuildStudio');
    expect(p.api.capabilities).toEqual({ host: 'electron', nativeDialogs: true, recentFiles: true });
  });

  it("is one file carrying main's channel names, and nothing of the payload schemas behind them", () => {
    // The names come from the module main registers them from, bundled in: the same set, once each.
    const literals = [...compiled.matchAll(/"(tbs:[a-z-]+)"/g)].map((m) => m[1]);
    expect(literals.sort()).toEqual([...Object.values(INVOKE), ...Object.values(PUSH)].sort());
    // ipc-channels.ts also holds the zod schemas main validates with; they must not ride along.
    expect(compiled).not.toMatch(/zod|__vite-browser-external/);
    const p = runPreload(() => ok(null));
    expect([...p.listeners.keys()]).toEqual([PUSH.buildStream]);
  });

  it('unwraps results; an error envelope reaches the page, across contextBridge, as an Error with its code as name', async () => {
    const p = runPreload((channel) =>
      channel === INVOKE.openModelPath ? { ok: false, error: { code: 'bad_model', message: 'x.onnx is not an ONNX model' } } : ok([{ name: 'simulated', available: true }]),
    );
    expect(await p.page.listBackends()).toEqual([{ name: 'simulated', available: true }]);
    const err = await p.page.openModelPath!('/m/x.onnx').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('x.onnx is not an ONNX model');
    expect((err as Error).name).toBe('bad_model');
    expect((err as Error & { code: string }).code).toBe('bad_model');
  });

  it('does not rely on Error properties crossing the bridge (only the message would)', async () => {
    const p = runPreload(() => ({ ok: false, error: { code: 'conflict', message: 'Build b1 has no engine to save.' } }));
    // What the preload hands the bridge is plain data, so nothing is lost in the copy.
    const raw = await p.api.saveEngine('b1').catch((e: unknown) => e);
    expect(raw).not.toBeInstanceOf(Error);
    expect(acrossBridge(raw)).toEqual(raw);
    const fromPage = await p.page.saveEngine('b1').catch((e: Error) => e);
    expect([(fromPage as Error).name, (fromPage as Error).message]).toEqual(['conflict', 'Build b1 has no engine to save.']);
  });

  it('sends only the model path and options when starting a build', async () => {
    const p = runPreload(() => ok({ id: 'b1' }));
    const model = { path: '/m/a.onnx', displayName: 'a.onnx', summary: {} as never };
    expect(await p.api.startBuild(model, { backend: 'simulated' })).toEqual({ id: 'b1' });
    expect(p.invoked).toEqual([[INVOKE.startBuild, { modelPath: '/m/a.onnx', options: { backend: 'simulated' } }]]);
  });

  it('plugin libraries: sends the model path and the option, never a library to load', async () => {
    const lists = { staticPlugins: ['/p/a.so'], dynamicPlugins: [], pluginsToSerialize: [] };
    const p = runPreload(() => ok(lists));
    const model = { path: '/m/a.onnx', displayName: 'a.onnx', summary: {} as never };
    expect(await p.api.pluginLibraries!(model)).toEqual(lists);
    expect(await p.api.choosePluginLibraries!(model, 'staticPlugins')).toEqual(lists);
    expect(await p.api.forgetPluginLibrary!(model, 'staticPlugins', '/p/a.so')).toEqual(lists);
    expect(p.invoked).toEqual([
      [INVOKE.pluginLibraries, { modelPath: '/m/a.onnx' }],
      [INVOKE.choosePluginLibraries, { modelPath: '/m/a.onnx', option: 'staticPlugins' }],
      [INVOKE.forgetPluginLibrary, { modelPath: '/m/a.onnx', option: 'staticPlugins', library: '/p/a.so' }],
    ]);
  });

  it('lists engines and sends only the names to delete', async () => {
    const p = runPreload((channel) => ok(channel === INVOKE.listEngines ? [{ name: 'a.engine' }] : { deleted: ['a.engine'], refused: [] }));
    expect(await p.api.listEngines!()).toEqual([{ name: 'a.engine' }]);
    expect(await p.api.deleteEngines!(['a.engine'])).toEqual({ deleted: ['a.engine'], refused: [] });
    expect(p.invoked).toEqual([
      [INVOKE.listEngines, undefined],
      [INVOKE.deleteEngines, { names: ['a.engine'] }],
    ]);
  });

  it("exposes buildLayers (the Engine view's build layers) and sends only the build id; main's not_found reaches the page", async () => {
    const report = { schema: '10.x', detailed: true, layers: [{ name: 'conv_0', precision: 'fp16' }], io: [], summary: { count: 1, byPrecision: { fp16: 1 } } };
    const p = runPreload((_channel, payload) =>
      (payload as { id: string }).id === 'b1' ? ok(report) : { ok: false, error: { code: 'not_found', message: 'unknown build "b9"' } },
    );
    expect(typeof p.page.buildLayers).toBe('function');
    expect(await p.page.buildLayers!('b1')).toEqual(report);
    const err = await p.page.buildLayers!('b9').catch((e: Error) => e);
    expect([(err as Error).name, (err as Error).message]).toEqual(['not_found', 'unknown build "b9"']);
    expect(p.invoked).toEqual([
      [INVOKE.buildLayers, { id: 'b1' }],
      [INVOKE.buildLayers, { id: 'b9' }],
    ]);
  });

  it('resolves a dropped file to its path in the preload, and refuses one without a path', async () => {
    const p = runPreload(() => ok({ path: '/m/d.onnx' }));
    await p.page.openDroppedFile({ fakePath: '/m/d.onnx' } as never);
    expect(p.invoked).toEqual([[INVOKE.openModelPath, { path: '/m/d.onnx' }]]);
    await expect(p.page.openDroppedFile({} as never)).rejects.toThrow(/not a file on this computer/);
  });

  it('routes stream messages to the right subscription and stops after unsubscribe', async () => {
    const p = runPreload(() => ok(null));
    const got: string[] = [];
    const unsubA = p.api.subscribe('b1', { onSnapshot: (r) => got.push(`A snap ${r.id}`), onEvents: (e) => got.push(`A ${e.length}`) });
    p.api.subscribe('b2', { onSnapshot: (r) => got.push(`B snap ${r.id}`), onEvents: (e) => got.push(`B ${e.length}`) });
    const [[, subA], [, subB]] = p.invoked as Array<[string, { subscriptionId: string; buildId: string }]>;
    expect(subA.buildId).toBe('b1');
    expect(subA.subscriptionId).not.toBe(subB.subscriptionId);
    p.push(PUSH.buildStream, { subscriptionId: subA.subscriptionId, kind: 'snapshot', record: { id: 'b1' } });
    p.push(PUSH.buildStream, { subscriptionId: subB.subscriptionId, kind: 'events', batch: 1, events: [{}, {}] });
    p.push(PUSH.buildStream, { subscriptionId: 'unknown', kind: 'events', batch: 1, events: [{}] });
    unsubA();
    p.push(PUSH.buildStream, { subscriptionId: subA.subscriptionId, kind: 'events', batch: 1, events: [{}] });
    expect(got).toEqual(['A snap b1', 'B 2']);
    await new Promise((r) => setImmediate(r));
    // Each events message a live subscription took is acknowledged (main's back-pressure); the
    // unknown and the unsubscribed one are not.
    expect(p.invoked.slice(2)).toEqual([
      [INVOKE.ackStream, { subscriptionId: subB.subscriptionId, batch: 1 }],
      [INVOKE.unsubscribe, { subscriptionId: subA.subscriptionId }],
    ]);
  });

  it('reports a refused subscription through onError', async () => {
    const p = runPreload(() => ({ ok: false, error: { code: 'not_found', message: 'No build with id zz.' } }));
    const errors: Error[] = [];
    p.page.subscribe('zz', { onSnapshot: () => undefined, onEvents: () => undefined, onError: (e) => errors.push(e) });
    await new Promise((r) => setImmediate(r));
    expect(errors.map((e) => [e instanceof Error, e.name, e.message])).toEqual([[true, 'not_found', 'No build with id zz.']]);
  });

  it('delivers open requests held by main, then live ones, and menu actions', async () => {
    const p = runPreload((channel) => ok(channel === INVOKE.takeOpenRequests ? ['/m/argv.onnx'] : null));
    const opened: string[] = [];
    const stop = p.api.onOpenRequest!((path) => opened.push(path));
    await new Promise((r) => setImmediate(r));
    p.push(PUSH.openRequest, { path: '/m/second.onnx' });
    expect(opened).toEqual(['/m/argv.onnx', '/m/second.onnx']);
    stop();
    p.push(PUSH.openRequest, { path: '/m/third.onnx' });
    expect(opened).toHaveLength(2);

    const actions: string[] = [];
    p.api.onHostAction!((a) => actions.push(a));
    p.push(PUSH.hostAction, { action: 'build' });
    expect(actions).toEqual(['build']);
  });
});

describe('client selection on the page', () => {
  const web = { capabilities: { host: 'web' } } as BuildClient;

  it('uses the HTTP client in a browser', () => {
    expect(chooseClient({ location: { protocol: 'http:' } }, () => web)).toBe(web);
  });

  it('on app:// without the preload, fails every call with the preload error instead of falling back to HTTP', async () => {
    let webMade = false;
    const c = chooseClient({ location: { protocol: 'app:' }, trtBuildStudioError: "Cannot read properties of undefined (reading 'invoke')" }, () => {
      webMade = true;
      return web;
    });
    expect(webMade).toBe(false);
    const err = await c.listBackends().catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/preload script failed: Cannot read properties of undefined \(reading 'invoke'\)/);
    const streamErrors: string[] = [];
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: () => undefined, onError: (e) => streamErrors.push(e.name) });
    await new Promise((r) => setImmediate(r));
    expect(streamErrors).toEqual(['preload_failed']);
    // Without a message from the preload it still says what happened.
    await expect(chooseClient({ location: { protocol: 'app:' } }, () => web).listBuilds()).rejects.toThrow(/preload script failed\)/);
  });

  it('wraps the bridged client even when its errors come as plain Errors (message kept)', async () => {
    const bridged = { ...web, listBuilds: () => Promise.reject(new Error('boom')) } as BuildClient;
    const c = chooseClient({ location: { protocol: 'app:' }, trtBuildStudio: bridged }, () => web);
    await expect(c.listBuilds()).rejects.toThrow('boom');
    expect(fromBridge(bridged).capabilities).toEqual(web.capabilities);
  });
});
