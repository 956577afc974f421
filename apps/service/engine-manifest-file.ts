// Writing, reading and removing `<engine>.manifest.json` (schema: apps/shared/engine-manifest.ts).
//
// The order of the two writes, and why (docs/engines.md, "Written together"): the native layer
// renames the finished engine into place first; only then is the manifest hashed from those very
// bytes and written (temp file + rename). The manifest names the engine's size and sha256, so
// whatever happens between the two renames (a crash, a kill, a full disk) leaves either no
// manifest or an older one whose sha256 is not the new engine's: `check` then says "unknown",
// never "fits". A manifest is only ever trusted for the bytes it names.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildView } from '../shared/build-view.js';
import {
  EngineManifest,
  engineIdentity,
  layersPathFor,
  MANIFEST_FORMAT_VERSION,
  manifestPathFor,
  normalizeOptions,
  pluginLibraryPaths,
  type ManifestPhase,
  type ManifestRow,
} from '../shared/engine-manifest.js';
import type { PhaseRow } from '../shared/phase-rows.js';
import { describeZodError, type BuildFinished } from '../shared/protocol.js';
import type { ValidatedBuild } from './build-validation.js';
import { simulatedLayerInformation } from './layer-info.js';
import { buildLayersFacts, expectedPrecision, type BuildLayersFacts } from '../shared/build-layers.js';
import { readEngineLayers } from '../shared/engine-layers.js';
import { backendCapabilities } from '../shared/trt-capabilities.js';
import { readBoundedText } from './engine-layers-file.js';
import { packageVersion } from './package-info.js';
import { refusePlanted } from './writable-path.js';
import { tempPrefix } from './temp-files.js';

export { manifestPathFor } from '../shared/engine-manifest.js';

/** What a file that is not a regular file is, for the error naming it. */
function kindOf(st: fs.Stats): string {
  return st.isFIFO() ? 'a FIFO' : st.isDirectory() ? 'a directory' : st.isSocket() ? 'a socket' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : 'not a regular file';
}

// O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever; on a regular file
// it changes nothing. The descriptor is checked to be a regular file before a byte is read, so
// a FIFO (or a device) swapped in for the model, the cache or a plugin ends in an error, not a hang.
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;

function notRegular(file: string, st: fs.Stats): Error {
  return Object.assign(new Error(`${file} is ${kindOf(st)}, not a regular file: it is not read`), { code: 'ENOTREG' });
}

/** `file` opened once, by descriptor, and checked to be a regular file; null when it is not there. */
export async function openRegularFile(file: string): Promise<fs.promises.FileHandle | null> {
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, OPEN_FLAGS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    throw notRegular(file, st);
  }
  return fh;
}

/** The same, synchronously: a descriptor, or null when the file is not there. */
export function openRegularFileSync(file: string): number | null {
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_FLAGS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    fs.closeSync(fd);
    throw notRegular(file, st);
  }
  return fd;
}

/** Feeds a regular file's bytes to `hash`; returns how many, or null when the file is not there. */
async function hashInto(hash: crypto.Hash, file: string): Promise<number | null> {
  const fh = await openRegularFile(file);
  if (fh === null) return null;
  let bytes = 0;
  try {
    for await (const chunk of fh.createReadStream({ autoClose: false })) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
  } finally {
    await fh.close();
  }
  return bytes;
}

/** sha256 of a file, streamed (engines run to gigabytes); null when the file is not there. */
export async function sha256File(file: string): Promise<string | null> {
  const hash = crypto.createHash('sha256');
  return (await hashInto(hash, file)) === null ? null : hash.digest('hex');
}

