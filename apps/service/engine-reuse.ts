// Reuse instead of rebuild (docs/engines.md, "Reuse"): the reuse key of a build about to run, the
// stored engine placed at its output path (engine, layer information, then a manifest of its own,
// in the order a build writes them), and a built engine kept in the store afterwards.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { engineIdentity, layersPathFor, normalizeOptions, pluginLibraryPaths, reuseKeyInputFor, type EngineManifest } from '../shared/engine-manifest.js';
import type { ValidatedBuild } from './build-validation.js';
import { modelDigest, sha256File, writeManifest } from './engine-manifest-file.js';
import type { EngineReuseStore } from './engine-reuse-store.js';
import { tempPrefix } from './temp-files.js';

const MiB = 1024 * 1024;

/**
 * The sha256 of each file a build's options name whose bytes are part of its key (plugin
 * libraries, a pinned cache), as they are now. A file that is gone is an error: the build itself
 * would fail on it, and a key made without it would stand for another build.
 */
export async function optionFileDigests(options: ValidatedBuild['options']): Promise<Map<string, string>> {
  const files = [...pluginLibraryPaths(options), ...(options.pinnedCache ? [options.pinnedCache] : [])];
  const out = new Map<string, string>();
  for (const f of files) {
    const sha = await sha256File(f);
    if (sha === null) throw new Error(`${f} is gone`);
    out.set(f, sha);
  }
  return out;
}

/** The key of a build before it runs: what this machine's backend says, the model and the files its options name as they are now. */
export async function keyForBuild(store: EngineReuseStore, build: ValidatedBuild): Promise<{ key: string; modelSha256: string }> {
  const model = await modelDigest(build.modelPath, build.summary.externalData.files);
  const id = engineIdentity(build.backend, build.backendInfo);
  const digests = await optionFileDigests(build.options);
  const key = store.keyFor(reuseKeyInputFor({ backend: build.backend, tensorrt: id.tensorrt, gpu: id.gpu }, build.options, model.sha256, (f) => digests.get(f)!));
  return { key, modelSha256: model.sha256 };
}

/** The key of a finished build, from its manifest (the same fields keyForBuild reads before it). */
export function keyOfManifest(store: EngineReuseStore, m: EngineManifest): string {
  return store.keyFor({
    backend: m.backend,
    tensorrt: m.tensorrt,
    gpu: m.gpu,
    options: m.options,
    modelSha256: m.model.sha256,
    pluginLibraries: m.pluginLibraries,
    pinnedCacheSha256: m.pinnedCache?.sha256 ?? null,
  });
}

export interface ReusedEngine {
  key: string;
  fromBuildId: string;
  manifest: EngineManifest;
  manifestPath: string;
}

let tmpCounter = 0;

async function copyAtomic(src: string, dest: string): Promise<void> {
  // Only a file (or a link, replaced as a link) is replaced: a FIFO or a folder that appeared at
  // the output path is someone else's and stays (issue 40).
  const there = await fs.promises.lstat(dest).catch(() => undefined);
  if (there && !there.isFile() && !there.isSymbolicLink())
    throw new Error(`${dest} is no longer a file (${there.isFIFO() ? 'a FIFO' : there.isDirectory() ? 'a directory' : 'a special file'}): it is left as it is`);
  const tmp = `${tempPrefix(dest, process.pid, 'reuse')}${++tmpCounter}`;
  try {
    await fs.promises.copyFile(src, tmp);
    await fs.promises.rename(tmp, dest);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true });
    throw e;
  }
}

/**
 * Places the stored engine of this build's key at its output path, with its layer information and
 * a manifest naming this build (and, in `reusedFrom`, the build that made the bytes). Undefined:
 * nothing stored under the key.
 */
export async function placeStoredEngine(store: EngineReuseStore, buildId: string, build: ValidatedBuild): Promise<ReusedEngine | undefined> {
  const { key } = await keyForBuild(store, build);
  const hit = await store.lookup(key);
  if (!hit) return undefined;
  const out = build.outputPath;
  await copyAtomic(hit.enginePath, out);
  let layerInfo = hit.manifest.layerInfo ?? null;
  if (layerInfo && hit.layersPath) {
    await copyAtomic(hit.layersPath, layersPathFor(out));
    layerInfo = { ...layerInfo, file: path.basename(layersPathFor(out)) };
  } else layerInfo = null;
  const fromBuildId = hit.manifest.reusedFrom?.buildId ?? hit.manifest.buildId;
  const manifest: EngineManifest = {
    ...hit.manifest,
    buildId,
    createdAt: new Date().toISOString(),
    // This request's own facts; what decides the engine (the key's fields) is the stored build's.
    options: normalizeOptions(build.options),
    model: { ...hit.manifest.model, path: build.modelPath, fileName: build.summary.fileName },
    engine: { ...hit.manifest.engine, file: path.basename(out) },
    layerInfo,
    reusedFrom: { buildId: fromBuildId, key },
  };
  const manifestPath = await writeManifest(out, manifest);
  return { key, fromBuildId, manifest, manifestPath };
}

/** Keeps a built engine in the store under its manifest's key; false when it is larger than the limit. */
export async function storeBuiltEngine(store: EngineReuseStore, enginePath: string, manifest: EngineManifest, limitMiB?: number): Promise<boolean> {
  const layers = manifest.layerInfo ? path.join(path.dirname(enginePath), manifest.layerInfo.file) : undefined;
  return store.put(keyOfManifest(store, manifest), enginePath, manifest, limitMiB === undefined ? store.limitBytes : limitMiB * MiB, layers);
}
