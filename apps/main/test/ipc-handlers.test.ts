// The IPC surface as the renderer sees it: who may call, what may be sent, and what comes back.
// The service is an in-memory stand-in; files are real (temp folder).
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ServiceError, type BuildServiceApi } from '../../service/api.js';
import type { BuildRecord, ModelSummary } from '../../shared/protocol.js';
import type { Dialogs } from '../dialogs.js';
import { registerIpcHandlers } from '../ipc-handlers.js';
import { INVOKE, PUSH, type IpcResult } from '../ipc-channels.js';
import { OpenRequests } from '../open-requests.js';
import { RecentFiles } from '../recent-files.js';
import { SaveFolders } from '../save-folders.js';
import { PluginChoices } from '../plugin-choices.js';
import { createSenderCheck } from '../sender-check.js';
import { SubscriptionHub } from '../subscription-hub.js';
import { FakeWebContents } from './fake-electron.js';
import { viewFromRecord } from '../../shared/view-format.js';
import { layersPathFor, normalizeOptions } from '../../shared/engine-manifest.js';
import { buildLayerReport } from '../../service/engine-explain.js';
import { simulatedLayerInformation } from '../../service/layer-info.js';

const summary = (fileName: string): ModelSummary => ({
  fileName,
  fileBytes: 10,
  irVersion: 9,
  opsetImports: [{ domain: '', version: 17 }],
  producer: { name: 't', version: '1' },
  graphName: 'g',
  inputs: [],
  outputs: [],
  nodeCount: 1,
  opHistogram: { Relu: 1 },
  initializerBytes: 0,
  externalData: { files: [], bytes: 0 },
  dynamicInputs: [],
});

const record = (id: string, extra: Partial<BuildRecord> = {}): BuildRecord => ({
  id,
  state: 'running',
  modelPath: '/m.onnx',
  options: { backend: 'simulated' },
  queuedAt: new Date(0).toISOString(),
  lastSeq: 0,
  phases: [],
  engineAvailable: false,
  ...extra,
});

