// The one interface the renderer depends on (Netron's host-adapter pattern). Electron's preload
// implements it over IPC; apps/renderer/web implements it over HTTP + SSE against `serve`. The UI
// cannot tell which one it has, except through `host` for wording ("Save…" vs "Download").
//
// The calls it shares with the build service take their signatures from the service's one
// description (./build-service-api.ts) through `RemoteCalls`; those a page makes in its own way
// (a model it picked instead of a path, a stream of handlers instead of a subscription) name the
// service's types for what they carry, so a change there is a compile error in every client.
import type { BackendChoice, BuildOptionsInput } from './protocol.js';
import type { CheckResult } from './engine-manifest.js';
import type { BuildComparison } from './build-compare.js';
import type { EngineLayers, PrecisionCheck } from './engine-layers.js';
import type { Answer, BuildServiceCalls, RemoteCalls, StartBuildInput, Subscription } from './build-service-api.js';

/** GET /api/builds/{id}/layers: the reader's answer and the precision check against what the build asked for. */
export type BuildLayers = EngineLayers & { check?: PrecisionCheck };

export type { DeleteEnginesResult, EngineFile } from './engine-files.js';

/** A model the host can build: a path on the machine that runs the builds. */
export interface ModelRef {
  /** Path as the build service sees it (an uploaded copy in browser mode). */
  path: string;
  /** What to show the user (original file name). */
  displayName: string;
  /** The service's inspectModel answer for it. */
  summary: Answer<'inspectModel'>;
}

export interface SavedEngine {
  /** Where it went (Electron), or the downloaded file name (browser). */
  location: string;
  bytes: number;
}

/** The build options that name plugin libraries (code the worker loads). */
export type PluginOption = 'staticPlugins' | 'dynamicPlugins' | 'pluginsToSerialize';
export const PLUGIN_OPTION_NAMES: readonly PluginOption[] = ['staticPlugins', 'dynamicPlugins', 'pluginsToSerialize'];

/** The plugin libraries the user picked for one model, by option (desktop: main keeps them). */
export type PluginLibraryLists = Record<PluginOption, string[]>;

export interface HostCapabilities {
  host: 'electron' | 'web';
  /** Native dialogs exist (Electron); otherwise file pickers and downloads. */
  nativeDialogs: boolean;
  /** Recent files are remembered by the host. */
  recentFiles: boolean;
}

/** How a page asks to start a build: the service's StartBuildInput, less what the host decides. */
export type StartBuildRun = Pick<StartBuildInput, 'timeBudgetSeconds'>;

/** The build's stream as a page follows it: the service's subscribe, handed over in calls. */
export interface BuildStreamHandlers {
  /**
   * The record and view the stream starts from (the service's Subscription.snapshot and .view),
   * again after a reset; a record alone when the host has no view for it.
   */
  onSnapshot(record: Subscription['snapshot'], view?: Subscription['view']): void;
  /** The service's event batches (the subscribe callback's argument), in seq order, each once. */
  onEvents(events: Parameters<Parameters<BuildServiceCalls['subscribe']>[1]>[0]): void;
  onError?(err: Error): void;
}

/**
 * The service's calls a page makes as they are (RemoteCalls: the same arguments, the answer as a
 * promise): listBackends and listBuilds on every host; the engine folder's listing and deletion
 * (names it will not delete come back in `refused`) where the host offers them.
 */
type SharedCalls = RemoteCalls<'listBackends' | 'listBuilds'> & Partial<RemoteCalls<'listEngines' | 'deleteEngines'>>;