/** The same, synchronously, for small files read at a moment that must not move (a timing cache before the build). */
export function sha256FileSync(file: string): string | null {
  const fd = openRegularFileSync(file);
  if (fd === null) return null;
  try {
    return crypto.createHash('sha256').update(fs.readFileSync(fd)).digest('hex');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The model's digest: sha256 over the graph file's bytes and then each external data file's (in
 * the order given, paths relative to the model's folder), and the bytes of all of them. One changed
 * byte in the graph or in any weight file changes it.
 */
export async function modelDigest(modelPath: string, externalData: readonly string[]): Promise<{ sha256: string; bytes: number }> {
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  for (const file of [modelPath, ...externalData.map((f) => path.join(path.dirname(modelPath), f))]) {
    const n = await hashInto(hash, file);
    if (n === null) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' });
    bytes += n;
  }
  return { sha256: hash.digest('hex'), bytes };
}

function rowMs(r: PhaseRow): number {
  let ms = 0;
  for (let i = 0; i < r.spans.start.length; i++) ms += Math.max(0, r.spans.end[i] - r.spans.start[i]);
  return Math.round(ms * 1000) / 1000;
}

/** Top-level phases of a finished build's view, in start order, with their busy time. */
export function topLevelPhases(view: BuildView): ManifestPhase[] {
  return view.rows.root.children.map((r) => ({ name: r.name, ms: rowMs(r), count: r.count }));
}

/** Every row, depth first. */
export function allRows(view: BuildView): ManifestRow[] {
  const out: ManifestRow[] = [];
  const walk = (r: PhaseRow, at: string[]) => {
    for (const c of r.children) {
      const p = [...at, c.name];
      out.push({ path: p, name: c.name, ms: rowMs(c), count: c.count });
      walk(c, p);
    }
  };
  walk(view.rows.root, []);
  return out;
}

/** What the session knows when its build has succeeded. */
export interface ManifestSource {
  buildId: string;
  build: ValidatedBuild;
  view: BuildView;
  finished: BuildFinished;
  /** sha256 of the timing cache file when the build started (null: there was none). */
  cacheSha256Before: string | null;
  /** The layer information saved beside the engine, when there is some. */
  layerInfo?: EngineManifest['layerInfo'];
  /**
   * The model's digest taken when the build started (build-session.ts reads the model once, up
   * front, beside the worker): the model is not reopened by path at the end, when it may be gone
   * or something else (a FIFO) may sit there.
   */
  modelAtLaunch?: Promise<{ sha256: string; bytes: number }>;
  /** The plugin libraries' hashes taken when the build started (when the worker loads them). */
  pluginsAtLaunch?: Promise<EngineManifest['pluginLibraries']>;
}

/**
 * The UUID of the GPU a build ran on: the backend listing reports it for the device it probed
 * (device 0), so only a build on that device gets it; another device's is not known (null).
 */
function gpuUuidOf(info: ValidatedBuild['backendInfo'], device: number | null | undefined): string | null {
  const g = info.gpu;
  if (!g?.uuid) return null;
  return (device ?? 0) === g.device ? g.uuid : null;
}

/**
 * The plugin libraries the build's options name, each with its sha256. A session hashes them when
 * the build starts, as the worker loads them (pluginsAtLaunch), so a library replaced during the
 * build (even by a FIFO) is neither reopened nor recorded as it is later; the reuse key of the
 * next build hashes it again, so such an engine is rebuilt rather than wrongly reused.
 */
export async function pluginLibraries(options: ValidatedBuild['options']): Promise<EngineManifest['pluginLibraries']> {
  const out: EngineManifest['pluginLibraries'] = [];
  for (const p of pluginLibraryPaths(options)) {
    const sha256 = await sha256File(p);
    if (sha256 === null) throw new Error(`the plugin library ${p} is gone`);
    out.push({ path: p, sha256 });
  }
  return out;
}

/** Builds the manifest of a succeeded build from the engine now at its output path. */
export async function makeManifest(src: ManifestSource): Promise<EngineManifest> {
  const { build, view, finished } = src;
  const engineSha = await sha256File(build.outputPath);
  if (engineSha === null) throw new Error(`the engine ${build.outputPath} is gone`);
  const engineBytes = (await fs.promises.stat(build.outputPath)).size;
  const model = await (src.modelAtLaunch ?? modelDigest(build.modelPath, build.summary.externalData.files));
  const started = view.started;
  const info = build.backendInfo;
  const cache = finished.cache ?? view.cache;
  const cachePath = build.options.timingCache ?? build.options.pinnedCache;
  const options = normalizeOptions(build.options);
  const detail = info.detail ?? {};
  const identity = engineIdentity(build.backend, info, started);
  const manifest: EngineManifest = {
    formatVersion: MANIFEST_FORMAT_VERSION,
    tool: { name: 'trt-build-studio', version: packageVersion() },
    buildId: src.buildId,
    createdAt: new Date().toISOString(),
    backend: build.backend,
    tensorrt: identity.tensorrt,
    gpu: {
      ...identity.gpu,
      uuid: gpuUuidOf(info, started?.device ?? (build.backend === 'tensorrt' ? options.device : null)),
      device: started?.device ?? (build.backend === 'tensorrt' ? options.device : null),
    },
    // The NVIDIA driver's version as NVML reports it (tensorrt); null where it is not known.
    driverVersion: info.cudaDriver?.driverVersion ?? null,
    cudaVersion: detail.cudaRuntime ? (/\(([^)]+)\)\s*$/.exec(detail.cudaRuntime)?.[1] ?? null) : null,
    options,
    compatibility: { hardwareCompatibility: options.hardwareCompatibility, versionCompatible: options.versionCompatible },
    pluginLibraries: await (src.pluginsAtLaunch ?? pluginLibraries(build.options)),
    model: {
      path: build.modelPath,
      fileName: build.summary.fileName,
      sha256: model.sha256,
      bytes: model.bytes,
      externalData: build.summary.externalData.files,
      inputs: build.summary.inputs,
      outputs: build.summary.outputs,
    },
    timingCache: cachePath
      ? {
          path: cachePath,
          sha256Before: src.cacheSha256Before,
          sha256After: await sha256File(cachePath),
          hits: cache?.hits ?? null,
          misses: cache?.misses ?? null,
          entriesBefore: cache?.entriesBefore ?? null,
          entriesAfter: cache?.entriesAfter ?? null,
        }
      : null,
    build: {
      wallMs: finished.durationMs,
      phases: topLevelPhases(view),
      // Every row too when the build asked for it (the manifestRows option).
      ...(build.options.manifestRows ? { rows: allRows(view) } : {}),
    },
    engine: { file: path.basename(build.outputPath), bytes: engineBytes, sha256: engineSha },
    layerInfo: src.layerInfo ?? null,
    pinnedCache: build.options.pinnedCache && src.cacheSha256Before ? { path: build.options.pinnedCache, sha256: src.cacheSha256Before } : null,
    ...(build.defaultShapes?.length ? { defaultShapes: build.defaultShapes } : {}),
  };
  return EngineManifest.parse(manifest);
}

let tmpCounter = 0;

/** Writes JSON to `dest`: a temp file in the same folder, fsync, rename (never half written). */
export async function writeJsonAtomic(dest: string, value: unknown): Promise<void> {
  // Only a regular file is replaced: a FIFO, a folder or a link someone put at the path is theirs,
  // and so (in a shared sticky folder) is a file of another user.
  const there = await fs.promises.lstat(dest).catch(() => undefined);
  if (there && !there.isFile()) throw new Error(`${dest} is ${there.isSymbolicLink() ? 'a symbolic link' : kindOf(there)}, not a file this build wrote: it is left as it is`);
  refusePlanted(dest, 'manifest');
  const tmp = `${tempPrefix(dest, process.pid)}${++tmpCounter}`;
  try {
    const fh = await fs.promises.open(tmp, 'wx', 0o644);
    try {
      await fh.writeFile(`${JSON.stringify(value, null, 2)}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.promises.rename(tmp, dest);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true });
    throw e;
  }
}

/** Writes `manifest` beside `enginePath` (atomically); returns its path. */
export async function writeManifest(enginePath: string, manifest: EngineManifest): Promise<string> {
  const dest = manifestPathFor(enginePath);
  await writeJsonAtomic(dest, manifest);
  return dest;
}

/**
 * The engine's layer information (layer-info.ts: IEngineInspector's JSON), beside the engine before
 * the manifest, which names it with its sha256. Simulated builds: written here from the model's
 * graph. TensorRT builds: the adapter wrote it after the engine (trt_layer_info.cc), removing any
 * earlier one first, so a file there now is this build's; none when TensorRT could not give it
 * (the build log says why).
 */
export async function writeLayerInfo(build: ValidatedBuild): Promise<EngineManifest['layerInfo']> {
  const file = layersPathFor(build.outputPath);
  if (build.backend === 'simulated') {
    const bindings = [...build.summary.inputs.map((i) => i.name), ...build.summary.outputs.map((o) => o.name)];
    // Strongly typed (the option, or TensorRT 11): no precision flag; the model's own float type
    // decides, so a float16 model's reducible layers run FP16 as its flag would make them.
    const o = normalizeOptions(build.options);
    const typed = o.precision.length === 0 ? buildExpectedPrecision(build) : undefined;
    await writeJsonAtomic(file, simulatedLayerInformation(build.layers, typed ? { ...o, precision: [typed] } : o, bindings));
    return { file: path.basename(file), sha256: (await sha256File(file))!, source: 'simulated' };
  }
  const sha256 = await sha256File(file);
  return sha256 === null ? null : { file: path.basename(file), sha256, source: 'IEngineInspector' };
}

/** The precision a build asked for (apps/shared/build-layers.ts), from its options, model and TensorRT version. */
export function buildExpectedPrecision(build: Pick<ValidatedBuild, 'options' | 'summary' | 'backendInfo'>) {
  return expectedPrecision(build.options, build.summary, backendCapabilities(build.backendInfo)?.stronglyTypedImplied === true);
}

/**
 * build.finished's `layers` from the layer information just written beside the engine; undefined
 * when there is none or it cannot be read (the build stands; `layers` says why on the command line).
 */
export function readBuildLayerFacts(build: Pick<ValidatedBuild, 'outputPath' | 'options' | 'summary' | 'backendInfo'>): BuildLayersFacts | undefined {
  try {
    const read = readEngineLayers(readBoundedText(layersPathFor(build.outputPath), 'layer information'));
    return buildLayersFacts(read, buildExpectedPrecision(build));
  } catch {
    return undefined;
  }
}

export type ManifestRead = { ok: true; manifest: EngineManifest; path: string } | { ok: false; path: string; kind: 'no-manifest' | 'bad-manifest'; message: string };

/** Reads and validates the manifest beside `enginePath`. */
export function readManifest(enginePath: string): ManifestRead {
  const p = manifestPathFor(enginePath);
  let text: string;
  try {
    const fd = openRegularFileSync(p);
    if (fd === null) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
    try {
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, path: p, kind: 'no-manifest', message: code === 'ENOENT' ? `no manifest beside the engine (${p})` : `cannot read ${p}: ${(e as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, path: p, kind: 'bad-manifest', message: `${p} is not JSON: ${(e as Error).message}` };
  }
  const parsed = EngineManifest.safeParse(json);
  if (!parsed.success) return { ok: false, path: p, kind: 'bad-manifest', message: `${p} is not a valid manifest: ${describeZodError(parsed.error)}` };
  return { ok: true, manifest: parsed.data, path: p };
}

/** Removes the manifest and layer information beside `enginePath` (an engine removed takes them along). */
export function removeManifest(enginePath: string): void {
  fs.rmSync(manifestPathFor(enginePath), { force: true });
  fs.rmSync(layersPathFor(enginePath), { force: true });
}