function setup() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tbs-ipc-'));
  const model = path.join(dir, 'model.onnx');
  writeFileSync(model, 'not really onnx');
  const engine = path.join(dir, 'b1.engine');
  writeFileSync(engine, Buffer.alloc(100_000, 7));

  const builds = new Map<string, BuildRecord>([
    ['b1', record('b1', { state: 'succeeded', engineAvailable: true })],
    ['b2', record('b2', { state: 'failed' })],
  ]);
  const service = {
    listBackends: vi.fn(async () => [{ name: 'simulated' as const, available: true }]),
    inspectModel: vi.fn(async (p: string) => {
      if (p.endsWith('gone.onnx')) throw new ServiceError('not_found', `No such file: ${p}`);
      if (p.endsWith('bad.onnx')) throw new ServiceError('bad_model', `${path.basename(p)} is not an ONNX model (truncated protobuf)`);
      return summary(path.basename(p));
    }),
    startBuild: vi.fn(async (input: { modelPath: string }) => {
      const r = record('b3', { modelPath: input.modelPath });
      builds.set(r.id, r);
      return r;
    }),
    getBuild: vi.fn((id: string) => builds.get(id)),
    listBuilds: vi.fn(() => [...builds.values()]),
    cancelBuild: vi.fn(() => true),
    subscribe: vi.fn((id: string) => {
      const snapshot = builds.get(id);
      if (!snapshot) throw new ServiceError('not_found', `No build with id ${id}`);
      return { snapshot, view: viewFromRecord(snapshot).snapshot(), reset: false, unsubscribe: vi.fn() };
    }),
    waitForResult: vi.fn(),
    enginePath: vi.fn((id: string) => (id === 'b1' ? engine : undefined)),
    listEngines: vi.fn(() => [{ name: 'm.sim.10.16.engine', bytes: 5, modifiedAt: new Date(0).toISOString(), buildId: 'b1', simulated: true }]),
    deleteEngines: vi.fn((names: string[]) => ({
      deleted: names.filter((n) => n.endsWith('.engine')),
      refused: names.filter((n) => !n.endsWith('.engine')).map((name) => ({ name, reason: 'not an engine file (.engine)' })),
    })),
    shutdown: vi.fn(async () => undefined),
  } satisfies BuildServiceApi;

  const dialogAnswers: { model: string | null; engine: string | null; cache: string | null; plugins: string[] } = { model: null, engine: null, cache: null, plugins: [] };
  const dialogs: Dialogs = {
    chooseModel: vi.fn(async () => dialogAnswers.model),
    chooseEngineDestination: vi.fn(async () => dialogAnswers.engine),
    chooseTimingCache: vi.fn(async () => dialogAnswers.cache),
    choosePluginLibraries: vi.fn(async () => dialogAnswers.plugins),
  };
  const pluginFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'tbs-plugin-choices-')), 'plugin-libraries.json');

  const handlers = new Map<string, (event: unknown, payload?: unknown) => Promise<IpcResult<unknown>>>();
  const ipcMain = {
    handle: (channel: string, fn: never) => void handlers.set(channel, fn),
    removeHandler: (channel: string) => void handlers.delete(channel),
  };
  const window = new FakeWebContents();
  const stranger = new FakeWebContents();
  const openRequests = new OpenRequests(() => window);
  const recent = new RecentFiles(path.join(dir, 'recent.json'));
  const hub = new SubscriptionHub(service);
  const started: string[] = [];
  const refused: string[] = [];
  const shown: string[] = [];
  const unregister = registerIpcHandlers({
    ipcMain: ipcMain as never,
    service,
    isTrustedSender: createSenderCheck(() => [window.id]),
    dialogs,
    recent,
    openRequests,
    hub,
    windowOf: () => null,
    saveFolders: new SaveFolders(path.join(mkdtempSync(path.join(os.tmpdir(), 'tbs-settings-')), 'settings.json'), dir),
    pluginChoices: new PluginChoices(pluginFile),
    showInFolder: (file) => shown.push(file),
    onBuildStarted: (id) => started.push(id),
    annotateBackends: (list) => list.map((b) => (b.name === 'tensorrt' && !b.available ? { ...b, reason: `${b.reason}\nTensorRT location set in the app: /opt/trt/lib` } : b)),
    log: (m) => refused.push(m),
  });

  const event = (sender = window, url = 'app://studio/index.html', parent: unknown = null) => ({ sender, senderFrame: { url, parent } });
  const call = async (channel: string, payload?: unknown, ev: unknown = event()) => {
    const h = handlers.get(channel);
    if (!h) throw new Error(`no handler for ${channel}`);
    return h(ev, payload);
  };
  return { dir, model, engine, pluginFile, service, dialogs, dialogAnswers, handlers, window, stranger, event, call, recent, started, refused, shown, unregister, openRequests };
}

type Ctx = ReturnType<typeof setup>;
let t: Ctx;
beforeEach(() => {
  t = setup();
});

const errorOf = (r: IpcResult<unknown>) => {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
};

describe('who may call', () => {
  it('registers a handler for every channel and removes them all', () => {
    expect([...t.handlers.keys()].sort()).toEqual(Object.values(INVOKE).sort());
    t.unregister();
    expect(t.handlers.size).toBe(0);
  });

  it.each([
    ['another webContents', () => t.event(t.stranger)],
    ['a subframe of our window', () => t.event(t.window, 'app://studio/index.html', {})],
    ['a page that is not ours', () => t.event(t.window, 'https://evil.example/')],
    ['a file:// page', () => t.event(t.window, 'file:///tmp/index.html')],
    ['a frame that went away', () => ({ sender: t.window, senderFrame: null })],
  ])('refuses %s before looking at the payload or touching the service', async (_name, ev) => {
    for (const channel of Object.values(INVOKE)) {
      const err = errorOf(await t.call(channel, { path: t.model, id: 'b1', modelPath: t.model }, ev()));
      expect(err.code).toBe('forbidden');
    }
    for (const fn of Object.values(t.service)) expect(fn).not.toHaveBeenCalled();
    expect(t.dialogs.chooseModel).not.toHaveBeenCalled();
    expect(t.refused.length).toBe(Object.values(INVOKE).length);
  });
});

