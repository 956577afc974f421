// Native file dialogs. Every path main writes to (engine, timing cache), and every plugin library
// a build loads, was picked here by the user, never named by the renderer.
//
// End-to-end tests cannot click native dialogs, so they can be answered from the environment
// (in an unpackaged app only: a packaged app always shows the real dialogs):
// TBS_E2E_OPEN, TBS_E2E_SAVE, TBS_E2E_TIMING_CACHE and TBS_E2E_PLUGIN each hold one or more paths separated by
// the platform's path delimiter (':' on Linux), consumed one per dialog (the last one repeats);
// the word "cancel" answers as if the user cancelled. Playwright can also replace
// dialog.showOpenDialog / showSaveDialog from electronApp.evaluate(): the methods are looked up on
// the dialog object at call time, so such a replacement takes effect.
import path from 'node:path';
import { dialog, type BaseWindow } from 'electron';
import type { PluginOption } from '../shared/build-client.js';

export const E2E_ENV = { open: 'TBS_E2E_OPEN', save: 'TBS_E2E_SAVE', timingCache: 'TBS_E2E_TIMING_CACHE', plugin: 'TBS_E2E_PLUGIN' } as const;

const PLUGIN_TITLES: Record<PluginOption, string> = {
  staticPlugins: 'Static plugin libraries (loaded before the build)',
  dynamicPlugins: 'Dynamic plugin libraries (registered with the builder)',
  pluginsToSerialize: 'Plugin libraries to serialize into the engine',
};

/** Answers queued in the environment for one kind of dialog. */
export class StubAnswers {
  private readonly answers: string[];
  private next = 0;

  constructor(raw: string | undefined) {
    this.answers = raw ? raw.split(path.delimiter).filter((s) => s.length > 0) : [];
  }

  get active(): boolean {
    return this.answers.length > 0;
  }

  take(): string | null {
    const a = this.answers[Math.min(this.next, this.answers.length - 1)];
    this.next++;
    return a === 'cancel' ? null : path.resolve(a);
  }
}

export interface Dialogs {
  /** `defaultFolder`: where the dialog starts (Electron no longer remembers the last folder). */
  chooseModel(win: BaseWindow | null, defaultFolder?: string): Promise<string | null>;
  chooseEngineDestination(win: BaseWindow | null, defaultPath: string): Promise<string | null>;
  chooseTimingCache(win: BaseWindow | null, defaultPath: string): Promise<string | null>;
  /** Plugin libraries for one option (several at once); empty when cancelled. */
  choosePluginLibraries(win: BaseWindow | null, option: PluginOption, defaultFolder: string): Promise<string[]>;
  /** The folder holding libnvinfer.so.* (trt-location.ts); null when cancelled. */
  chooseTrtLibDir(win: BaseWindow | null, defaultFolder?: string): Promise<string | null>;
}

export function createDialogs(env: NodeJS.ProcessEnv = process.env, opts: { isPackaged: boolean } = { isPackaged: false }): Dialogs {
  // A packaged app never takes answers from its environment: a variable left set (or planted)
  // must not pick the file a build writes.
  const answer = (name: string) => (opts.isPackaged ? undefined : env[name]);
  const stubs = {
    open: new StubAnswers(answer(E2E_ENV.open)),
    save: new StubAnswers(answer(E2E_ENV.save)),
    timingCache: new StubAnswers(answer(E2E_ENV.timingCache)),
    plugin: new StubAnswers(answer(E2E_ENV.plugin)),
  };

  const open = async (win: BaseWindow | null, options: Electron.OpenDialogOptions) => {
    const res = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
    return res.canceled || res.filePaths.length === 0 ? null : res.filePaths[0];
  };
  const save = async (win: BaseWindow | null, options: Electron.SaveDialogOptions) => {
    const res = win ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
    return res.canceled || !res.filePath ? null : res.filePath;
  };

  return {
    chooseModel(win, defaultFolder) {
      if (stubs.open.active) return Promise.resolve(stubs.open.take());
      return open(win, {
        title: 'Open ONNX model',
        ...(defaultFolder ? { defaultPath: defaultFolder } : {}),
        properties: ['openFile'],
        filters: [
          { name: 'ONNX models', extensions: ['onnx'] },
          { name: 'All files', extensions: ['*'] },
        ],
      });
    },
    chooseEngineDestination(win, defaultPath) {
      if (stubs.save.active) return Promise.resolve(stubs.save.take());
      return save(win, {
        title: 'Save engine',
        defaultPath,
        properties: ['showOverwriteConfirmation', 'createDirectory'],
      });
    },
    chooseTimingCache(win, defaultPath) {
      if (stubs.timingCache.active) return Promise.resolve(stubs.timingCache.take());
      // A save dialog, because the file may not exist yet (the first build creates it); no
      // overwrite prompt, because the build merges into an existing cache rather than replacing it.
      return save(win, {
        title: 'Timing cache file (read before the build, updated after it)',
        defaultPath,
        buttonLabel: 'Use',
        properties: ['createDirectory'],
      });
    },
    async choosePluginLibraries(win, option, defaultFolder) {
      if (stubs.plugin.active) {
        const a = stubs.plugin.take();
        return a === null ? [] : [a];
      }
      const options: Electron.OpenDialogOptions = {
        title: PLUGIN_TITLES[option],
        defaultPath: defaultFolder,
        buttonLabel: 'Add',
        properties: ['openFile', 'multiSelections'],
        filters: [
          { name: 'Shared libraries', extensions: ['so', 'dll'] },
          { name: 'All files', extensions: ['*'] },
        ],
      };
      const res = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
      return res.canceled ? [] : res.filePaths.map((f) => path.resolve(f));
    },
    async chooseTrtLibDir(win, defaultFolder) {
      const chosen = await open(win, {
        title: 'TensorRT location: the folder holding libnvinfer.so.*',
        ...(defaultFolder ? { defaultPath: defaultFolder } : {}),
        buttonLabel: 'Use this folder',
        properties: ['openDirectory'],
      });
      return chosen === null ? null : path.resolve(chosen);
    },
  };
}
