// Where the desktop app finds its parts, in development (`electron .` from the repo) and when
// packaged by electron-builder (everything under resources/app.asar, native files unpacked to
// resources/app.asar.unpacked because the OS loader cannot read inside an asar archive).
import fs from 'node:fs';
import path from 'node:path';

export interface AppLayout {
  rendererDir: string;
  preloadPath: string;
  workerPath: string;
  /** The window icon; electron-builder.yml packs it into the app. */
  iconPath: string;
  /** Environment the worker needs to find the addon; empty when its default lookup works. */
  workerEnv: Record<string, string>;
}

export const ADDON_ENV = 'TBS_ADDON_PATH';
const ADDON_DIR = path.join('build', 'native', 'Release');

/**
 * `appPath` is app.getAppPath() (the repo in development, …/resources/app.asar when packaged);
 * `mainDir` is the directory of the compiled main.js (where preload.cjs sits next to it).
 */
export function resolveAppLayout(appPath: string, mainDir: string, isPackaged: boolean, env: NodeJS.ProcessEnv = process.env): AppLayout {
  const workerEnv: Record<string, string> = {};
  if (env[ADDON_ENV]) {
    workerEnv[ADDON_ENV] = env[ADDON_ENV];
  } else if (isPackaged) {
    // The worker could also reach it through Electron's asar redirect, but an explicit real path
    // keeps the addon loader independent of that machinery.
    const addon = findAddon(path.join(unpackedPath(appPath), ADDON_DIR));
    if (addon) workerEnv[ADDON_ENV] = addon;
  }
  return {
    rendererDir: path.join(appPath, 'dist', 'renderer'),
    preloadPath: path.join(mainDir, 'preload.cjs'),
    workerPath: path.join(appPath, 'dist', 'apps', 'worker', 'worker.js'),
    iconPath: path.join(appPath, 'packaging', 'icon.png'),
    workerEnv,
  };
}

/** …/app.asar → …/app.asar.unpacked; unchanged for an unpacked app folder. */
export function unpackedPath(appPath: string): string {
  return appPath.endsWith('.asar') ? `${appPath}.unpacked` : appPath;
}

/** The file name apps/worker/addon.ts loads (owned by the native build). */
export const ADDON_FILE = 'trt_build_studio.node';

/** The addon in `dir`, or null when it is not there (the worker then reports a clear error). */
export function findAddon(dir: string): string | null {
  const file = path.join(dir, ADDON_FILE);
  return fs.existsSync(file) ? file : null;
}

/**
 * Where the desktop app keeps its engines: `$XDG_DATA_HOME/trt-build-studio/engines` (default
 * ~/.local/share/...). Not the configuration folder (userData): engines are gigabytes each, and
 * config folders get synced and backed up. TBS_ENGINES_DIR overrides it.
 */
export function enginesDir(env: NodeJS.ProcessEnv, home: string): string {
  if (env.TBS_ENGINES_DIR) return path.resolve(env.TBS_ENGINES_DIR);
  // The XDG spec: a relative value is invalid and must be ignored.
  const data = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, '.local', 'share');
  return path.join(data, 'trt-build-studio', 'engines');
}