describe('what may be sent', () => {
  it.each([
    [INVOKE.openModelPath, { path: 'relative/model.onnx' }, 'path: path must be absolute'],
    [INVOKE.openModelPath, { path: '/a\0b.onnx' }, 'NUL'],
    [INVOKE.openModelPath, { path: '/x.onnx', extra: 1 }, 'extra'],
    [INVOKE.openModelPath, undefined, 'expected object'],
    [INVOKE.startBuild, { modelPath: '/m.onnx', options: { optLevel: 9 } }, 'options.optLevel'],
    [INVOKE.startBuild, { modelPath: '/m.onnx', options: { shapes: ['x:1x3/2x3'] } }, 'invalid shape'],
    [INVOKE.startBuild, { modelPath: '/m.onnx', options: { simFault: 'explode' } }, 'options.simFault'],
    [INVOKE.startBuild, { modelPath: '/m.onnx', outputPath: '/etc/passwd' }, 'outputPath'],
    [INVOKE.cancelBuild, { id: '../../x' }, 'id: unexpected characters'],
    [INVOKE.cancelBuild, { id: 42 }, 'id'],
    [INVOKE.subscribe, { subscriptionId: 's1' }, 'buildId'],
    [INVOKE.saveEngine, { id: 'b1', path: '/tmp/x' }, 'path'],
    [INVOKE.listBuilds, { sneaky: true }, 'this request takes no arguments'],
    [INVOKE.listEngines, { dir: '/etc' }, 'this request takes no arguments'],
    [INVOKE.deleteEngines, { names: '/etc/passwd' }, 'names'],
    [INVOKE.deleteEngines, { names: [] }, 'names'],
    [INVOKE.deleteEngines, { names: [7] }, 'names'],
    [INVOKE.deleteEngines, { names: ['a.engine'], dir: '/etc' }, 'dir'],
    [INVOKE.openModel, 'some/path.onnx', 'this request takes no arguments'],
  ])('%s rejects %j', async (channel, payload, mentions) => {
    const err = errorOf(await t.call(channel, payload));
    expect(err.code).toBe('bad_input');
    expect(err.message).toContain(mentions);
    expect(t.service.startBuild).not.toHaveBeenCalled();
    expect(t.service.inspectModel).not.toHaveBeenCalled();
  });

  it("gives the service's own message for a bad model", async () => {
    const err = errorOf(await t.call(INVOKE.openModelPath, { path: path.join(t.dir, 'bad.onnx') }));
    expect(err).toEqual({ code: 'bad_model', message: 'bad.onnx is not an ONNX model (truncated protobuf)' });
  });
});

describe('opening models', () => {
  it('returns null when the open dialog is cancelled', async () => {
    expect(await t.call(INVOKE.openModel)).toEqual({ ok: true, value: null });
    expect(t.service.inspectModel).not.toHaveBeenCalled();
  });

  it('inspects the chosen model and remembers it', async () => {
    t.dialogAnswers.model = t.model;
    const res = await t.call(INVOKE.openModel);
    expect(res).toEqual({ ok: true, value: { path: t.model, displayName: 'model.onnx', summary: summary('model.onnx') } });
    expect(await t.recent.get()).toEqual([t.model]);
    expect(JSON.parse(readFileSync(path.join(t.dir, 'recent.json'), 'utf8')).files).toEqual([t.model]);
  });

  it("starts the open dialog in the last model's folder (the OS default before any model)", async () => {
    await t.call(INVOKE.openModel);
    expect(t.dialogs.chooseModel).toHaveBeenLastCalledWith(null, undefined);
    t.dialogAnswers.model = t.model;
    await t.call(INVOKE.openModel);
    await t.call(INVOKE.openModel);
    expect(t.dialogs.chooseModel).toHaveBeenLastCalledWith(null, path.dirname(t.model));
  });

  it('lists backends with where TensorRT was looked for in its unavailable reason', async () => {
    vi.mocked(t.service.listBackends).mockResolvedValueOnce([
      { name: 'tensorrt', available: false, reason: 'libnvinfer.so.10 not found' },
      { name: 'simulated', available: true },
    ]);
    const res = await t.call(INVOKE.listBackends);
    expect(res).toEqual({
      ok: true,
      value: [
        { name: 'tensorrt', available: false, reason: 'libnvinfer.so.10 not found\nTensorRT location set in the app: /opt/trt/lib' },
        { name: 'simulated', available: true },
      ],
    });
  });

  it('drops a recent entry whose file is gone', async () => {
    const gone = path.join(t.dir, 'gone.onnx');
    await t.recent.add(gone);
    const err = errorOf(await t.call(INVOKE.openModelPath, { path: gone }));
    expect(err.code).toBe('not_found');
    expect(await t.recent.get()).toEqual([]);
  });

  it('hands command-line paths to the page once it asks, then pushes later ones', async () => {
    t.openRequests.request('/early.onnx');
    expect(t.window.sent).toEqual([]);
    expect(await t.call(INVOKE.takeOpenRequests)).toEqual({ ok: true, value: ['/early.onnx'] });
    t.openRequests.request('/later.onnx');
    expect(t.window.sent).toEqual([[PUSH.openRequest, { path: '/later.onnx' }]]);
    expect(await t.call(INVOKE.takeOpenRequests)).toEqual({ ok: true, value: [] });
  });
});

