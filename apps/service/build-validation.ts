// Everything checked before a build is queued, so that a build which cannot succeed fails in
// milliseconds with a message naming the problem, not after minutes in TensorRT.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BuildOptions,
  describeZodError,
  type BackendInfo,
  type BackendName,
  type Dim,
  type LayerInfo,
  type ModelSummary,
  type ShapeRange,
  type ShapeValueRange,
} from '../shared/protocol.js';
import { engineFileName } from '../shared/engine-name.js';
import { ATOMIC_TEMP_SUFFIX_MAX_BYTES, NAME_MAX_BYTES, TIMING_CACHE_SUFFIX_MAX_BYTES, utf8Length } from '../shared/file-names.js';
import { backendCapabilities, versionProblems, type OptionNamer } from '../shared/trt-capabilities.js';
import { ServiceError, type StartBuildInput } from './api.js';
import { readModel } from './model/model-reader.js';
import { ensurePrivateDir } from './private-dir.js';
import { checkPluginLibraries, refuseWriteIntoPluginDirs, type PluginPolicy } from './plugin-libraries.js';
import { checkTimingCacheFile } from './timing-cache-file.js';
import { checkWritePaths, probeWritable } from './writable-path.js';
import { manifestPathFor } from '../shared/engine-manifest.js';

export interface ValidatedBuild {
  modelPath: string;
  outputPath: string;
  options: BuildOptions;
  backend: BackendName;
  backendInfo: BackendInfo;
  summary: ModelSummary;
  layers: LayerInfo[];
  timeBudgetSeconds?: number;
  /** Inputs the request gave no shapes (or shape-tensor values) for, filled as trtexec fills them (applyDefaultShapes). */
  defaultShapes?: DefaultShape[];
  /**
   * Said before the build starts, a `log` warning each on the build's stream (build-session.ts):
   * the model reader's notes (nodes reordered, local functions expanded), the default shapes used.
   */
  warnings?: string[];
}

const bad = (msg: string) => new ServiceError('bad_input', msg);
const fmtShape = (s: Dim[]) => `[${s.join(', ')}]`;

function checkPathString(p: unknown, what: string): string {
  if (typeof p !== 'string' || p.length === 0) throw bad(`${what} is required`);
  if (p.includes('\0')) throw bad(`${what} contains a NUL byte`);
  return path.resolve(p);
}

export function resolveBackend(choice: BuildOptions['backend'], backends: BackendInfo[]): BackendInfo {
  const find = (n: BackendName) => backends.find((b) => b.name === n);
  if (choice === 'auto') {
    const trt = find('tensorrt');
    if (trt?.available) return trt;
    const sim = find('simulated');
    if (sim?.available) return sim;
    throw bad(`no build backend is available: ${backends.map((b) => `${b.name}: ${b.reason ?? 'unavailable'}`).join('; ')}`);
  }
  const b = find(choice);
  if (!b?.available) throw bad(`the ${choice} backend is not available: ${b?.reason ?? 'not built into this addon'}`);
  return b;
}

/** A dynamic input the build gave no shapes for, with example min/opt/max dims to suggest. */
export interface ShapeExample {
  name: string;
  min: number[];
  opt: number[];
  max: number[];
}

/**
 * How the build options name shapes, for HTTP, MCP and the language server: the `shapes` field in
 * its string form. Command-line surfaces restate the suggestion in their own flags (restate()).
 */
export function optionShapesSuggestion(examples: ShapeExample[]): string {
  const spec = (e: ShapeExample) => JSON.stringify(`${e.name}:${[e.min, e.opt, e.max].map((d) => d.join('x')).join('/')}`);
  return `give "shapes" for ${examples.length > 1 ? 'them' : 'it'} (min/opt/max), e.g. "shapes": [${examples.map(spec).join(', ')}]`;
}

