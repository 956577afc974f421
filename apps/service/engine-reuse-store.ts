// The engine store behind `build --reuse` (docs/engines.md, "Reuse"): engines kept by their reuse
// key (apps/shared/engine-manifest.ts, reuseKeyMaterial), so a build whose key matches ends at
// once with the stored bytes instead of building again. Default folder:
// $XDG_CACHE_HOME/trt-build-studio/engines (~/.cache/... without it); the farm passes a folder in
// its shared artifact store, so every machine of a (GPU, TensorRT) kind shares the engines.
//
// One entry is a folder named by the key holding `engine` and `manifest.json`, made in a temp
// folder and renamed into place (never half there). The mtime of its `used` file is its last use;
// past the size limit the least recently used entries go first. (Not the engine's own mtime: the
// stored engine is a hard link to the build's output file where it can be, and the service knows
// an output engine by its mtime, engine-identity.ts: touching it would disown the build's engine.) A lookup re-hashes the stored engine
// against its manifest, so a damaged entry is dropped, never handed out.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineManifest, reuseKeyMaterial, type ReuseKeyInput } from '../shared/engine-manifest.js';
import { sha256File } from './engine-manifest-file.js';
import { xdgDir } from './user-dirs.js';

export const DEFAULT_STORE_LIMIT_MIB = 20 * 1024;
const MiB = 1024 * 1024;

/** $XDG_CACHE_HOME/trt-build-studio/engines, or ~/.cache/trt-build-studio/engines. */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = xdgDir(env, 'XDG_CACHE_HOME', '.cache');
  return path.join(base, 'trt-build-studio', 'engines');
}

export function reuseKey(input: ReuseKeyInput): string {
  return crypto.createHash('sha256').update(reuseKeyMaterial(input)).digest('hex');
}

export interface StoredEngine {
  key: string;
  enginePath: string;
  manifest: EngineManifest;
  /** The engine's layer information, when it was stored with it. */
  layersPath?: string;
}

interface Entry {
  key: string;
  bytes: number;
  usedMs: number;
}

let tmpCounter = 0;

/** The file whose mtime is an entry's last use. */
export const USED = 'used';

function touchUsed(entryDir: string): void {
  const now = new Date();
  try {
    fs.utimesSync(path.join(entryDir, USED), now, now);
  } catch {
    try {
      fs.writeFileSync(path.join(entryDir, USED), '');
    } catch {
      // Evicted between the hash and now: the caller copies from its open path or builds.
    }
  }
}

function usedMs(entryDir: string): number | undefined {
  try {
    return fs.statSync(path.join(entryDir, USED)).mtimeMs;
  } catch {
    return undefined;
  }
}

export class EngineReuseStore {
  readonly dir: string;
  readonly limitBytes: number;
  /**
   * The GPU a machine without one stands for (a farm worker's gpu label with the simulated
   * backend): taken into simulated builds' keys, so engines "for" an A100 and an L4 stay apart in
   * a shared store just as real ones do by their GPU.
   */
  standsFor?: string;

  constructor(dir: string = defaultStoreDir(), limitMiB: number = DEFAULT_STORE_LIMIT_MIB) {
    if (!(limitMiB >= 0)) throw new RangeError(`the store limit must be a number of MiB >= 0, got ${limitMiB}`);
    this.dir = path.resolve(dir);
    this.limitBytes = limitMiB * MiB;
  }

  /** The key of `input` in this store (reuseKey, with `standsFor` for simulated builds). */
  keyFor(input: ReuseKeyInput): string {
    if (input.backend !== 'simulated' || input.gpu.name || !this.standsFor) return reuseKey(input);
    return reuseKey({ ...input, gpu: { ...input.gpu, name: `simulated ${this.standsFor}` } });
  }

  private entryDir(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`not a reuse key: ${key}`);
    return path.join(this.dir, key);
  }

  /** The stored engine of `key`, verified against its manifest, and marked as just used; else undefined. */
  async lookup(key: string): Promise<StoredEngine | undefined> {
    const d = this.entryDir(key);
    const enginePath = path.join(d, 'engine');
    let manifest: EngineManifest;
    try {
      manifest = EngineManifest.parse(JSON.parse(fs.readFileSync(path.join(d, 'manifest.json'), 'utf8')));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.drop(key);
      return undefined;
    }
    const sha = await sha256File(enginePath);
    if (sha !== manifest.engine.sha256) {
      this.drop(key); // damaged or half-removed: never hand it out
      return undefined;
    }
    touchUsed(d);
    const layersPath = path.join(d, 'layers.json');
    return { key, enginePath, manifest, ...(manifest.layerInfo && fs.existsSync(layersPath) ? { layersPath } : {}) };
  }

  /**
   * Keeps `enginePath` (with its manifest) under `key`: a hard link where the store is on the same
   * filesystem (engines are replaced by rename, never written in place), else a copy. Then evicts
   * down to `limitBytes`; an engine larger than the whole limit is not kept.
   */
  async put(key: string, enginePath: string, manifest: EngineManifest, limitBytes = this.limitBytes, layersPath?: string): Promise<boolean> {
    if (manifest.engine.bytes > limitBytes) {
      this.evict(limitBytes); // the limit holds for the store even when this engine is not kept
      return false;
    }
    fs.mkdirSync(this.dir, { recursive: true });
    const dest = this.entryDir(key);
    const tmp = path.join(this.dir, `.${key}.tmp-${process.pid}-${++tmpCounter}`);
    try {
      fs.mkdirSync(tmp);
      try {
        fs.linkSync(enginePath, path.join(tmp, 'engine'));
      } catch {
        await fs.promises.copyFile(enginePath, path.join(tmp, 'engine'));
      }
      if (layersPath) fs.copyFileSync(layersPath, path.join(tmp, 'layers.json'));
      fs.writeFileSync(path.join(tmp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      fs.writeFileSync(path.join(tmp, USED), '');
      fs.rmSync(dest, { recursive: true, force: true });
      fs.renameSync(tmp, dest);
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
    this.evict(limitBytes, key);
    return true;
  }

  /** Entries, least recently used first. */
  entries(): Entry[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: Entry[] = [];
    for (const key of names) {
      if (!/^[0-9a-f]{64}$/.test(key)) continue;
      try {
        const st = fs.statSync(path.join(this.dir, key, 'engine'));
        out.push({ key, bytes: st.size, usedMs: usedMs(path.join(this.dir, key)) ?? st.mtimeMs });
      } catch {
        // Half removed: eviction below or the next lookup cleans it.
      }
    }
    return out.sort((a, b) => a.usedMs - b.usedMs || a.key.localeCompare(b.key));
  }

  /** Removes least recently used entries until the store holds at most `limitBytes`; `keep` goes last. */
  evict(limitBytes = this.limitBytes, keep?: string): string[] {
    const all = this.entries();
    let total = all.reduce((n, e) => n + e.bytes, 0);
    const removed: string[] = [];
    for (const e of all) {
      if (total <= limitBytes) break;
      if (e.key === keep) continue;
      this.drop(e.key);
      total -= e.bytes;
      removed.push(e.key);
    }
    return removed;
  }

  private drop(key: string): void {
    fs.rmSync(this.entryDir(key), { recursive: true, force: true });
  }
}
