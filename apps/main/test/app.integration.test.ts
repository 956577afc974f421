// The whole main process as main.ts wires it, with Electron replaced by fakes (./fake-electron.ts)
// and everything else real: the build service, the model reader, the worker (in an emulated
// utility process) and the native addon with the simulated backend. The test plays the renderer:
// it calls the IPC handlers as the window's top frame would and reads what main sends back.
// Not covered (needs the Electron binary): Chromium itself, the real preload bridge, real dialogs.
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import type { BuildEvent } from '../../shared/protocol.js';
import type { BuildStreamMessage, IpcResult } from '../ipc-channels.js';
import { INVOKE, PUSH } from '../ipc-channels.js';
import { isAlive } from './emulated-utility-process.js';
import { fakeEvent } from './fake-electron.js';
import type { FakeApp, FakeBrowserWindow, FakeIpcMain, FakeMenu, FakeNotification, FakePowerSaveBlocker, FakeProtocol } from './fake-electron.js';

vi.mock('electron', async () => {
  const fake = await import('./fake-electron.js');
  const { emulatedFork } = await import('./emulated-utility-process.js');
  const path = await import('node:path');
  return {
    app: new fake.FakeApp(path.resolve(__dirname, '../../..')),
    BrowserWindow: fake.FakeBrowserWindow,
    ipcMain: new fake.FakeIpcMain(),
    Menu: fake.FakeMenu,
    Notification: fake.FakeNotification,
    protocol: new fake.FakeProtocol(),
    session: { defaultSession: new fake.FakeSession() },
    nativeTheme: { shouldUseDarkColors: false },
    dialog: {
      showOpenDialog: () => Promise.reject(new Error('dialogs are stubbed through TBS_E2E_*')),
      showSaveDialog: () => Promise.reject(new Error('dialogs are stubbed through TBS_E2E_*')),
      // The quit/close question: answered from the test (messageBoxAnswers), recorded.
      messageBoxes: [] as Array<{ message: string; buttons: string[] }>,
      messageBoxAnswers: [] as string[],
      showMessageBox(_win: unknown, o: { message: string; buttons: string[] }) {
        this.messageBoxes.push(o);
        const answer = this.messageBoxAnswers.shift();
        if (answer === undefined) return Promise.reject(new Error('the test did not expect a question'));
        return Promise.resolve({ response: o.buttons.indexOf(answer) });
      },
    },
    powerSaveBlocker: new fake.FakePowerSaveBlocker(),
    shell: { showItemInFolder: () => undefined },
    utilityProcess: { fork: emulatedFork },
    crashReporter: {
      started: [] as unknown[],
      start(o: unknown) {
        this.started.push(o);
      },
    },
  };
});

const ROOT = path.resolve(__dirname, '../../..');
const needed = ['dist/apps/worker/worker.js', 'build/native/Release/trt_build_studio.node'].filter((p) => !existsSync(path.join(ROOT, p)));
if (needed.length) console.log(`[skip] main process integration: not built yet: ${needed.join(', ')}`);

interface Fakes {
  app: FakeApp;
  crashReporter: { started: unknown[] };
  powerSaveBlocker: FakePowerSaveBlocker;
  dialog: { messageBoxes: Array<{ message: string; buttons: string[] }>; messageBoxAnswers: string[] };
  ipcMain: FakeIpcMain;
  protocol: FakeProtocol;
  BrowserWindow: typeof FakeBrowserWindow;
  Menu: typeof FakeMenu;
  Notification: typeof FakeNotification;
}