describe('builds', () => {
  it('starts a build without letting the page pick where the engine goes', async () => {
    const res = await t.call(INVOKE.startBuild, { modelPath: t.model, options: { backend: 'simulated', simDuration: 0.5 } });
    expect(res).toEqual({ ok: true, value: { id: 'b3' } });
    expect(t.service.startBuild).toHaveBeenCalledWith({ modelPath: t.model, options: expect.objectContaining({ backend: 'simulated', simDuration: 0.5 }) });
    expect(t.service.startBuild.mock.calls[0][0]).not.toHaveProperty('outputPath');
    expect(t.started).toEqual(['b3']);
  });

  it('passes the time budget on, and refuses one that is not a positive number of seconds', async () => {
    expect((await t.call(INVOKE.startBuild, { modelPath: t.model, options: { backend: 'simulated' }, timeBudgetSeconds: 2.5 })).ok).toBe(true);
    expect(t.service.startBuild).toHaveBeenCalledWith(expect.objectContaining({ modelPath: t.model, timeBudgetSeconds: 2.5 }));
    t.service.startBuild.mockClear();
    for (const bad of [0, -1, 'soon']) {
      expect(errorOf(await t.call(INVOKE.startBuild, { modelPath: t.model, timeBudgetSeconds: bad })).message).toMatch(/timeBudgetSeconds/);
    }
    expect(t.service.startBuild).not.toHaveBeenCalled();
  });

  it('only writes a timing cache the user picked in the dialog', async () => {
    const cache = path.join(t.dir, 'timing.cache');
    const refused = errorOf(await t.call(INVOKE.startBuild, { modelPath: t.model, options: { timingCache: cache } }));
    expect(refused.code).toBe('bad_input');
    expect(refused.message).toMatch(/timing-cache file/);
    expect(t.service.startBuild).not.toHaveBeenCalled();

    t.dialogAnswers.cache = cache;
    expect(await t.call(INVOKE.chooseTimingCache)).toEqual({ ok: true, value: cache });
    expect((await t.call(INVOKE.startBuild, { modelPath: t.model, options: { timingCache: cache } })).ok).toBe(true);
    // Another path is still refused after one was approved.
    expect(errorOf(await t.call(INVOKE.startBuild, { modelPath: t.model, options: { timingCache: `${cache}2` } })).code).toBe('bad_input');
  });

  it('a build naming a plugin library main did not hand out is refused (bad_input); the page cannot add to the picks', async () => {
    const lib = path.join(t.dir, 'libmy_plugin.so');
    writeFileSync(lib, 'stand-in');
    for (const option of ['staticPlugins', 'dynamicPlugins', 'pluginsToSerialize']) {
      const err = errorOf(await t.call(INVOKE.startBuild, { modelPath: t.model, options: { [option]: [lib] } }));
      expect(err.code).toBe('bad_input');
      expect(err.message).toBe(
        `${option}[0]: ${lib} was not picked for this model: plugin libraries are code, so on the desktop they are chosen with "Add…" beside the option, never typed.`,
      );
    }
    // Nothing but a path in main's list can be forgotten or asked for; a path sent to forget adds nothing.
    expect(await t.call(INVOKE.forgetPluginLibrary, { modelPath: t.model, option: 'staticPlugins', library: lib })).toEqual({
      ok: true,
      value: { staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] },
    });
    expect(errorOf(await t.call(INVOKE.pluginLibraries, { modelPath: t.model, staticPlugins: [lib] })).code).toBe('bad_input');
    expect(errorOf(await t.call(INVOKE.choosePluginLibraries, { modelPath: t.model, option: 'staticPlugins', library: lib })).code).toBe('bad_input');
    expect(errorOf(await t.call(INVOKE.choosePluginLibraries, { modelPath: t.model, option: 'evilPlugins' })).code).toBe('bad_input');
    expect(t.service.startBuild).not.toHaveBeenCalled();
  });

  it('plugin libraries picked in the dialog build, for that model and option only, until forgotten; remembered per model across restarts', async () => {
    const lib = path.join(t.dir, 'libmy_plugin.so');
    const other = path.join(t.dir, 'model2.onnx');
    t.dialogAnswers.plugins = [];
    // A cancelled dialog changes nothing.
    expect(await t.call(INVOKE.choosePluginLibraries, { modelPath: t.model, option: 'dynamicPlugins' })).toEqual({
      ok: true,
      value: { staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] },
    });
    t.dialogAnswers.plugins = [lib];
    expect(await t.call(INVOKE.choosePluginLibraries, { modelPath: t.model, option: 'dynamicPlugins' })).toEqual({
      ok: true,
      value: { staticPlugins: [], dynamicPlugins: [lib], pluginsToSerialize: [] },
    });
    expect(t.dialogs.choosePluginLibraries).toHaveBeenLastCalledWith(null, 'dynamicPlugins', t.dir);
    expect((await t.call(INVOKE.startBuild, { modelPath: t.model, options: { dynamicPlugins: [lib] } })).ok).toBe(true);
    expect(t.service.startBuild).toHaveBeenCalledTimes(1);
    // Under another option, or for another model, the same file was not picked.
    expect(errorOf(await t.call(INVOKE.startBuild, { modelPath: t.model, options: { staticPlugins: [lib] } })).code).toBe('bad_input');
    expect(errorOf(await t.call(INVOKE.startBuild, { modelPath: other, options: { dynamicPlugins: [lib] } })).code).toBe('bad_input');
    expect(errorOf(await t.call(INVOKE.startBuild, { modelPath: t.model, options: { dynamicPlugins: [lib, `${lib}.other`] } })).message).toMatch(/^dynamicPlugins\[1\]: /);
    expect(t.service.startBuild).toHaveBeenCalledTimes(1);

    // Remembered for the model: a new main (restart) reads the picks back.
    const again = new PluginChoices(t.pluginFile);
    expect(await again.get(t.model)).toEqual({ staticPlugins: [], dynamicPlugins: [lib], pluginsToSerialize: [] });
    expect(await again.get(other)).toEqual({ staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] });

    expect(await t.call(INVOKE.forgetPluginLibrary, { modelPath: t.model, option: 'dynamicPlugins', library: lib })).toEqual({
      ok: true,
      value: { staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] },
    });
    expect(errorOf(await t.call(INVOKE.startBuild, { modelPath: t.model, options: { dynamicPlugins: [lib] } })).code).toBe('bad_input');
    expect(await new PluginChoices(t.pluginFile).get(t.model)).toEqual({ staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] });
  });

  it('a corrupt or foreign picks file means no picks, never a start that fails', async () => {
    writeFileSync(t.pluginFile, JSON.stringify({ version: 1, models: { 'relative/model.onnx': { staticPlugins: ['/x.so'] }, [t.model]: { staticPlugins: ['not/absolute.so'] } } }));
    expect(await new PluginChoices(t.pluginFile).get(t.model)).toEqual({ staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] });
    writeFileSync(t.pluginFile, '{not json');
    expect(await new PluginChoices(t.pluginFile).get(t.model)).toEqual({ staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] });
  });

  it('cancels with reason "user" and says so when the build is unknown', async () => {
    expect(await t.call(INVOKE.cancelBuild, { id: 'b1' })).toEqual({ ok: true, value: null });
    expect(t.service.cancelBuild).toHaveBeenCalledWith('b1', 'user');
    expect(errorOf(await t.call(INVOKE.cancelBuild, { id: 'nope' }))).toEqual({ code: 'not_found', message: 'No build with id nope.' });
  });

  it('streams a snapshot to the subscribing frame, and reports unknown builds', async () => {
    expect(await t.call(INVOKE.subscribe, { subscriptionId: 's1', buildId: 'b1' })).toEqual({ ok: true, value: null });
    expect(t.window.sent[0]).toEqual([
      PUSH.buildStream,
      { subscriptionId: 's1', kind: 'snapshot', record: expect.objectContaining({ id: 'b1' }), view: expect.objectContaining({ buildId: 'b1' }) },
    ]);
    expect(errorOf(await t.call(INVOKE.subscribe, { subscriptionId: 's2', buildId: 'zz' })).code).toBe('not_found');
  });
});