/**
 * Bad shapes (an unknown input, a wrong rank, min > max, a shape tensor whose values cannot be
 * defaulted). Dynamic inputs given none are no longer among them: they build with default
 * shapes as trtexec's do (applyDefaultShapes). `missing` stays for a surface that names inputs
 * it cannot default; the message then suggests the build options' syntax, and a command line
 * restates it with its own flags, e.g. trtexec's --minShapes/--optShapes/--maxShapes.
 */
export class ShapesError extends ServiceError {
  constructor(
    readonly problems: string[],
    /** The part about the inputs without shapes (without its suggestion), when there are some. */
    readonly missing?: { text: string; examples: ShapeExample[] },
  ) {
    super('bad_input', ShapesError.compose(problems, missing, optionShapesSuggestion));
  }

  /** The same message with the suggestion written by `suggest`. */
  restate(suggest: (examples: ShapeExample[]) => string): string {
    return ShapesError.compose(this.problems, this.missing, suggest);
  }

  private static compose(problems: string[], missing: ShapesError['missing'], suggest: (examples: ShapeExample[]) => string): string {
    return [...problems, ...(missing ? [`${missing.text}: ${suggest(missing.examples)}`] : [])].join('\n');
  }
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * The shapes given, against the model's inputs. `_valued` (inputs given shape-tensor values) is
 * kept for callers; inputs given nothing are applyDefaultShapes' business.
 */
export function checkShapes(summary: ModelSummary, shapes: Record<string, ShapeRange> | undefined, _valued: string[] = []): void {
  const problems: string[] = [];
  const inputs = new Map(summary.inputs.map((i) => [i.name, i]));
  for (const [name, r] of Object.entries(shapes ?? {})) {
    const input = inputs.get(name);
    if (!input) {
      problems.push(`shapes given for unknown input "${name}"; the model's inputs are: ${[...inputs.keys()].map((n) => `"${n}"`).join(', ') || '(none)'}`);
      continue;
    }
    const rank = input.shape.length;
    const wrong = (['min', 'opt', 'max'] as const).filter((k) => r[k].length !== rank);
    if (wrong.length) {
      problems.push(
        `shapes for "${name}" have the wrong rank: ${wrong.map((k) => `${k} ${r[k].join('x')} has ${r[k].length} dims`).join(', ')}, but the input has ${rank}: ${fmtShape(input.shape)}`,
      );
      continue;
    }
    input.shape.forEach((d, i) => {
      const [a, b, c] = [r.min[i], r.opt[i], r.max[i]];
      if (typeof d === 'number' && (a !== d || b !== d || c !== d)) {
        problems.push(`"${name}" dimension ${i} is fixed at ${d} in the model, but the shapes give ${a}/${b}/${c}`);
      } else if (!(a <= b && b <= c)) {
        problems.push(`"${name}" dimension ${i} (${d}): min ${a} <= opt ${b} <= max ${c} does not hold`);
      }
    });
    // Each profile shape's element count must fit TensorRT's int64 volume (2^63-1): dims that
    // each pass can still multiply past it, and a build would fail (or overflow) deep inside TensorRT.
    for (const k of ['min', 'opt', 'max'] as const) {
      const volume = r[k].reduce((v, d) => v * BigInt(Math.max(0, Math.trunc(d))), 1n);
      if (volume > INT64_MAX) problems.push(`shapes for "${name}": ${k} ${r[k].join('x')} has ${volume} elements, more than TensorRT's int64 volume (2^63-1) holds`);
    }
  }
  // Inputs without shapes are not a problem: applyDefaultShapes fills them as trtexec does.
  if (problems.length) throw new ShapesError(problems);
}

/** An input the request named no shapes (or shape-tensor values) for, and what the build used instead. */
export interface DefaultShape {
  input: string;
  /** `shapes`: dims (min = opt = max); `shapeValues`: a shape tensor's values (min = opt = max). */
  kind: 'shapes' | 'shapeValues';
  value: number[];
}

/**
 * What trtexec does for an input with dynamic dimensions and no --minShapes/--optShapes/
 * --maxShapes (samples/common/sampleEngines.cpp, setupNetworkAndConfig: "Dynamic dimensions
 * required for input: …, but no shapes were provided. Automatically overriding shape to: …"):
 * each dynamic dimension 1, fixed ones as they are, min = opt = max; a shape tensor's values all 1
 * (one for a scalar, as many as its fixed length for rank 1). Written into `options` (so the
 * worker, the record and the manifest's options carry them) and returned, a warning each.
 * A shape tensor whose length is not fixed cannot be filled (trtexec would size a vector by -1):
 * ShapesError asking for its values. Shape tensors are the model reader's guess
 * (shapeTensorInputs); TensorRT decides for real.
 */
export function applyDefaultShapes(summary: ModelSummary, options: BuildOptions): DefaultShape[] {
  const out: DefaultShape[] = [];
  const problems: string[] = [];
  const tensors = new Set(summary.shapeTensorInputs ?? []);
  const inputs = new Map(summary.inputs.map((i) => [i.name, i]));
  for (const name of tensors) {
    if (options.shapeValues?.[name] || options.shapes?.[name]) continue;
    const input = inputs.get(name);
    if (!input) continue;
    const length = input.shape.length === 0 ? 1 : typeof input.shape[0] === 'number' ? input.shape[0] : undefined;
    if (length === undefined) {
      problems.push(
        `"${name}" ${fmtShape(input.shape)} looks like a shape-tensor input and has no values; its length is not fixed, so no default can be chosen (trtexec fills each value with 1 for a fixed length): give its values in shapeValues`,
      );
      continue;
    }
    const value = new Array<number>(length).fill(1);
    options.shapeValues = { ...options.shapeValues, [name]: { min: value, opt: value, max: value } };
    out.push({ input: name, kind: 'shapeValues', value });
  }
  if (problems.length) throw new ShapesError(problems);
  for (const d of summary.dynamicInputs) {
    if (options.shapes?.[d.name] || options.shapeValues?.[d.name] || tensors.has(d.name)) continue;
    const input = inputs.get(d.name);
    if (!input) continue;
    const value = input.shape.map((dim) => (typeof dim === 'number' && dim > 0 ? dim : 1));
    options.shapes = { ...options.shapes, [d.name]: { min: value, opt: value, max: value } };
    out.push({ input: d.name, kind: 'shapes', value });
  }
  return out;
}

/** The warning for one default shape, naming the input and what was used (`x: 1x3x224x224`), as trtexec warns. */
export function defaultShapeWarning(d: DefaultShape, summary: ModelSummary): string {
  const shape = summary.inputs.find((i) => i.name === d.input)?.shape ?? [];
  if (d.kind === 'shapeValues') {
    return `shape-tensor input "${d.input}" ${fmtShape(shape)} was given no values: built for ${d.input}: ${d.value.join(',')} (min = opt = max; trtexec fills each value with 1); give shapeValues to build for a range`;
  }
  return `dynamic input "${d.input}" ${fmtShape(shape)} was given no shapes: built for ${d.input}: ${d.value.join('x')} (each dynamic dimension 1, min = opt = max, as trtexec does); give shapes to build for a range`;
}

/**
 * trtexec passes shape-tensor values through the same --minShapes/--optShapes/--maxShapes flags
 * as dimensions, and so may a client: entries in `shapes` that name a shape-tensor input are its
 * values. Only possible when the model reader knows which inputs those are.
 */
export function moveShapeTensorValues(summary: ModelSummary, options: BuildOptions): void {
  const tensors = summary.shapeTensorInputs;
  if (!tensors || !options.shapes) return;
  for (const name of tensors) {
    const r = options.shapes[name];
    if (!r) continue;
    if (options.shapeValues?.[name]) throw bad(`"${name}" is given both in shapes and in shapeValues; it is a shape-tensor input, so give its values once`);
    options.shapeValues = { ...options.shapeValues, [name]: r };
    delete options.shapes[name];
  }
  if (Object.keys(options.shapes).length === 0) delete options.shapes;
}

/**
 * Shape-tensor values: for inputs the model reader takes for shape tensors (when it reports the
 * list; without it TensorRT decides), one value per element (dims[0] for rank 1, one for a
 * scalar), min <= opt <= max for each.
 */
export function checkShapeValues(summary: ModelSummary, values: Record<string, ShapeValueRange> | undefined): void {
  const problems: string[] = [];
  const inputs = new Map(summary.inputs.map((i) => [i.name, i]));
  const tensors = summary.shapeTensorInputs;
  for (const [name, r] of Object.entries(values ?? {})) {
    const input = inputs.get(name);
    if (!input) {
      problems.push(`shapeValues given for unknown input "${name}"; the model's inputs are: ${[...inputs.keys()].map((n) => `"${n}"`).join(', ') || '(none)'}`);
      continue;
    }
    if (tensors && !tensors.includes(name)) {
      problems.push(
        `shapeValues given for "${name}" ${fmtShape(input.shape)} ${input.elemType}, which is not a shape-tensor input ` +
          `(${tensors.length ? `those are: ${tensors.map((n) => `"${n}"`).join(', ')}` : 'the model has none'}); give its dimensions as shapes instead`,
      );
      continue;
    }
    const rank = input.shape.length;
    const expected = rank === 0 ? 1 : rank === 1 && typeof input.shape[0] === 'number' ? input.shape[0] : undefined;
    if (rank > 1) {
      problems.push(`shapeValues for "${name}": a shape tensor has rank 0 or 1, but the input is ${fmtShape(input.shape)}`);
      continue;
    }
    const counts = (['min', 'opt', 'max'] as const).map((k) => r[k].length);
    if (expected !== undefined ? counts.some((c) => c !== expected) : new Set(counts).size > 1) {
      problems.push(
        `shapeValues for "${name}" need ${expected !== undefined ? `${expected} value${expected === 1 ? '' : 's'} each (the input is ${fmtShape(input.shape)})` : 'the same number of values for min, opt and max'}, got min ${counts[0]}, opt ${counts[1]}, max ${counts[2]}`,
      );
      continue;
    }
    r.min.forEach((a, i) => {
      const [b, c] = [r.opt[i], r.max[i]];
      if (!(a <= b && b <= c)) problems.push(`shapeValues for "${name}" value ${i}: min ${a} <= opt ${b} <= max ${c} does not hold`);
    });
  }
  if (problems.length) throw bad(problems.join('\n'));
}

/**
 * Options the TensorRT version of the chosen backend lacks (or that TensorRT rejects together),
 * before any worker builds. `name` lets the CLI name its own flags.
 */
export function checkVersionGates(options: BuildOptions, backend: BackendInfo, name?: OptionNamer): void {
  const caps = backendCapabilities(backend);
  if (!caps) return; // no library found: resolveBackend has already refused this backend
  const problems = versionProblems(options, caps, name, backend.buildRoutes);
  if (problems.length) throw bad(problems.join('\n'));
}

/**
 * A file name the native layer will also write `suffixBytes` more bytes after (its temp file, a
 * timing cache's sidecars) must leave room for them in the file system's 255 bytes per name, or
 * the write fails with ENAMETOOLONG after the build. Refused here instead, before any work.
 */
export function checkNameLength(file: string, what: string, suffixBytes: number, writes: string): void {
  const name = path.basename(file);
  const bytes = utf8Length(name);
  const max = NAME_MAX_BYTES - suffixBytes;
  if (bytes > max) {
    throw bad(
      `${what} file name is too long: "${name}" is ${bytes} bytes of UTF-8, at most ${max} fit ` +
        `(file systems allow ${NAME_MAX_BYTES} bytes per name, and ${writes} beside it, up to ${suffixBytes} bytes longer). Choose a shorter name`,
    );
  }
}

export function checkOutputPath(outputPath: string, modelPath: string, summary: ModelSummary): void {
  checkNameLength(outputPath, 'output', ATOMIC_TEMP_SUFFIX_MAX_BYTES, 'the engine is first written to a temporary file "<name>.tmp-<pid>-<n>"');
  const target = checkWritePaths(outputPath, 'output', [{ path: manifestPathFor(outputPath), what: "the engine's manifest" }]);
  const protectedFiles = [modelPath, ...summary.externalData.files.map((f) => path.join(path.dirname(modelPath), f))];
  // Through a symbolic link too: the file written is the link's target.
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return p;
    }
  };
  if (protectedFiles.includes(outputPath) || protectedFiles.some((p) => real(p) === target)) {
    throw bad(`output path ${outputPath} would overwrite the model`);
  }
  probeWritable(path.dirname(target), 'output');
}