export interface BuildClient extends SharedCalls {
  readonly capabilities: HostCapabilities;
  /**
   * The service's readBuildRoutes for a named backend: the build-route knob database (TensorRT
   * 11.1+), read from the library when asked (the route picker's "List knobs" button); afterwards
   * listBackends() reports it too. Rejects with a user-readable Error when the backend has none or
   * the library could not list them.
   */
  readBuildRoutes?(backend: BackendChoice): Promise<Answer<'readBuildRoutes'>>;
  /**
   * Asks the user for a model (native dialog / file picker) and inspects it.
   * Resolves null when the user cancels. Rejects with a user-readable Error for a bad model.
   */
  openModel(): Promise<ModelRef | null>;
  /** Inspects a dropped file (browser: uploads it; Electron: its path). */
  openDroppedFile(file: File): Promise<ModelRef>;
  /** Electron: a path from the recent-files list or the command line. */
  openModelPath?(path: string): Promise<ModelRef>;
  recentModels?(): Promise<string[]>;
  /** Models the host wants opened at start (command line / drag onto the dock), then later ones. */
  onOpenRequest?(cb: (path: string) => void): () => void;
  /** Asks the host for a timing-cache file path (Electron dialog); null when unsupported/cancelled. */
  chooseTimingCache?(): Promise<string | null>;
  /**
   * Desktop: plugin libraries are never typed. The user picks them in the host's own dialog for a
   * model, the host remembers them for that model, and a build may name only those. Each call
   * answers the model's lists as they are afterwards (a cancelled dialog changes nothing).
   */
  pluginLibraries?(model: ModelRef): Promise<PluginLibraryLists>;
  choosePluginLibraries?(model: ModelRef, option: PluginOption): Promise<PluginLibraryLists>;
  forgetPluginLibrary?(model: ModelRef, option: PluginOption, library: string): Promise<PluginLibraryLists>;

  /**
   * The service's startBuild for a model the host opened. `timeBudgetSeconds`: the service cancels
   * the build (reason "timeout") after that long. Resolves with the new build's id.
   */
  startBuild(model: ModelRef, options: BuildOptionsInput, run?: StartBuildRun): Promise<Pick<Answer<'startBuild'>, 'id'>>;
  /** The service's cancelBuild (reason "user"); a build that already finished is not an error. */
  cancelBuild(id: string): Promise<void>;
  /**
   * Snapshot first, then live batches. Returns an unsubscribe function. Implementations batch:
   * callers must not assume one call per event. `view` is the build view's complete snapshot
   * (apps/shared/build-view.ts) where the host provides it; when the stream had to be reset
   * (the events after the last one seen are no longer kept), onSnapshot comes again with a new
   * view, and events continue after its seq.
   */
  subscribe(id: string, handlers: BuildStreamHandlers): () => void;
  /** Saves (Electron: native save dialog) or downloads (browser) the engine. Null when cancelled. */
  saveEngine(id: string): Promise<SavedEngine | null>;
  /**
   * A succeeded build's layer information, read and checked by the service (GET
   * /api/builds/{id}/layers, apps/service/engine-explain.ts). Absent: not offered by this host.
   */
  buildLayers?(id: string): Promise<BuildLayers>;
  /**
   * The build farm's workers, queues and recent endings (GET /api/farm); null when the service
   * runs builds itself (no farm). Absent: not offered by this host.
   */
  farmStatus?(): Promise<Answer<'farmStatus'> | null>;
  /**
   * The farm view now and at every change (GET /api/farm/events, apps/shared/farm-stream.ts):
   * `onStatus(null)` once when the service runs builds itself (no farm), then nothing more.
   * Reconnects by itself; `onError` when it gives up. Returns the unsubscribe.
   */
  subscribeFarm?(handlers: { onStatus(status: Answer<'farmStatus'> | null): void; onError?(err: Error): void }): () => void;
  /** Checks an engine of that folder by file name against its manifest (docs/engines.md). */
  checkEngine?(name: string): Promise<CheckResult>;
  /** Two finished builds of this service side by side, from their manifests (the Compare view). */
  compareBuilds?(a: string, b: string): Promise<BuildComparison>;
  /** Where the browser can open a build's engine and manifest (web host only: links in History). */
  buildFileLinks?(id: string): { engine: string; manifest: string };
  /** Desktop: opens the file manager at a build's engine or its manifest (History's links there). */
  showBuildFile?(id: string, file: 'engine' | 'manifest'): Promise<{ path: string }>;
  /** Host-level progress hint (taskbar/dock bar); a no-op in the browser. */
  setProgress?(fraction: number | null): void;
  /**
   * Electron: application-menu commands (Open Ctrl/Cmd+O, Build Ctrl/Cmd+B, Stop Esc, Save
   * Ctrl/Cmd+S). The menu consumes these keys, so the renderer performs the action as if its own
   * button or shortcut had been used. Returns an unsubscribe function.
   */
  onHostAction?(cb: (action: 'open' | 'build' | 'stop' | 'save') => void): () => void;
}
