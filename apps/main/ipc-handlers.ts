// The main-process side of the preload's BuildClient. Every handler first checks who is asking
// (sender-check.ts), then validates the payload against ipc-channels.ts, then answers with an
// IpcResult envelope; nothing the renderer sends reaches the service or the disk unchecked.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { BaseWindow, IpcMainInvokeEvent } from 'electron';
import type { BuildLayers, ModelRef, SavedEngine } from '../shared/build-client.js';
import { describeZodError, type BackendInfo } from '../shared/protocol.js';
import { ServiceError, type BuildServiceApi } from '../service/api.js';
import { checkEngine } from '../service/engine-check.js';
import { manifestPathFor } from '../shared/engine-manifest.js';
import { compareSources } from '../service/compare-sources.js';
import { buildLayerReport } from '../service/engine-explain.js';
import { copyFileAtomic } from './atomic-file.js';
import type { Dialogs } from './dialogs.js';
import { INVOKE, PAYLOADS, type InvokeChannel, type IpcAnswer, type IpcResult, type PayloadOf } from './ipc-channels.js';
import type { OpenRequests } from './open-requests.js';
import { PluginChoices } from './plugin-choices.js';
import type { RecentFiles } from './recent-files.js';
import type { SaveFolders } from './save-folders.js';
import type { SenderInfo } from './sender-check.js';
import type { StreamTarget, SubscriptionHub } from './subscription-hub.js';

export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

export interface IpcDeps {
  ipcMain: IpcMainLike;
  service: BuildServiceApi;
  isTrustedSender(event: SenderInfo): boolean;
  dialogs: Dialogs;
  recent: RecentFiles;
  openRequests: OpenRequests;
  hub: SubscriptionHub;
  /** The window that owns the sender, to parent dialogs to it. */
  windowOf(event: IpcMainInvokeEvent): BaseWindow | null;
  /**
   * The plugin libraries the user picked per model (plugin-choices.ts); a build may name no
   * other. Default: picks kept for this session only.
   */
  pluginChoices?: PluginChoices;
  /** Where each kind of save dialog starts: the folder last saved to (save-folders.ts). */
  saveFolders: Pick<SaveFolders, 'folder' | 'remember'>;
  /** Opens the file manager at a file, selecting it (Electron's shell.showItemInFolder). */
  showInFolder(file: string): void;
  /** Build feedback (progress bar, notification, Stop menu item) follows each started build. */
  onBuildStarted(buildId: string, modelPath: string): void;
  /** Adds where TensorRT was looked for to its "unavailable" reason (trt-location.ts). */
  annotateBackends?(list: BackendInfo[]): BackendInfo[];
  log?(message: string): void;
}

type Handler<C extends InvokeChannel> = (payload: PayloadOf<C>, event: IpcMainInvokeEvent) => IpcAnswer<C> | Promise<IpcAnswer<C>>;

function fail(code: string, message: string): IpcResult<never> {
  return { ok: false, error: { code, message } };
}

function errorResult(err: unknown): IpcResult<never> {
  if (err instanceof ServiceError) return fail(err.code, err.message);
  // Anything else is unexpected but still worth a readable line rather than a silent failure.
  return fail('internal', err instanceof Error ? err.message : String(err));
}

const FS_REASONS: Record<string, string> = {
  ENOENT: 'the folder does not exist',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EISDIR: 'that is a folder',
  EXDEV: 'cannot move across file systems',
};

function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return (code && FS_REASONS[code]) ?? (err instanceof Error ? err.message : String(err));
}