describe.skipIf(needed.length > 0)('main process, wired as main.ts wires it', () => {
  const dir = tempDir('tbs-app-');
  const model = writeModel(path.join(dir, 'resnet tiny.onnx'), { layers: 10 });
  const argvModel = writeModel(path.join(dir, 'from-argv.onnx'), { layers: 3 });
  const saved = path.join(dir, 'saved', '..', 'saved.engine');
  let e: Fakes;
  let win: FakeBrowserWindow;
  const workerPids: number[] = [];
  const ourSignalListeners: Array<[NodeJS.Signals, (...a: unknown[]) => void]> = [];

  const call = async <T>(channel: string, payload?: unknown): Promise<T> => {
    const h = e.ipcMain.handlers.get(channel);
    if (!h) throw new Error(`no handler for ${channel}`);
    const res = (await h({ sender: win.webContents, senderFrame: { url: 'app://studio/index.html', parent: null } }, payload)) as IpcResult<T>;
    if (!res.ok) throw new Error(`${res.error.code}: ${res.error.message}`);
    return res.value;
  };
  const streamFor = (subscriptionId: string) =>
    win.webContents.sent.filter(([ch, m]) => ch === PUSH.buildStream && (m as BuildStreamMessage).subscriptionId === subscriptionId).map(([, m]) => m as BuildStreamMessage);
  /** The page acknowledges each events message as it takes it, as the preload does. */
  const ackAsThePageDoes = () => {
    const send = win.webContents.send.bind(win.webContents);
    win.webContents.send = (channel: string, message: unknown) => {
      send(channel, message);
      const m = message as BuildStreamMessage;
      if (channel === PUSH.buildStream && m.kind === 'events') {
        setImmediate(() => void call(INVOKE.ackStream, { subscriptionId: m.subscriptionId, batch: m.batch }).catch(() => undefined));
      }
    };
  };

  beforeAll(async () => {
    const argv = process.argv;
    process.env.TBS_USER_DATA_DIR = path.join(dir, 'user data');
    process.env.TBS_E2E_OPEN = model;
    process.env.TBS_E2E_SAVE = saved;
    process.env.XDG_DATA_HOME = path.join(dir, 'data home');
    e = (await import('electron')) as unknown as Fakes;
    e.app.setPath('documents', dir);
    e.app.setPath('home', path.join(dir, 'home'));
    e.app.setPath('logs', path.join(dir, 'logs'));
    e.app.setPath('crashDumps', path.join(dir, 'crash dumps'));
    // A temp engine a dead session left in the engines folder, written before this app started.
    const engines = path.join(dir, 'data home', 'trt-build-studio', 'engines');
    mkdirSync(engines, { recursive: true });
    writeFileSync(path.join(engines, 'left.engine.tmp-999999-0'), 'x');
    writeFileSync(path.join(engines, 'kept.engine'), 'x');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(path.join(engines, 'left.engine.tmp-999999-0'), hourAgo, hourAgo);
    const signalListeners = () => [process.listenerCount('SIGTERM'), process.listenerCount('SIGINT')];
    const before = signalListeners();
    process.argv = [process.execPath, ROOT, '--inspect=0', argvModel];
    try {
      await import('../main.js');
    } finally {
      process.argv = argv;
    }
    // Identity before 'ready' (Electron reads the desktop name when it makes the first window).
    expect(e.app.getName()).toBe('TRT Build Studio');
    if (process.platform === 'linux') expect([e.app.desktopName, e.app.desktopNameBeforeReady]).toEqual(['trt-build-studio.desktop', true]);
    // The scheme must be privileged before Chromium starts, i.e. before 'ready'; so must the
    // switch that makes old file-chooser portals fall back to GTK.
    expect(e.protocol.privileged).toEqual([expect.objectContaining({ scheme: 'app' })]);
    // No xdg-portal-required-version: Electron 41+ runs no portal version test, so it did nothing;
    // the open dialog gets the remembered folder as defaultPath instead (dialogs.test.ts).
    expect(e.app.commandLine.switches.map(([n]) => n)).not.toContain('xdg-portal-required-version');
    // Crash dumps on this machine only.
    expect(e.crashReporter.started).toEqual([expect.objectContaining({ uploadToServer: false })]);
    // No SIGTERM/SIGINT listener before 'ready': Electron installs its own handlers then, which
    // would replace one installed earlier (quit-signals.ts).
    expect(signalListeners()).toEqual(before);
    expect(e.BrowserWindow.instances).toHaveLength(0);
    e.app.becomeReady();
    await vi.waitFor(() => expect(e.BrowserWindow.instances).toHaveLength(1));
    expect(signalListeners()).toEqual(before.map((n) => n + 1));
    ourSignalListeners.push(['SIGTERM', process.listeners('SIGTERM').at(-1)!], ['SIGINT', process.listeners('SIGINT').at(-1)!]);
    expect(readdirSync(engines).sort()).toEqual(['kept.engine']);
    win = e.BrowserWindow.instances[0];
    ackAsThePageDoes();
    // Track worker pids from the service's point of view: every utility process main forks.
    const launcher = (await import('electron')) as unknown as { utilityProcess: { fork: (...a: unknown[]) => unknown } };
    const fork = launcher.utilityProcess.fork;
    launcher.utilityProcess.fork = (...a: unknown[]) => {
      const child = fork(...a) as { pid?: number; once(e: 'spawn', cb: () => void): void };
      child.once('spawn', () => workerPids.push(child.pid!));
      return child;
    };
  });

  afterAll(() => {
    for (const [sig, l] of ourSignalListeners) process.removeListener(sig, l);
    delete process.env.TBS_E2E_OPEN;
    delete process.env.TBS_E2E_SAVE;
    delete process.env.TBS_USER_DATA_DIR;
    delete process.env.XDG_DATA_HOME;
  });

  it('opens one secure window on our own origin, served with the CSP', async () => {
    expect(win.loadedUrl).toBe('app://studio/index.html');
    expect(win.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false });
    expect(String((win.options.webPreferences as { preload: string }).preload)).toMatch(/preload\.cjs$/);
    const handler = e.protocol.handlers.get('app')!;
    const res = await handler(new Request('app://studio/index.html'));
    if (existsSync(path.join(ROOT, 'dist/renderer/index.html'))) expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('hands the model from the command line to the page when it asks', async () => {
    expect(await call<string[]>(INVOKE.takeOpenRequests)).toEqual([argvModel]);
  });

  it('opens a file URL a second instance forwards (the file manager passes %U) in this window', async () => {
    const url = `file://${model.split('/').map(encodeURIComponent).join('/')}`;
    expect(url).toContain('%20');
    // Unpackaged, argv[1] is the app folder: the same shape Electron forwards.
    e.app.emit('second-instance', {}, [process.execPath, ROOT, url], '/');
    const opened = win.webContents.sent.filter(([ch]) => ch === PUSH.openRequest).map(([, m]) => m);
    expect(opened).toEqual([{ path: model }]);
  });

  it('opens a model through the (stubbed) dialog with the real model reader, and remembers it', async () => {
    const ref = await call<{ path: string; displayName: string; summary: { nodeCount: number } }>(INVOKE.openModel);
    expect(ref.path).toBe(model);
    expect(ref.displayName).toBe('resnet tiny.onnx');
    expect(ref.summary.nodeCount).toBeGreaterThan(0);
    expect(await call<string[]>(INVOKE.recentModels)).toEqual([model]);
    expect(e.app.recentDocuments).toEqual([model]);
    const recent = e.Menu.getApplicationMenu()!
      .template.flatMap((m) => (m.submenu as Array<{ id?: string; submenu?: Array<{ label: string }> }>) ?? [])
      .find((i) => i.id === 'recent');
    expect(recent?.submenu?.map((i) => i.label)).toEqual([model]);
  });

  it('builds in a utility process, streams batched events to the page, and drives the taskbar and menu', async () => {
    win.focused = false; // the user went elsewhere: a notification is due at the end
    const { id } = await call<{ id: string }>(INVOKE.startBuild, { modelPath: model, options: { backend: 'simulated', simDuration: 0.6, simSeed: 3 } });
    await call(INVOKE.subscribe, { subscriptionId: 's1', buildId: id });
    await vi.waitFor(() => expect(e.Menu.getApplicationMenu()!.getMenuItemById('stop')!.enabled).toBe(true), { timeout: 5000 });
    // The machine may not suspend while it runs.
    expect([...e.powerSaveBlocker.active.values()]).toEqual(['prevent-app-suspension']);
    await vi.waitFor(() => expect(streamFor('s1').at(-1)).toMatchObject({ kind: 'events' }), { timeout: 10_000 });
    await vi.waitFor(
      () => {
        const last = streamFor('s1').at(-1);
        expect(last?.kind === 'events' && last.events.at(-1)?.type).toBe('build.finished');
      },
      { timeout: 15_000 },
    );
    const stream = streamFor('s1');
    expect(stream[0].kind).toBe('snapshot');
    const events = stream.flatMap((m) => (m.kind === 'events' ? m.events : [])) as BuildEvent[];
    const seqs = events.map((ev) => ev.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(events.filter((ev) => ev.type === 'phase.start').length).toBeGreaterThan(3);
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    // Batched: far fewer messages than events.
    expect(stream.length).toBeLessThan(events.length);
    // Taskbar: a real fraction at some point, cleared at the end; Stop disabled again.
    expect(win.progress.some(([p]) => p > 0 && p <= 1)).toBe(true);
    await vi.waitFor(() => expect(win.progress.at(-1)?.[0]).toBe(-1));
    expect(e.Menu.getApplicationMenu()!.getMenuItemById('stop')!.enabled).toBe(false);
    expect(e.powerSaveBlocker.active.size).toBe(0);
    expect(e.Notification.shown.at(-1)).toMatchObject({ title: 'Build succeeded' });
    expect(e.Notification.shown.at(-1)!.body).toContain('resnet tiny.onnx');
    // Clicking it (however late: it is kept referenced) brings the window back.
    win.shown = false;
    e.Notification.instances.at(-1)!.emit('click');
    expect(win.shown).toBe(true);

    // Save: the (stubbed) dialog's path receives an exact copy of the engine.
    const result = await call<{ location: string; bytes: number }>(INVOKE.saveEngine, { id });
    expect(result.location).toBe(path.resolve(saved));
    const builds = await call<Array<{ id: string; outputPath?: string }>>(INVOKE.listBuilds);
    const source = builds.find((b) => b.id === id)!.outputPath!;
    // Engines live in the data folder, not in the configuration folder (userData).
    expect(source.startsWith(path.join(dir, 'data home', 'trt-build-studio', 'engines') + path.sep)).toBe(true);
    expect(readFileSync(result.location).equals(readFileSync(source))).toBe(true);
    expect(result.bytes).toBe(readFileSync(source).length);

    // The Engine view's layers: the layer JSON the simulated backend saved beside that engine, read
    // by the service as GET /api/builds/{id}/layers reads it (no precision asked: no check).
    const layers = await call<{ schema: string; detailed: boolean; layers: Array<{ name: string }>; summary: { count: number }; check?: unknown }>(INVOKE.buildLayers, { id });
    const savedLayers = JSON.parse(readFileSync(`${source}.layers.json`, 'utf8')) as { Layers: Array<{ Name: string }> };
    expect(layers.layers.map((l) => l.name)).toEqual(savedLayers.Layers.map((l) => l.Name));
    expect(layers).toMatchObject({ schema: '10.x', detailed: true, summary: { count: savedLayers.Layers.length } });
    expect(layers.check).toBeUndefined();
  });

  it('answers nobody but our window', async () => {
    const h = e.ipcMain.handlers.get(INVOKE.listBuilds)!;
    const res = (await h({ sender: { id: 999 }, senderFrame: { url: 'app://studio/index.html', parent: null } })) as IpcResult<unknown>;
    expect(res).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });

  it('File ▸ TensorRT Location… picks a folder in main, keeps it, gives it to the next worker and names it in "why?"', async () => {
    const lib = path.join(dir, 'TensorRT-10.16', 'lib');
    mkdirSync(lib, { recursive: true });
    const electron = (await import('electron')) as unknown as {
      dialog: { showOpenDialog: (...a: unknown[]) => Promise<unknown> };
      utilityProcess: { fork: (...a: unknown[]) => unknown };
    };
    const realOpen = electron.dialog.showOpenDialog;
    const realFork = electron.utilityProcess.fork;
    const asked: unknown[] = [];
    electron.dialog.showOpenDialog = async (...a: unknown[]) => {
      asked.push(a.at(-1));
      return { canceled: false, filePaths: [lib] };
    };
    const workerEnvs: Array<Record<string, string>> = [];
    electron.utilityProcess.fork = (...a: unknown[]) => {
      workerEnvs.push((a[2] as { env: Record<string, string> }).env);
      return realFork(...a);
    };
    let reloads = 0;
    (win.webContents as unknown as { reload(): void }).reload = () => void reloads++;
    try {
      const item = e.Menu.getApplicationMenu()!.getMenuItemById('trt-location') as unknown as { click(): void };
      item.click();
      await vi.waitFor(() => expect(reloads).toBe(1));
      expect(asked).toEqual([expect.objectContaining({ properties: ['openDirectory'] })]);
      expect(JSON.parse(readFileSync(path.join(dir, 'user data', 'settings.json'), 'utf8'))).toMatchObject({ trtLibDir: lib });
      // The cached list was dropped: a fresh worker, with the folder, is asked.
      const backends = await call<Array<{ name: string; available: boolean; reason?: string }>>(INVOKE.listBackends);
      expect(workerEnvs.at(-1)?.TBS_TRT_LIB_DIR).toBe(lib);
      const trt = backends.find((b) => b.name === 'tensorrt');
      // Here (no TensorRT) it is unavailable and its reason names the folder; where TensorRT
      // loads, there is no reason to annotate.
      expect(trt, JSON.stringify(backends)).toBeDefined();
      expect(trt!.available || trt!.reason!.includes(`TensorRT location set in the app: ${lib}`), trt!.reason).toBe(true);
    } finally {
      electron.dialog.showOpenDialog = realOpen;
      electron.utilityProcess.fork = realFork;
    }
  }, 30_000);

  it('quitting mid-build stops the build with reason "shutdown" and leaves no worker', async () => {
    const { id } = await call<{ id: string }>(INVOKE.startBuild, { modelPath: model, options: { backend: 'simulated', simDuration: 60 } });
    await call(INVOKE.subscribe, { subscriptionId: 's2', buildId: id });
    await vi.waitFor(() => expect(streamFor('s2').some((m) => m.kind === 'events' && m.events.some((ev) => ev.type === 'phase.step'))).toBe(true), { timeout: 10_000 });
    const pid = workerPids.at(-1)!;
    expect(isAlive(pid)).toBe(true);
    // Closing the window asks first; "Keep building" keeps the window and the build.
    e.dialog.messageBoxAnswers.push('Keep building');
    const closeEvent = fakeEvent({});
    win.emit('close', closeEvent);
    expect(closeEvent.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(e.dialog.messageBoxes).toHaveLength(1));
    expect(e.dialog.messageBoxes[0].message).toBe('A build is running.');
    // Quit asks too; "Keep building" again: nothing stops.
    e.dialog.messageBoxAnswers.push('Keep building');
    e.app.quit();
    await vi.waitFor(() => expect(e.dialog.messageBoxes).toHaveLength(2));
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(pid)).toBe(true);
    expect(e.app.exited).toBe(false);
    expect(streamFor('s2').some((m) => m.kind === 'events' && m.events.some((ev) => ev.type === 'build.cancelling'))).toBe(false);
    // "Stop and quit" stops it; a launch in the meantime relaunches the app once it has quit.
    e.dialog.messageBoxAnswers.push('Stop and quit');
    e.app.quit();
    await vi.waitFor(() => expect(e.dialog.messageBoxes).toHaveLength(3));
    await vi.waitFor(() => expect(streamFor('s2').some((m) => m.kind === 'events' && m.events.some((ev) => ev.type === 'build.cancelling'))).toBe(true), { timeout: 5000 });
    win.emit('closed');
    e.app.emit('second-instance', {}, [process.execPath, ROOT], '/');
    expect(e.app.exited).toBe(false);
    await vi.waitFor(() => expect(e.app.exited).toBe(true), { timeout: 12_000 });
    expect(e.app.relaunched).toBe(1);
    expect(e.powerSaveBlocker.active.size).toBe(0);
    const events = streamFor('s2').flatMap((m) => (m.kind === 'events' ? m.events : []));
    expect(events.find((ev) => ev.type === 'build.cancelling')).toMatchObject({ reason: 'shutdown' });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    // The window is in the background, but the user asked to quit: no "Build cancelled" pops up.
    expect(win.focused).toBe(false);
    expect(e.Notification.shown.map((n) => n.title)).not.toContain('Build cancelled');
    expect(isAlive(pid)).toBe(false);
    for (const p of workerPids) expect(isAlive(p)).toBe(false);
  }, 30_000);
});
