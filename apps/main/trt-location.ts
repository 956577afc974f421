// Where TensorRT's libraries (libnvinfer.so.*) live, chosen in the app (File ▸ TensorRT
// Location…, a main-process folder dialog) and kept in <userData>/settings.json as
// `trtLibDir`. An app started from the dock has no shell to set TBS_TRT_LIB_DIR in, and a
// tarball or pip install of TensorRT is not on the loader path; the worker gets the folder as
// TBS_TRT_LIB_DIR (native/src/trt/trt_loader.cc reads it) and "TensorRT unavailable: why?"
// names it. The renderer never names the folder: only the dialog does.
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import type { BackendInfo } from '../shared/protocol.js';
import { updateSettings } from './settings-file.js';

export const TRT_LIB_DIR_ENV = 'TBS_TRT_LIB_DIR';
export const TRT_LOCATION_MENU_PATH = 'File ▸ TensorRT Location…';

export class TrtLocation {
  private dir: string | null;

  constructor(private readonly settingsFile: string) {
    // Read once, synchronously: the first worker (listing backends) may start right after.
    this.dir = readDir(settingsFile);
  }

  /** The chosen folder, or null for "TensorRT's own search (loader path, TBS_TRT_LIB_DIR)". */
  get(): string | null {
    return this.dir;
  }

  /** Remembers a folder picked in the dialog; null forgets it. */
  async set(dir: string | null): Promise<void> {
    const value = dir === null ? null : path.resolve(dir);
    if (value !== null) {
      const st = await fs.stat(value).catch(() => null);
      if (!st?.isDirectory()) throw new Error(`not a folder: ${value}`);
    }
    await updateSettings(this.settingsFile, (s) => {
      if (value === null) delete s.trtLibDir;
      else s.trtLibDir = value;
    });
    this.dir = value;
  }

  /** What each new worker adds to its environment. The app's choice wins over an inherited one. */
  workerEnv(): Record<string, string> {
    return this.dir ? { [TRT_LIB_DIR_ENV]: this.dir } : {};
  }

  /** The backend list with the unavailable TensorRT's reason saying where it was looked for. */
  annotate(list: BackendInfo[]): BackendInfo[] {
    return list.map((b) => (b.name === 'tensorrt' && !b.available ? { ...b, reason: `${b.reason ?? 'not available'}\n${this.describe()}` } : b));
  }

  describe(): string {
    if (this.dir) return `TensorRT location set in the app: ${this.dir} (change it in ${TRT_LOCATION_MENU_PATH}).`;
    const inherited = process.env[TRT_LIB_DIR_ENV];
    if (inherited) return `TensorRT location from the environment: ${TRT_LIB_DIR_ENV}=${inherited} (${TRT_LOCATION_MENU_PATH} sets one in the app).`;
    return `No TensorRT location is set: pick the folder holding libnvinfer.so.* in ${TRT_LOCATION_MENU_PATH}.`;
  }
}

function readDir(file: string): string | null {
  try {
    const v = (JSON.parse(readFileSync(file, 'utf8')) as { trtLibDir?: unknown }).trtLibDir;
    return typeof v === 'string' && path.isAbsolute(v) ? v : null;
  } catch {
    return null;
  }
}