describe('saving the engine', () => {
  it('returns null and writes nothing when the save dialog is cancelled', async () => {
    expect(await t.call(INVOKE.saveEngine, { id: 'b1' })).toEqual({ ok: true, value: null });
    expect(t.dialogs.chooseEngineDestination).toHaveBeenCalledWith(null, path.join(t.dir, 'm.engine'));
    expect(readdirSync(t.dir).sort()).toEqual(['b1.engine', 'model.onnx']);
  });

  it("suggests the model's name with the output's own extensions", async () => {
    const sim = path.join(t.dir, 'model-b7.simulated.engine');
    writeFileSync(sim, 'SIMULATED');
    t.service.enginePath.mockImplementation((id: string) => (id === 'b1' ? sim : undefined));
    t.service.getBuild.mockImplementation((id: string) => (id === 'b1' ? record('b1', { modelPath: '/models/resnet50.v2.ONNX' }) : undefined));
    await t.call(INVOKE.saveEngine, { id: 'b1' });
    expect(t.dialogs.chooseEngineDestination).toHaveBeenCalledWith(null, path.join(t.dir, 'resnet50.v2.simulated.engine'));
  });

  it('copies the engine to the chosen place, whole, leaving no temp file', async () => {
    const dest = path.join(t.dir, 'out', '..', 'saved.engine');
    t.dialogAnswers.engine = dest;
    const res = await t.call(INVOKE.saveEngine, { id: 'b1' });
    expect(res).toEqual({ ok: true, value: { location: dest, bytes: 100_000 } });
    expect(readFileSync(dest).equals(readFileSync(t.engine))).toBe(true);
    expect(readdirSync(t.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a build without an engine, and an unknown build', async () => {
    t.dialogAnswers.engine = path.join(t.dir, 'x.engine');
    expect(errorOf(await t.call(INVOKE.saveEngine, { id: 'b2' })).code).toBe('conflict');
    expect(errorOf(await t.call(INVOKE.saveEngine, { id: 'b9' })).code).toBe('not_found');
    expect(t.dialogs.chooseEngineDestination).not.toHaveBeenCalled();
    expect(existsSync(path.join(t.dir, 'x.engine'))).toBe(false);
  });

  it('opens the next save dialog where the last engine was saved, and the timing-cache dialog where the last cache was', async () => {
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'tbs-saved-'));
    t.dialogAnswers.engine = path.join(elsewhere, 'first.engine');
    await t.call(INVOKE.saveEngine, { id: 'b1' });
    await t.call(INVOKE.saveEngine, { id: 'b1' });
    expect(t.dialogs.chooseEngineDestination).toHaveBeenLastCalledWith(null, path.join(elsewhere, 'm.engine'));
    // Another kind keeps its own folder (still the default here).
    t.dialogAnswers.cache = null;
    await t.call(INVOKE.chooseTimingCache);
    expect(t.dialogs.chooseTimingCache).toHaveBeenLastCalledWith(null, path.join(t.dir, 'timing.cache'));
    // A remembered folder that has gone falls back to the default.
    rmSync(elsewhere, { recursive: true, force: true });
    t.dialogAnswers.engine = null;
    await t.call(INVOKE.saveEngine, { id: 'b1' });
    expect(t.dialogs.chooseEngineDestination).toHaveBeenLastCalledWith(null, path.join(t.dir, 'm.engine'));
  });

  it('fails cleanly when the destination is a folder, keeping what was there', async () => {
    const dest = path.join(t.dir, 'folder.engine');
    mkdirSync(dest);
    writeFileSync(path.join(dest, 'keep.txt'), 'keep');
    t.dialogAnswers.engine = dest;
    const err = errorOf(await t.call(INVOKE.saveEngine, { id: 'b1' }));
    expect(err).toEqual({ code: 'bad_input', message: `Could not save the engine to ${dest}: that is a folder.` });
    expect(readFileSync(path.join(dest, 'keep.txt'), 'utf8')).toBe('keep');
    expect(readdirSync(t.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('never replaces a FIFO chosen as the destination, and writes through a symbolic link (the link stays)', async () => {
    const fifo = path.join(t.dir, 'chosen.fifo');
    execFileSync('mkfifo', [fifo]);
    const before = lstatSync(fifo);
    t.dialogAnswers.engine = fifo;
    const err = errorOf(await t.call(INVOKE.saveEngine, { id: 'b1' }));
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(/chosen\.fifo is a FIFO \(named pipe\), not a regular file; it is left untouched/);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(lstatSync(fifo).ino).toBe(before.ino);

    const target = path.join(t.dir, 'real-target.engine');
    writeFileSync(target, 'old');
    const link = path.join(t.dir, 'link.engine');
    symlinkSync(target, link);
    t.dialogAnswers.engine = link;
    const saved = await t.call(INVOKE.saveEngine, { id: 'b1' });
    expect(saved.ok).toBe(true);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target)).toEqual(readFileSync(path.join(t.dir, 'b1.engine')));
  });

  it('reports a destination it cannot write, and leaves no partial file', async () => {
    t.dialogAnswers.engine = path.join(t.dir, 'missing-dir', 'x.engine');
    const err = errorOf(await t.call(INVOKE.saveEngine, { id: 'b1' }));
    expect(err).toEqual({ code: 'bad_input', message: `Could not save the engine to ${t.dialogAnswers.engine}: the folder does not exist.` });
    expect(readdirSync(t.dir).sort()).toEqual(['b1.engine', 'model.onnx']);
  });
});

describe('engines in the output folder', () => {
  it('lists what the service lists and deletes by name through it', async () => {
    expect(await t.call(INVOKE.listEngines)).toEqual({ ok: true, value: t.service.listEngines() });
    const res = await t.call(INVOKE.deleteEngines, { names: ['m.sim.10.16.engine', 'notes.txt'] });
    expect(res).toEqual({ ok: true, value: { deleted: ['m.sim.10.16.engine'], refused: [{ name: 'notes.txt', reason: 'not an engine file (.engine)' }] } });
    expect(t.service.deleteEngines).toHaveBeenCalledWith(['m.sim.10.16.engine', 'notes.txt']);
  });

  it('lists nothing and refuses deleting on a service without an engine folder (build farm)', async () => {
    const { listEngines: _l, deleteEngines: _d, ...farmLike } = t.service;
    const handlers = new Map<string, (event: unknown, payload?: unknown) => Promise<IpcResult<unknown>>>();
    registerIpcHandlers({
      ipcMain: { handle: (c: string, fn: never) => void handlers.set(c, fn), removeHandler: () => undefined } as never,
      service: farmLike,
      isTrustedSender: () => true,
      dialogs: t.dialogs,
      recent: t.recent,
      openRequests: t.openRequests,
      hub: new SubscriptionHub(farmLike),
      windowOf: () => null,
      saveFolders: new SaveFolders(path.join(t.dir, 'unused-settings.json'), t.dir),
      onBuildStarted: () => undefined,
      showInFolder: () => undefined,
    });
    const ev = t.event();
    expect(await handlers.get(INVOKE.listEngines)!(ev)).toEqual({ ok: true, value: [] });
    expect(errorOf(await handlers.get(INVOKE.deleteEngines)!(ev, { names: ['a.engine'] })).code).toBe('not_found');
  });
});

describe("History's engine and manifest on the desktop (showBuildFile)", () => {
  it("opens the file manager at a build's own engine, and at the manifest beside it once there is one", async () => {
    expect(await t.call(INVOKE.showBuildFile, { id: 'b1', file: 'engine' })).toEqual({ ok: true, value: { path: t.engine } });
    const noManifest = errorOf(await t.call(INVOKE.showBuildFile, { id: 'b1', file: 'manifest' }));
    expect(noManifest.code).toBe('not_found');
    expect(noManifest.message).toContain(`${t.engine}.manifest.json`);
    writeFileSync(`${t.engine}.manifest.json`, '{}');
    expect(await t.call(INVOKE.showBuildFile, { id: 'b1', file: 'manifest' })).toEqual({ ok: true, value: { path: `${t.engine}.manifest.json` } });
    expect(t.shown).toEqual([t.engine, `${t.engine}.manifest.json`]);
  });

  it('refuses a build without an engine, an unknown build and any other file, showing nothing', async () => {
    expect(errorOf(await t.call(INVOKE.showBuildFile, { id: 'b2', file: 'engine' })).code).toBe('conflict');
    expect(errorOf(await t.call(INVOKE.showBuildFile, { id: 'nope', file: 'engine' })).code).toBe('not_found');
    expect(errorOf(await t.call(INVOKE.showBuildFile, { id: 'b1', file: 'layers' })).code).toBe('bad_input');
    expect(errorOf(await t.call(INVOKE.showBuildFile, { id: 'b1', file: 'engine', path: '/etc/passwd' })).code).toBe('bad_input');
    expect(t.shown).toEqual([]);
  });
});

describe("a build's layers for the Engine view (buildLayers)", () => {
  /** What the simulated backend writes beside its engine (engine-manifest-file.ts) for a build with these options. */
  const writeSimulatedLayers = (precision: Array<'fp16'>) =>
    writeFileSync(
      layersPathFor(t.engine),
      JSON.stringify(
        simulatedLayerInformation(
          [
            { name: 'conv_0', op: 'Conv' },
            { name: 'relu_1', op: 'Relu' },
            { name: 'exp_2', op: 'Exp' },
            { name: 'fc', op: 'Gemm' },
          ],
          normalizeOptions({ precision }),
          ['input', 'output'],
        ),
      ),
    );

  it("answers the service's reading of the build's saved layer JSON, shaped as GET /api/builds/{id}/layers sends it", async () => {
    t.service.getBuild('b1')!.options = { backend: 'simulated', precision: ['fp16'] };
    writeSimulatedLayers(['fp16']);
    const res = await t.call(INVOKE.buildLayers, { id: 'b1' });
    // The same function the HTTP route answers from, less the files' paths on disk (as the route).
    const { files, ...expected } = buildLayerReport(t.service, 'b1');
    expect(files.layers).toBe(layersPathFor(t.engine));
    expect(res).toEqual({ ok: true, value: expected });
    expect(JSON.stringify(res)).not.toContain(t.dir);
    const value = (res as { value: typeof expected }).value;
    expect(value).toMatchObject({ schema: '10.x', detailed: true, summary: { count: value.layers.length } });
    expect(value.layers.map((l) => [l.name, l.precision])).toContainEqual(['conv_0 + relu_1', 'fp16']);
    // An fp16 build: the check names the layer the simulated backend left in FP32.
    expect(value.check).toMatchObject({ expected: 'fp16', wider: [{ name: 'exp_2', precision: 'fp32' }] });
  });

  it('no precision asked for: no check', async () => {
    writeSimulatedLayers([]);
    const res = await t.call(INVOKE.buildLayers, { id: 'b1' });
    expect(res.ok && (res.value as Record<string, unknown>).check).toBeUndefined();
    expect(res.ok && Object.keys(res.value as object).sort()).toEqual(['detailed', 'io', 'layers', 'schema', 'summary']);
  });

  it('refuses an id of another shape (bad_input) and says not_found for an unknown build, a failed one and one without layer information', async () => {
    writeSimulatedLayers([]);
    for (const payload of [{ id: '../b1' }, { id: '' }, { id: 'b1', path: '/etc/passwd' }, 'b1', undefined]) {
      const err = errorOf(await t.call(INVOKE.buildLayers, payload));
      expect(err.code).toBe('bad_input');
      expect(err.message).toMatch(/^Invalid request to tbs:build-layers: /);
    }
    expect(errorOf(await t.call(INVOKE.buildLayers, { id: 'nope' }))).toEqual({ code: 'not_found', message: 'unknown build "nope"' });
    expect(errorOf(await t.call(INVOKE.buildLayers, { id: 'b2' })).message).toMatch(/^build b2 has no engine \(it is failed\)/);
    rmSync(layersPathFor(t.engine));
    const gone = errorOf(await t.call(INVOKE.buildLayers, { id: 'b1' }));
    expect([gone.code, gone.message]).toEqual(['not_found', expect.stringMatching(/^build b1 has no layer information/)]);
  });
});