export function checkTimingCacheName(cachePath: string): void {
  checkNameLength(
    cachePath,
    'timingCache',
    TIMING_CACHE_SUFFIX_MAX_BYTES,
    'saving the cache writes "<name>.lock" and, when another build holds the lock, "<name>.pending-<pid>-<n>" through a temporary file',
  );
}

/**
 * Where an engine goes when the build names no path: `<model>.<gpu or "sim">.<TensorRT version>.engine`
 * in the output folder (see engineFileName), named after the model as the user knows it (an
 * upload's own name), so engines of different models, GPUs and versions sit side by side. A name
 * already on disk, or held by a build that has not finished (`taken`), gets the build id as a
 * suffix instead of overwriting it.
 */
export function defaultEnginePath(dir: string, modelName: string, backend: BackendInfo, id: string, taken: (p: string) => boolean = () => false): string {
  const plain = path.join(dir, engineFileName(path.basename(modelName), backend));
  if (!fs.existsSync(plain) && !taken(plain)) return plain;
  return path.join(dir, engineFileName(path.basename(modelName), backend, id));
}

/**
 * The longest time budget: Node's timers hold at most 2^31 - 1 ms (about 24.8 days) and fire at
 * once past it, so a larger budget would cancel the build immediately.
 */
export const MAX_TIME_BUDGET_SECONDS = 14 * 24 * 3600;

