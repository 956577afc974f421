// The BuildClient of the desktop app, exposed to the page as `window.trtBuildStudio`.
//
// This preload runs sandboxed (sandbox: true, contextIsolation: true): it may require only
// 'electron' and a few builtins, and it validates nothing: main checks the sender and every
// payload (apps/main/ipc-handlers.ts), which is the only place a check cannot be bypassed by a
// compromised page. It takes the channel names from the module main registers them from, so there
// is no second list to keep in step; since a sandboxed preload cannot require that file, the
// build bundles this one into a single file (apps/main/preload.vite.config.mts) that requires
// nothing but 'electron'. (Electron runs a sandboxed preload as a function of require, process,
// exports and module, so CommonJS output works as is.)
import electron = require('electron');
import type { BuildClient, ModelRef, PluginOption, StartBuildRun } from '../shared/build-client.js';
import type { BackendChoice, BuildOptionsInput } from '../shared/protocol.js';
import { INVOKE as C, PUSH as P } from './ipc-channel-names.js';
import type { BuildStreamMessage, HostAction, InvokeChannel, IpcAnswer, IpcResult, PayloadIn, PushChannel } from './ipc-channels.js';

const { contextBridge, ipcRenderer, webUtils } = electron;

/**
 * What a failed call rejects with. contextBridge copies an Error as its message alone (its name
 * and other properties are lost), so the error's kind travels in a plain object, which is copied
 * whole; the page turns it back into an Error (apps/renderer/host-client.ts, same shape).
 */
interface BridgeError {
  tbsBridgeError: true;
  code: string;
  message: string;
}
const bridgeError = (code: string, message: string): BridgeError => ({ tbsBridgeError: true, code, message });

/** One invoke: its payload is what main's schema takes, its answer what the BuildClient call resolves with. */
async function call<C extends InvokeChannel>(channel: C, payload?: PayloadIn<C>): Promise<IpcAnswer<C>> {
  const res = (await ipcRenderer.invoke(channel, payload)) as IpcResult<IpcAnswer<C>>;
  if (res.ok) return res.value;
  return Promise.reject(bridgeError(res.error.code, res.error.message));
}

type StreamHandlers = Parameters<BuildClient['subscribe']>[1];
const streams = new Map<string, StreamHandlers>();
let subscriptionCounter = 0;
// One listener for every subscription: main tags each batch with the subscription it belongs to.
// Each events message is acknowledged once the page's handler has taken it: main sends the next
// one only then, and a page that stalls makes the service hold (and bound) what waits for it
// (apps/main/subscription-hub.ts).
ipcRenderer.on(P.buildStream, (_e, msg: BuildStreamMessage) => {
  const h = streams.get(msg.subscriptionId);
  if (!h) return; // Unsubscribed: main has closed it, nothing to acknowledge.
  try {
    if (msg.kind === 'snapshot') h.onSnapshot(msg.record, msg.view);
    else if (msg.kind === 'events') h.onEvents(msg.events);
    else (h.onError as ((e: unknown) => void) | undefined)?.(bridgeError('stream_error', msg.message));
  } finally {
    if (msg.kind === 'events') void call(C.ackStream, { subscriptionId: msg.subscriptionId, batch: msg.batch }).catch(() => undefined);
  }
});

function listen<T>(channel: PushChannel, cb: (value: T) => void): () => void {
  const listener = (_e: unknown, value: T) => cb(value);
  ipcRenderer.on(channel, listener);
  return () => {
    ipcRenderer.removeListener(channel, listener);
  };
}

const client: BuildClient = {
  capabilities: { host: 'electron', nativeDialogs: true, recentFiles: true },
  listBackends: () => call(C.listBackends),
  readBuildRoutes: (backend: BackendChoice) => call(C.readBuildRoutes, { backend }),
  openModel: () => call(C.openModel),
  openDroppedFile(file: File) {
    // Only the preload can turn a dropped File into its path (File.path was removed in Electron 32).
    const path = webUtils.getPathForFile(file);
    if (!path) return Promise.reject(bridgeError('bad_input', 'That item is not a file on this computer; drop a .onnx file.'));
    return call(C.openModelPath, { path });
  },
  openModelPath: (path: string) => call(C.openModelPath, { path }),
  recentModels: () => call(C.recentModels),
  onOpenRequest(cb: (path: string) => void) {
    const stop = listen<{ path: string }>(P.openRequest, (m) => cb(m.path));
    // Paths from the command line arrive before the page is listening; main holds them until asked.
    void call(C.takeOpenRequests).then((paths) => paths.forEach((p) => cb(p)));
    return stop;
  },
  chooseTimingCache: () => call(C.chooseTimingCache),
  pluginLibraries: (model: ModelRef) => call(C.pluginLibraries, { modelPath: model.path }),
  choosePluginLibraries: (model: ModelRef, option: PluginOption) => call(C.choosePluginLibraries, { modelPath: model.path, option }),
  forgetPluginLibrary: (model: ModelRef, option: PluginOption, library: string) => call(C.forgetPluginLibrary, { modelPath: model.path, option, library }),
  startBuild: (model: ModelRef, options: BuildOptionsInput, run?: StartBuildRun) =>
    call(C.startBuild, { modelPath: model.path, options, ...(run?.timeBudgetSeconds ? { timeBudgetSeconds: run.timeBudgetSeconds } : {}) }),
  cancelBuild: (id: string) => call(C.cancelBuild, { id }),
  listBuilds: () => call(C.listBuilds),
  subscribe(id: string, handlers: StreamHandlers) {
    const subscriptionId = `s${++subscriptionCounter}`;
    streams.set(subscriptionId, handlers);
    call(C.subscribe, { subscriptionId, buildId: id }).catch((err: unknown) => {
      streams.delete(subscriptionId);
      (handlers.onError as ((e: unknown) => void) | undefined)?.(err);
    });
    return () => {
      if (!streams.delete(subscriptionId)) return;
      void call(C.unsubscribe, { subscriptionId }).catch(() => undefined);
    };
  },
  saveEngine: (id: string) => call(C.saveEngine, { id }),
  listEngines: () => call(C.listEngines),
  deleteEngines: (names: string[]) => call(C.deleteEngines, { names }),
  checkEngine: (name: string) => call(C.checkEngine, { name }),
  compareBuilds: (a: string, b: string) => call(C.compareBuilds, { a, b }),
  buildLayers: (id: string) => call(C.buildLayers, { id }),
  showBuildFile: (id: string, file: 'engine' | 'manifest') => call(C.showBuildFile, { id, file }),
  onHostAction: (cb: (action: HostAction) => void) => listen<{ action: HostAction }>(P.hostAction, (m) => cb(m.action)),
};

try {
  contextBridge.exposeInMainWorld('trtBuildStudio', client);
} catch (err) {
  // The page would otherwise only see that the client is missing; give it the reason too (main
  // logs it as well, from 'preload-error'). If this throws as well, there is no bridge at all.
  contextBridge.exposeInMainWorld('trtBuildStudioError', err instanceof Error ? err.message : String(err));
  throw err;
}