export function registerIpcHandlers(deps: IpcDeps): () => void {
  const { ipcMain, service } = deps;
  /** Timing-cache files the user picked in a dialog this session: the only ones a build may write. */
  const approvedTimingCaches = new Set<string>();
  const pluginChoices = deps.pluginChoices ?? new PluginChoices();

  const on = <C extends InvokeChannel>(channel: C, handler: Handler<C>) => {
    ipcMain.handle(channel, async (event, payload) => {
      if (!deps.isTrustedSender(event)) {
        deps.log?.(`refused ${channel} from webContents ${event.sender?.id} (${event.senderFrame?.url ?? 'no frame'})`);
        return fail('forbidden', 'This page may not use the build service.');
      }
      const parsed = PAYLOADS[channel].safeParse(payload);
      if (!parsed.success) return fail('bad_input', `Invalid request to ${channel}: ${describeZodError(parsed.error)}`);
      try {
        return { ok: true, value: (await handler(parsed.data as PayloadOf<C>, event)) ?? null };
      } catch (err) {
        return errorResult(err);
      }
    });
  };

  const inspect = async (modelPath: string): Promise<ModelRef> => {
    const summary = await service.inspectModel(modelPath);
    await deps.recent.add(modelPath).catch((err: Error) => deps.log?.(`recent files not saved: ${err.message}`));
    return { path: modelPath, displayName: path.basename(modelPath), summary };
  };

  on(INVOKE.listBackends, async () => {
    const list = await service.listBackends();
    return deps.annotateBackends ? deps.annotateBackends(list) : list;
  });
  on(INVOKE.readBuildRoutes, ({ backend }) => {
    if (!service.readBuildRoutes) throw new ServiceError('not_found', 'This build service cannot read build routes from a library.');
    return service.readBuildRoutes(backend);
  });
  on(INVOKE.openModel, async (_p, event) => {
    // Start where the last model came from; the dialog itself forgets (Electron 43 and later).
    const last = (await deps.recent.get().catch(() => []))[0];
    const chosen = await deps.dialogs.chooseModel(deps.windowOf(event), last ? path.dirname(last) : undefined);
    return chosen === null ? null : inspect(chosen);
  });
  on(INVOKE.openModelPath, async ({ path: p }) => {
    try {
      return await inspect(p);
    } catch (err) {
      // A recent entry whose file has gone should not stay in the list.
      if (err instanceof ServiceError && err.code === 'not_found') await deps.recent.remove(p).catch(() => undefined);
      throw err;
    }
  });
  on(INVOKE.recentModels, () => deps.recent.get());
  on(INVOKE.takeOpenRequests, (_p, event) => deps.openRequests.take(event.sender.id));
  on(INVOKE.chooseTimingCache, async (_p, event) => {
    const chosen = await deps.dialogs.chooseTimingCache(deps.windowOf(event), path.join(await deps.saveFolders.folder('timingCache'), 'timing.cache'));
    if (chosen !== null) {
      approvedTimingCaches.add(path.resolve(chosen));
      await deps.saveFolders.remember('timingCache', chosen).catch((e: Error) => deps.log?.(`could not remember the folder: ${e.message}`));
    }
    return chosen;
  });
  on(INVOKE.pluginLibraries, ({ modelPath }) => pluginChoices.get(modelPath));
  on(INVOKE.choosePluginLibraries, async ({ modelPath, option }, event) => {
    const chosen = await deps.dialogs.choosePluginLibraries(deps.windowOf(event), option, await deps.saveFolders.folder('pluginLibrary'));
    if (chosen.length === 0) return pluginChoices.get(modelPath);
    await deps.saveFolders.remember('pluginLibrary', chosen[0]).catch((e: Error) => deps.log?.(`could not remember the folder: ${e.message}`));
    return pluginChoices.add(modelPath, option, chosen);
  });
  on(INVOKE.forgetPluginLibrary, ({ modelPath, option, library }) => pluginChoices.remove(modelPath, option, library));
  on(INVOKE.startBuild, async ({ modelPath, options, timeBudgetSeconds }) => {
    // The worker loads plugin libraries as code: only those the user picked for this model in
    // main's dialog, whatever the page sends.
    await pluginChoices.check(modelPath, options);
    if (options?.timingCache !== undefined && !approvedTimingCaches.has(path.resolve(options.timingCache))) {
      // The build writes the cache back; a path the user never picked in a dialog is refused.
      throw new ServiceError('bad_input', 'Choose the timing-cache file with "Timing cache…" before building.');
    }
    const record = await service.startBuild({ modelPath, options, timeBudgetSeconds });
    deps.onBuildStarted(record.id, modelPath);
    return { id: record.id };
  });
  on(INVOKE.cancelBuild, ({ id }) => {
    if (!service.getBuild(id)) throw new ServiceError('not_found', `No build with id ${id}.`);
    service.cancelBuild(id, 'user');
  });
  on(INVOKE.listBuilds, () => service.listBuilds());
  on(INVOKE.subscribe, ({ subscriptionId, buildId }, event) => {
    deps.hub.open(event.sender as unknown as StreamTarget, subscriptionId, buildId);
  });
  on(INVOKE.unsubscribe, ({ subscriptionId }, event) => {
    deps.hub.close(event.sender.id, subscriptionId);
  });
  on(INVOKE.ackStream, ({ subscriptionId, batch }, event) => {
    deps.hub.ack(event.sender.id, subscriptionId, batch);
  });
  on(INVOKE.saveEngine, async ({ id }, event): Promise<SavedEngine | null> => {
    const source = service.enginePath(id);
    if (!source) {
      const known = service.getBuild(id);
      throw new ServiceError(known ? 'conflict' : 'not_found', known ? `Build ${id} has no engine to save (it did not succeed, or the file is gone).` : `No build with id ${id}.`);
    }
    // Suggest the model's name (resnet50.onnx → resnet50.engine) rather than the build id; the
    // extensions are the service's, so a simulated output keeps the ".simulated.engine" that marks it.
    const modelPath = service.getBuild(id)?.modelPath;
    const extensions = /(\.[A-Za-z]+)+$/.exec(path.basename(source))?.[0] ?? '';
    const suggested = modelPath ? `${path.basename(modelPath).replace(/\.onnx$/i, '')}${extensions}` : path.basename(source);
    const dest = await deps.dialogs.chooseEngineDestination(deps.windowOf(event), path.join(await deps.saveFolders.folder('engine'), suggested));
    if (dest === null) return null;
    try {
      const bytes = await copyFileAtomic(source, dest);
      await deps.saveFolders.remember('engine', dest).catch((e: Error) => deps.log?.(`could not remember the folder: ${e.message}`));
      return { location: dest, bytes };
    } catch (err) {
      throw new ServiceError('bad_input', `Could not save the engine to ${dest}: ${describeFsError(err)}.`);
    }
  });
  // Only the service's own output folder, by plain file name: the service enforces that.
  on(INVOKE.listEngines, () => service.listEngines?.() ?? []);
  on(INVOKE.checkEngine, ({ name }) => {
    // A plain file name of the service's own output folder, never a path.
    if (!service.engineFolder) throw new ServiceError('not_found', 'This build service keeps no engine folder of its own.');
    if (name === '.' || name === '..' || /[\\/\u0000]/.test(name)) throw new ServiceError('bad_input', `not a plain file name: ${name}`);
    return checkEngine({ enginePath: path.join(service.engineFolder(), name) }, () => service.listBackends());
  });
  on(INVOKE.compareBuilds, ({ a, b }) => {
    const engineOf = (id: string) => {
      const file = service.enginePath(id);
      if (!file) throw new ServiceError('not_found', `build ${id} has no engine to compare`);
      return file;
    };
    return compareSources(engineOf(a), engineOf(b), []);
  });
  // The Engine view's "Show layers" and build picker on the desktop: the service's own reading and
  // precision check (engine-explain.ts), shaped as GET /api/builds/{id}/layers sends it, so both
  // hosts give the page the same object. The files' paths stay in main (the HTTP route omits them too).
  on(INVOKE.buildLayers, ({ id }): BuildLayers => {
    const { schema, detailed, layers, summary, io, check } = buildLayerReport(service, id);
    return { schema, detailed, layers, summary, io, ...(check ? { check } : {}) };
  });
  // History's "engine" and "manifest" on the desktop: the file manager opens at the build's file.
  // Only a build's own engine (still the file it wrote) or the manifest beside it, by build id.
  on(INVOKE.showBuildFile, ({ id, file }) => {
    const engine = service.enginePath(id);
    if (!engine) {
      const known = service.getBuild(id);
      throw new ServiceError(known ? 'conflict' : 'not_found', known ? `Build ${id} has no engine (it did not succeed, or the file is gone).` : `No build with id ${id}.`);
    }
    const target = file === 'engine' ? engine : manifestPathFor(engine);
    if (!existsSync(target)) throw new ServiceError('not_found', `Build ${id} has no manifest beside its engine (${target}).`);
    deps.showInFolder(target);
    return { path: target };
  });
  on(INVOKE.deleteEngines, ({ names }) => {
    if (!service.deleteEngines) throw new ServiceError('not_found', 'This build service keeps no engine folder of its own.');
    return service.deleteEngines(names);
  });

  return () => {
    for (const channel of Object.values(INVOKE)) ipcMain.removeHandler(channel);
  };
}