export async function validateBuild(
  input: StartBuildInput,
  ctx: {
    id: string;
    outputDir: string;
    /** Folders of the output folder's path that are the product's own, from it upwards (2 for the default trt-build-studio/engines). */
    outputDirLevels?: number;
    backends: () => Promise<BackendInfo[]>;
    /** Paths not to pick as the default output (builds that will write them). */
    taken?: (p: string) => boolean;
    /** Told the default output path the moment it is picked (no await in between), to hold it. */
    claim?: (p: string) => void;
    /** Which plugin libraries a build may name (default: any; a service passes its --plugin-dir policy). */
    pluginPolicy?: PluginPolicy;
  },
): Promise<ValidatedBuild> {
  const parsed = BuildOptions.safeParse(input.options ?? {});
  if (!parsed.success) throw bad(`invalid build options: ${describeZodError(parsed.error)}`);
  const options = parsed.data;
  const budget = input.timeBudgetSeconds;
  if (budget !== undefined && !(typeof budget === 'number' && Number.isFinite(budget) && budget > 0)) {
    throw bad(`timeBudgetSeconds must be a positive number of seconds, got ${String(budget)}`);
  }
  if (budget !== undefined && budget > MAX_TIME_BUDGET_SECONDS) {
    throw bad(`timeBudgetSeconds ${budget} is more than the limit of ${MAX_TIME_BUDGET_SECONDS} seconds (14 days); leave it out for no time budget`);
  }
  // The simulator really allocates and touches this much: more than the machine has would only
  // end with the kernel killing the worker (or its neighbours).
  if (options.simMemory !== undefined && options.simMemory > os.totalmem()) {
    throw bad(`simMemory ${options.simMemory} bytes is more than this machine's memory (${os.totalmem()} bytes)`);
  }
  const modelPath = checkPathString(input.modelPath, 'modelPath');
  const { summary, layers, notes } = await readModel(modelPath, { requireExternalData: true });
  moveShapeTensorValues(summary, options);
  checkShapes(summary, options.shapes, Object.keys(options.shapeValues ?? {}));
  checkShapeValues(summary, options.shapeValues);
  const defaultShapes = applyDefaultShapes(summary, options);
  const warnings = [...notes, ...defaultShapes.map((d) => defaultShapeWarning(d, summary))];
  // trtexec sets kEXCLUDE_LEAN_RUNTIME whenever it is asked for; TensorRT ignores it without
  // kVERSION_COMPATIBLE. Built the same way, with the warning nobody gets from trtexec.
  if (options.excludeLeanRuntime && !options.versionCompatible) {
    warnings.push(
      'excludeLeanRuntime without versionCompatible: TensorRT ignores it, so the engine is not version compatible and no lean runtime is left out (set versionCompatible too)',
    );
  }

  checkPluginLibraries(options, ctx.pluginPolicy);
  if (options.timingCache) {
    options.timingCache = checkPathString(options.timingCache, 'timingCache');
    if (options.timingCache === modelPath) throw bad(`the timing cache path ${modelPath} is the model itself`);
    checkTimingCacheName(options.timingCache);
    checkTimingCacheFile(options.timingCache, options.backend);
  }
  if (options.pinnedCache) {
    if (options.timingCache) throw bad('give either timingCache (read and updated) or pinnedCache (read only, every tactic must be in it), not both');
    options.pinnedCache = checkPathString(options.pinnedCache, 'pinnedCache');
    let st: fs.Stats;
    try {
      st = fs.statSync(options.pinnedCache);
    } catch {
      throw bad(`pinnedCache: no timing cache at ${options.pinnedCache} (a pinned build reads an existing cache; build once with timingCache to make one)`);
    }
    if (!st.isFile()) throw bad(`pinnedCache: ${options.pinnedCache} is not a regular file`);
    checkTimingCacheFile(options.pinnedCache, options.backend);
  }
  // An explicit output path is checked before asking for backends (which starts a worker).
  const explicitOutput = input.outputPath !== undefined ? checkPathString(input.outputPath, 'outputPath') : undefined;
  if (explicitOutput) checkOutputPath(explicitOutput, modelPath, summary);
  if (options.timingCache && options.timingCache === explicitOutput) {
    throw bad(`the timing cache and the engine cannot be the same file: ${explicitOutput}`);
  }
  const backendInfo = resolveBackend(options.backend, await ctx.backends());
  // With "auto", what the file must be depends on the backend that was chosen.
  if (options.timingCache && options.backend === 'auto') checkTimingCacheFile(options.timingCache, backendInfo.name);
  checkVersionGates(options, backendInfo);

  let outputPath: string;
  if (explicitOutput) {
    outputPath = explicitOutput;
  } else {
    // The engine store: private to this user (0700), never a folder someone else can write into.
    ensurePrivateDir(ctx.outputDir, 'engine', ctx.outputDirLevels ?? 1);
    outputPath = defaultEnginePath(ctx.outputDir, input.modelDisplayName ?? path.basename(modelPath), backendInfo, ctx.id, ctx.taken);
    ctx.claim?.(outputPath);
    checkOutputPath(outputPath, modelPath, summary);
  }
  // A client that could write an engine or a cache into a plugin folder could then name it as a
  // plugin library: builds never write where plugin libraries are loaded from.
  const policy = ctx.pluginPolicy ?? { kind: 'any' };
  refuseWriteIntoPluginDirs(policy, outputPath, 'output path');
  if (options.timingCache) refuseWriteIntoPluginDirs(policy, options.timingCache, 'timingCache');

  return {
    modelPath,
    outputPath,
    options,
    backend: backendInfo.name,
    backendInfo,
    summary,
    layers,
    timeBudgetSeconds: budget,
    ...(defaultShapes.length ? { defaultShapes } : {}),
    ...(warnings.length ? { warnings } : {}),
  };
}
