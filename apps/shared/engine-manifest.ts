// The engine manifest: `<engine>.manifest.json`, written beside every engine a build produces
// (docs/engines.md). It says what the engine was built from (model bytes, options, shapes, plugin
// libraries), with what (TensorRT and adapter versions, GPU, driver, CUDA) and how the build went
// (wall time, top-level phases, timing cache before and after), and it names the engine's own
// size and sha256: a manifest describes exactly one engine's bytes, so an engine replaced without
// its manifest (a crash between the two writes) is "unknown", never "fits".
//
// This module holds the schema, the canonical form of build options, the reuse key's material and
// the pure check (manifest + this machine → fits / needs rebuild / unknown). Hashing files and
// probing the machine happen in apps/service (engine-manifest-file.ts, engine-check.ts): this
// module imports nothing but zod, so every surface can validate and explain a manifest.
import { z } from 'zod';
import { BUILD_OPTION_TABLE, BUILD_OPTIONS, MANIFEST_FORMAT_1_ORDER, type ManifestSpec, type OptionEntry } from './build-options.js';
import { BackendName, BuildOptions, TensorInfo, type BackendInfo, type BuildOptionsInput } from './protocol.js';

/** Bumped on any incompatible change of the manifest's shape; a reader refuses other versions. */
export const MANIFEST_FORMAT_VERSION = 1 as const;
export const MANIFEST_SUFFIX = '.manifest.json';

/** Where the manifest of `enginePath` lives: beside it, same name plus ".manifest.json". */
export function manifestPathFor(enginePath: string): string {
  return `${enginePath}${MANIFEST_SUFFIX}`;
}

export const LAYERS_SUFFIX = '.layers.json';

/** Where an engine's layer information is saved: beside it, same name plus ".layers.json". */
export function layersPathFor(enginePath: string): string {
  return `${enginePath}${LAYERS_SUFFIX}`;
}

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected a sha256 in lower-case hex');

// ───────────────────────── the canonical options, from the options table ─────────────────────────
// Which options the manifest records and how (their value when left out, lists sorted or not) is
// said once, per entry of the options table (`manifest`, ManifestSpec in build-options.ts); the
// schema, normalizeOptions and optionsFromManifest below are derived from it.

type Entry = (typeof BUILD_OPTION_TABLE)[number];
type SpecOf<E> = E extends { manifest: infer M } ? M : E extends { engineIdentity: true } ? { whenGiven: true } : { notRecorded: true };
/** A list of choices is recorded as a list of strings (recordedType); other values as the option's type. */
type Recorded<T> = T extends readonly (infer U)[] ? (U extends string ? string : U)[] : T;
type ValueOf<E extends Entry> = Recorded<Exclude<z.output<E['schema']>, undefined>>;
type NullOf<E> = SpecOf<E> extends { unset: null } | { nullable: true } ? null : never;
type AlwaysRecorded = { [E in Entry as SpecOf<E> extends { unset: unknown } | { list: unknown } | { byName: true } ? E['field'] : never]: ValueOf<E> | NullOf<E> };
type RecordedWhenGiven = { [E in Entry as SpecOf<E> extends { whenGiven: true } ? E['field'] : never]?: ValueOf<E> };

/**
 * Every build option in one canonical form: each field present (its `unset` where the request left
 * it out; null where TensorRT picks by itself, e.g. the workspace limit), lists sorted where order
 * does not matter, shape maps keyed in name order; the table's `whenGiven` options only when given,
 * so the reuse key of a build without them is what it was before they existed. Two requests that
 * build the same engine normalize to the same object.
 */
export type NormalizedOptions = AlwaysRecorded & RecordedWhenGiven;

/** A recorded entry's spec (an identity option without one: recorded when given); undefined: not recorded here. */
function specOf(e: OptionEntry): Exclude<ManifestSpec, { elsewhere: string }> | undefined {
  const spec = e.manifest ?? (e.engineIdentity === true ? { whenGiven: true as const } : undefined);
  return spec && !('elsewhere' in spec) ? spec : undefined;
}

const RECORDED: ReadonlyArray<{ field: string; entry: OptionEntry; spec: Exclude<ManifestSpec, { elsewhere: string }> }> = (() => {
  const recorded = BUILD_OPTIONS.flatMap((entry) => {
    const spec = specOf(entry);
    return spec ? [{ field: entry.field, entry, spec }] : [];
  });
  const rank = (f: string) => (MANIFEST_FORMAT_1_ORDER.includes(f) ? MANIFEST_FORMAT_1_ORDER.indexOf(f) : MANIFEST_FORMAT_1_ORDER.length);
  // A stable sort: the options recorded after format 1 keep the table's order.
  return recorded.sort((a, b) => rank(a.field) - rank(b.field));
})();

/**
 * The type of an option's value as the manifest checks it: the kind of value (a whole number, a
 * string of the option's choices, a list, a shape map), not the option's finer rules (ranges, spec
 * syntax). A manifest records a build that passed them then; a rule tightened later must not make
 * the record unreadable.
 */
function recordedType(schema: z.ZodType): z.ZodType {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return recordedType(def.innerType as z.ZodType);
    case 'pipe':
      return recordedType(def.out as z.ZodType);
    case 'number':
      return (schema as z.ZodNumber).format === 'safeint' ? z.number().int() : z.number();
    case 'string':
      return z.string();
    case 'boolean':
      return z.boolean();
    case 'enum':
      return z.enum((schema as z.ZodEnum<Record<string, string>>).options as [string, ...string[]]);
    case 'array': {
      // A list of choices (precision flags) as strings: a choice a later release drops still reads.
      const element = recordedType(def.element as z.ZodType);
      return z.array(element instanceof z.ZodEnum ? z.string() : element);
    }
    case 'record':
      // Shape maps: the range objects as the protocol defines them (ShapeRange, ShapeValueRange).
      return z.record(z.string(), def.valueType as z.ZodType);
    default:
      throw new Error(`engine manifest: no recorded type for a ${def.type} option schema`);
  }
}

function fieldSchema(entry: OptionEntry, spec: Exclude<ManifestSpec, { elsewhere: string }>): z.ZodType {
  const t = recordedType(entry.schema);
  if ('whenGiven' in spec) return t.optional();
  if (!('unset' in spec)) return t;
  const value = spec.unset === null || spec.nullable ? t.nullable() : t;
  return spec.olderManifestsLack ? value.default(spec.unset as never) : value;
}

/** The schema of the canonical options (typed as NormalizedOptions; its `shape` lists the fields in their order). */
export const NormalizedOptions = z.object(Object.fromEntries(RECORDED.map(({ field, entry, spec }) => [field, fieldSchema(entry, spec)]))) as unknown as z.ZodType<
  NormalizedOptions,
  Partial<NormalizedOptions>
> & { shape: Record<string, z.ZodType> };

/**
 * Options the manifest records that cannot change the engine's bytes or where it loads (how much
 * is logged; for the simulator, how long it takes): neither `check` nor the reuse key looks at
 * them. Which options shape the engine is said once, in the options table (`engineIdentity`);
 * the table's other such options are not recorded at all (the reasons are written there).
 */
export const OPTIONS_NOT_SHAPING_ENGINE: ReadonlyArray<string> = BUILD_OPTIONS.filter((e) => e.engineIdentity !== true).map((e) => e.field);

function sortedRecord<T>(r: Record<string, T> | undefined): Record<string, T> {
  if (!r) return {};
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k]]),
  );
}

/** What an always-recorded option stands at when the request leaves it out. */
function unsetValue(spec: Extract<ManifestSpec, { unset: unknown }>, o: Record<string, unknown>): unknown {
  // e.g. inferCacheMisses turns detailed profiling verbosity on (protocol.ts): the engine is built that way.
  return spec.impliedBy && o[spec.impliedBy.option] === true ? spec.impliedBy.value : spec.unset;
}

export function normalizeOptions(options: BuildOptions): NormalizedOptions {
  const o = options as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const { field, spec } of RECORDED) {
    const v = o[field];
    if ('whenGiven' in spec) {
      if (v !== undefined) out[field] = v;
    } else if ('byName' in spec) out[field] = sortedRecord(v as Record<string, unknown> | undefined);
    else if ('list' in spec) out[field] = spec.list === 'sorted' ? [...((v as string[] | undefined) ?? [])].sort() : [...((v as unknown[] | undefined) ?? [])];
    else out[field] = v ?? unsetValue(spec, o);
  }
  return out as NormalizedOptions;
}

export const ManifestPhase = z.object({
  name: z.string(),
  /** Busy time of the phase (its instances' spans together), ms. */
  ms: z.number().nonnegative(),
  /** Instances started. */
  count: z.number().int().nonnegative(),
});
export type ManifestPhase = z.infer<typeof ManifestPhase>;

export const ManifestRow = ManifestPhase.extend({
  /** The row's name path, outermost first. */
  path: z.array(z.string()),
});
export type ManifestRow = z.infer<typeof ManifestRow>;

export const EngineManifest = z.object({
  formatVersion: z.literal(MANIFEST_FORMAT_VERSION),
  tool: z.object({ name: z.literal('trt-build-studio'), version: z.string() }),
  /** The build that wrote the engine (service build id) and when it finished (ISO 8601). */
  buildId: z.string(),
  createdAt: z.string(),
  backend: BackendName,
  tensorrt: z.object({
    /** The TensorRT library version the engine was built with; simulated: the version it emulates. */
    version: z.string(),
    /** The header version the adapter was compiled against (tensorrt); null when not known. */
    adapterHeaderVersion: z.string().nullable(),
    /** simulated: the simulator's own version ("sim-1"); null for TensorRT. */
    simulator: z.string().nullable(),
  }),
  gpu: z.object({
    name: z.string().nullable(),
    computeCapability: z.string().nullable(),
    uuid: z.string().nullable(),
    device: z.number().int().nullable(),
  }),
  /** NVIDIA driver and CUDA runtime versions; null where the backend cannot tell. */
  driverVersion: z.string().nullable(),
  cudaVersion: z.string().nullable(),
  options: NormalizedOptions,
  /** Hardware and version compatibility, as built (these decide where the engine may load). */
  compatibility: z.object({
    hardwareCompatibility: z.enum(['none', 'ampere_plus', 'same_compute_capability']),
    /** Built with kVERSION_COMPATIBLE (the versionCompatible option): loads on a later TensorRT of the same major. */
    versionCompatible: z.boolean(),
  }),
  /**
   * The plugin libraries the build loaded or serialized (staticPlugins, dynamicPlugins,
   * pluginsToSerialize; each once, in that order), each with its sha256.
   */
  pluginLibraries: z.array(z.object({ path: z.string(), sha256: Sha256 })),
  model: z.object({
    path: z.string(),
    fileName: z.string(),
    /** sha256 over the graph file's bytes, then each external data file's, in `externalData` order. */
    sha256: Sha256,
    /** The graph file plus its external data. */
    bytes: z.number().int().nonnegative(),
    externalData: z.array(z.string()),
    inputs: z.array(TensorInfo),
    outputs: z.array(TensorInfo),
  }),
  timingCache: z
    .object({
      path: z.string(),
      /** null: there was no cache file before the build (or none after). */
      sha256Before: Sha256.nullable(),
      sha256After: Sha256.nullable(),
      hits: z.number().int().nullable(),
      misses: z.number().int().nullable(),
      entriesBefore: z.number().int().nullable(),
      entriesAfter: z.number().int().nullable(),
    })
    .nullable(),
  build: z.object({
    wallMs: z.number().nonnegative(),
    /** Top-level phases, in the order they started. */
    phases: z.array(ManifestPhase),
    /** Every row of the phase tree, depth first; present when asked for (the manifestRows option). */
    rows: z.array(ManifestRow).optional(),
  }),
  engine: z.object({ file: z.string(), bytes: z.number().int().nonnegative(), sha256: Sha256 }),
  /**
   * The engine's layer information, saved beside it (`<engine>.layers.json`): per layer its type,
   * precision, tactic and format. Simulated builds derive it from the model's graph; TensorRT's
   * comes from IEngineInspector. null: none was saved.
   */
  layerInfo: z
    .object({ file: z.string(), sha256: Sha256, source: z.enum(['simulated', 'IEngineInspector']) })
    .nullable()
    .optional(),
  /** A pinned build (--pinned-cache): the timing cache it was built from and had to hit in full. */
  pinnedCache: z.object({ path: z.string(), sha256: Sha256 }).nullable().optional(),
  /** A reused build: the build whose stored engine this is, and the reuse key it matched. */
  reusedFrom: z.object({ buildId: z.string(), key: z.string() }).optional(),
  /**
   * Inputs the request gave no shapes (or shape-tensor values) for, built as trtexec builds them:
   * each dynamic dimension 1 (each value 1), min = opt = max. `options.shapes` / `shapeValues`
   * hold the same values; this says they were not asked for. Absent: every shape was given.
   */
  defaultShapes: z.array(z.object({ input: z.string(), kind: z.enum(['shapes', 'shapeValues']), value: z.array(z.number().int()) })).optional(),
});
export type EngineManifest = z.infer<typeof EngineManifest>;

// ──────────────────────────── identity and reuse key ────────────────────────────

/** What the backend a build runs on says about the engine it will make: versions and GPU. */
export function engineIdentity(
  backend: BackendName,
  info: BackendInfo,
  started?: { backendVersion?: string; gpu?: string | null; computeCapability?: string },
): Pick<EngineManifest, 'tensorrt'> & { gpu: { name: string | null; computeCapability: string | null } } {
  const simulated = backend === 'simulated';
  return {
    tensorrt: {
      version: simulated ? (info.emulates ?? started?.backendVersion ?? 'unknown') : (info.library?.version ?? started?.backendVersion ?? info.version ?? 'unknown'),
      adapterHeaderVersion: info.adapter?.headerVersion ?? null,
      simulator: simulated ? (started?.backendVersion ?? info.version ?? null) : null,
    },
    gpu: { name: started?.gpu ?? info.gpu?.name ?? null, computeCapability: started?.computeCapability ?? info.gpu?.computeCapability ?? null },
  };
}

/** What decides whether a stored engine can stand in for a build (docs/engines.md, "Reuse"). */
export interface ReuseKeyInput {
  backend: BackendName;
  tensorrt: EngineManifest['tensorrt'];
  gpu: { name: string | null; computeCapability: string | null };
  options: NormalizedOptions;
  modelSha256: string;
  pluginLibraries: Array<{ sha256: string }>;
  /** A pinned build's timing cache digest: a pinned engine stands only for builds pinned the same way. */
  pinnedCacheSha256?: string | null;
}

/** The plugin libraries a build loads or serializes, each once: staticPlugins, dynamicPlugins, then pluginsToSerialize. */
export function pluginLibraryPaths(o: Pick<BuildOptions, 'staticPlugins' | 'dynamicPlugins' | 'pluginsToSerialize'>): string[] {
  return [...new Set([...(o.staticPlugins ?? []), ...(o.dynamicPlugins ?? []), ...(o.pluginsToSerialize ?? [])])];
}

/**
 * The reuse key's input for a build about to run: this machine's identity, the request's options
 * and the digests of the files they name (plugin libraries, a pinned cache), which `digestOf`
 * gives (the service hashes them first). One function for every surface and the farm, and the
 * one test/contract/engine-identity.test.ts walks every option of the table through.
 */
export function reuseKeyInputFor(
  identity: Pick<ReuseKeyInput, 'backend' | 'tensorrt' | 'gpu'>,
  options: BuildOptions,
  modelSha256: string,
  digestOf: (file: string) => string,
): ReuseKeyInput {
  return {
    ...identity,
    options: normalizeOptions(options),
    modelSha256,
    pluginLibraries: pluginLibraryPaths(options).map((p) => ({ path: p, sha256: digestOf(p) })),
    pinnedCacheSha256: options.pinnedCache ? digestOf(options.pinnedCache) : null,
  };
}

/**
 * The canonical text the reuse key is the sha256 of: the options that shape the engine, the
 * model's digest, TensorRT and adapter versions, the plugin libraries' digests, and as much of the
 * GPU's identity as the engine's hardware compatibility requires (the model without it, the
 * compute capability with "same_compute_capability", neither with "ampere_plus").
 */
export function reuseKeyMaterial(k: ReuseKeyInput): string {
  const shaping = Object.fromEntries(Object.entries(k.options).filter(([name]) => !OPTIONS_NOT_SHAPING_ENGINE.includes(name)));
  const hw = k.options.hardwareCompatibility;
  const gpu =
    hw === 'ampere_plus'
      ? 'ampere_plus'
      : hw === 'same_compute_capability'
        ? { computeCapability: k.gpu.computeCapability }
        : { name: k.gpu.name, computeCapability: k.gpu.computeCapability };
  return JSON.stringify({
    v: MANIFEST_FORMAT_VERSION,
    backend: k.backend,
    tensorrt: { version: k.tensorrt.version, adapterHeaderVersion: k.tensorrt.adapterHeaderVersion, simulator: k.tensorrt.simulator },
    gpu,
    options: shaping,
    model: k.modelSha256,
    plugins: k.pluginLibraries.map((p) => p.sha256).sort(),
    pinned: k.pinnedCacheSha256 ?? null,
  });
}

// ─────────────────────────────── the check ───────────────────────────────

/** Every reason `check` can give for a rebuild (docs/engines.md; each is tested in apps/service/test/check-reasons.test.ts). */
export const REBUILD_REASON_KINDS = ['tensorrt-version', 'compute-capability', 'gpu-model', 'driver', 'model', 'option', 'shape-range', 'plugin'] as const;
/** Every fact whose absence makes the answer "unknown". */
export const UNKNOWN_REASON_KINDS = ['no-engine', 'no-manifest', 'bad-manifest', 'manifest-mismatch', 'no-backend', 'no-gpu'] as const;

/** Why an engine needs a rebuild; `was` is the manifest's value, `now` this machine's or request's. */
export interface RebuildReason {
  kind: (typeof REBUILD_REASON_KINDS)[number];
  /** What changed, in words: "TensorRT version", "option optLevel", "shape range of input x". */
  what: string;
  was: string;
  now: string;
}

/** What is missing for an answer. */
export interface UnknownReason {
  kind: (typeof UNKNOWN_REASON_KINDS)[number];
  message: string;
}

export type CheckVerdict = 'fits' | 'rebuild' | 'unknown';
export const CHECK_EXIT_CODES: Record<CheckVerdict, number> = { fits: 0, rebuild: 1, unknown: 3 };

export interface CheckResult {
  verdict: CheckVerdict;
  engine: string;
  manifest: string;
  reasons: RebuildReason[];
  missing: UnknownReason[];
  /** Things checked against nothing (no model file to hash), said so the answer is not over-read. */
  notes: string[];
  /** What the engine was built from, when a manifest was read: enough to build it again ("Rebuild"). */
  built?: { buildId: string; modelPath: string; options: BuildOptionsInput };
}

/**
 * The build options a manifest's canonical options stand for, as a request would give them:
 * defaults and nulls left out, so a form opened with them shows only what was chosen.
 */
export function optionsFromManifest(m: Pick<EngineManifest, 'backend' | 'options' | 'timingCache' | 'pinnedCache'>): BuildOptionsInput {
  const o = m.options as Record<string, unknown>;
  const out: Record<string, unknown> = { backend: m.backend };
  for (const { field, spec } of RECORDED) {
    const v = o[field];
    if (v === undefined || v === null) continue;
    if ('byName' in spec) {
      if (Object.keys(v as object).length) out[field] = v;
    } else if ('list' in spec) {
      if ((v as unknown[]).length) out[field] = v;
    } else if ('whenGiven' in spec || v !== unsetValue(spec, o)) out[field] = v;
  }
  if (m.pinnedCache) out.pinnedCache = m.pinnedCache.path;
  else if (m.timingCache) out.timingCache = m.timingCache.path;
  return out as BuildOptionsInput;
}

/** This machine as `check` sees it: the backend the engine's manifest names, from listBackends. */
export interface CheckEnvironment {
  backend: BackendInfo | undefined;
  driverVersion?: string | null;
}

/** What the caller measured and asked: the model's digest now, the request's options. */
export interface CheckInputs {
  /** sha256 of the model (graph + external data) as it is now, with the path it was read from. */
  model?: { path: string; sha256: string };
  /** Build options given with the check: compared, defaults included, with the manifest's. */
  options?: BuildOptions;
  /** Plugin library path → its sha256 now (null: the file is gone). */
  pluginHashes?: Record<string, string | null>;
  /** With `options` naming a pinnedCache: that file's sha256 now (null: it is gone). */
  pinnedCacheSha256?: string | null;
}

/** Compares version strings numerically, part by part ("10.9" < "10.16"); non-numbers as text. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.\-+]/);
  const pb = b.split(/[.\-+]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '0';
    const y = pb[i] ?? '0';
    const nx = Number(x);
    const ny = Number(y);
    const c = Number.isFinite(nx) && Number.isFinite(ny) ? nx - ny : x.localeCompare(y);
    if (c !== 0) return c < 0 ? -1 : 1;
  }
  return 0;
}

const show = (v: unknown): string => (v === null || v === undefined ? '(default)' : typeof v === 'string' ? v : JSON.stringify(v));

/** The TensorRT version this machine would load the engine with; simulated: the version emulated. */
export function runtimeVersionOf(b: BackendInfo): string | undefined {
  return b.name === 'simulated' ? b.emulates : (b.library?.version ?? b.version);
}

/**
 * The check itself, pure: the manifest (already matched to the engine's bytes), this machine and
 * the caller's inputs → every reason the engine needs a rebuild, or what is missing to say.
 */
export function checkAgainst(m: EngineManifest, env: CheckEnvironment, inputs: CheckInputs): Pick<CheckResult, 'reasons' | 'missing' | 'notes'> {
  const reasons: RebuildReason[] = [];
  const missing: UnknownReason[] = [];
  const notes: string[] = [];
  const b = env.backend;
  const runtime = b?.available ? runtimeVersionOf(b) : undefined;
  if (!b || !b.available || !runtime) {
    missing.push({
      kind: 'no-backend',
      message: `no ${m.backend === 'tensorrt' ? 'TensorRT library' : 'simulated backend'} here to load the engine with${b?.reason ? `: ${b.reason}` : ''}`,
    });
  } else if (runtime !== m.tensorrt.version) {
    // A version-compatible engine loads on a later TensorRT of the same major (NVIDIA's promise
    // for kVERSION_COMPATIBLE; assumed here, not observed: docs/engines.md). Never on an older
    // runtime, nor across majors.
    const sameMajor = runtime.split('.')[0] === m.tensorrt.version.split('.')[0];
    const later = compareVersions(runtime, m.tensorrt.version) > 0;
    if (m.compatibility.versionCompatible && sameMajor && later) {
      const lean = m.options.excludeLeanRuntime ? ', through a lean runtime the loader must supply (built with excludeLeanRuntime)' : ' through the lean runtime it embeds';
      notes.push(
        `TensorRT ${runtime} differs from the ${m.tensorrt.version} the engine was built with; it is version-compatible, so it loads on this later ${runtime.split('.')[0]}.x${lean} (NVIDIA's documented promise, not tested here)`,
      );
    } else {
      const what = m.compatibility.versionCompatible
        ? `TensorRT version (the engine is version-compatible, which covers only later ${m.tensorrt.version.split('.')[0]}.x versions)`
        : 'TensorRT version';
      reasons.push({ kind: 'tensorrt-version', what, was: m.tensorrt.version, now: runtime });
    }
  }
  if (m.backend === 'tensorrt' && b?.available) {
    const gpu = b.gpu;
    if (!gpu) {
      missing.push({ kind: 'no-gpu', message: 'no GPU could be probed here, so the compute capability and GPU model cannot be compared' });
    } else {
      const hw = m.compatibility.hardwareCompatibility;
      const was = m.gpu.computeCapability;
      if (was) {
        if (hw === 'ampere_plus') {
          if (compareVersions(gpu.computeCapability, '8.0') < 0) {
            reasons.push({ kind: 'compute-capability', what: 'compute capability (hardware-compatible: Ampere or later)', was, now: gpu.computeCapability });
          }
        } else if (gpu.computeCapability !== was) {
          reasons.push({ kind: 'compute-capability', what: 'compute capability', was, now: gpu.computeCapability });
        }
      }
      // Without hardware compatibility an engine is built for one GPU model.
      if (hw === 'none' && m.gpu.name && gpu.name !== m.gpu.name) {
        reasons.push({ kind: 'gpu-model', what: 'GPU model (the engine is not hardware-compatible)', was: m.gpu.name, now: gpu.name });
      }
    }
    if (m.driverVersion && env.driverVersion && compareVersions(env.driverVersion, m.driverVersion) < 0) {
      reasons.push({ kind: 'driver', what: 'NVIDIA driver (older than the one the engine was built with)', was: m.driverVersion, now: env.driverVersion });
    }
  }
  if (inputs.model) {
    if (inputs.model.sha256 !== m.model.sha256) {
      reasons.push({ kind: 'model', what: `model ${inputs.model.path} (sha256 of the graph and its external data)`, was: m.model.sha256, now: inputs.model.sha256 });
    }
  } else {
    notes.push(`the model was not compared (no model file given, and ${m.model.path} is not readable)`);
  }
  if (inputs.options) {
    const now = normalizeOptions(inputs.options);
    // Both sides' keys: the fields recorded only when given (`whenGiven`) may be on either.
    for (const key of [...new Set([...Object.keys(m.options), ...Object.keys(now)])] as Array<keyof NormalizedOptions>) {
      if (OPTIONS_NOT_SHAPING_ENGINE.includes(key)) continue;
      if (key === 'shapes' || key === 'shapeValues') {
        const names = new Set([...Object.keys(m.options[key]), ...Object.keys(now[key])]);
        // Built with default shapes for an input the request also leaves out: built the same way again.
        const defaulted = new Set((m.defaultShapes ?? []).filter((d) => d.kind === key).map((d) => d.input));
        for (const name of [...names].sort()) {
          const a = m.options[key][name];
          const c = now[key][name];
          if (c === undefined && defaulted.has(name)) continue;
          if (JSON.stringify(a) !== JSON.stringify(c)) {
            const fmt = (r?: { min: number[]; opt: number[]; max: number[] }) => (r ? `${r.min.join('x')}/${r.opt.join('x')}/${r.max.join('x')}` : '(none)');
            reasons.push({ kind: 'shape-range', what: `${key === 'shapes' ? 'shape range' : 'shape values'} of input ${name}`, was: fmt(a), now: fmt(c) });
          }
        }
        continue;
      }
      if (JSON.stringify(m.options[key]) !== JSON.stringify(now[key])) {
        reasons.push({ kind: 'option', what: `option ${key}`, was: show(m.options[key]), now: show(now[key]) });
      }
    }
    // A pinned build stands for the cache it was pinned to, by its bytes (the path may move).
    const pinWas = m.pinnedCache ? m.pinnedCache.sha256 : null;
    const pinNow = inputs.options.pinnedCache ? (inputs.pinnedCacheSha256 ?? '(missing)') : null;
    if (pinWas !== pinNow) {
      const pin = (p: string | undefined, sha: string | null) => (sha === null ? '(not pinned)' : `${p} (sha256 ${sha})`);
      reasons.push({
        kind: 'option',
        what: 'option pinnedCache (the timing cache the build is pinned to)',
        was: pin(m.pinnedCache?.path, pinWas),
        now: pin(inputs.options.pinnedCache, pinNow),
      });
    }
  } else {
    notes.push('the build options were not compared (give them to check, as to build)');
  }
  for (const p of m.pluginLibraries) {
    const now = inputs.pluginHashes?.[p.path];
    if (now === undefined) continue;
    if (now !== p.sha256) reasons.push({ kind: 'plugin', what: `plugin library ${p.path}`, was: p.sha256, now: now ?? '(missing)' });
  }
  return { reasons, missing, notes };
}

/** The answer's wire form (HTTP, MCP structured content, `check --json`). */
export const CheckResultSchema = z.object({
  verdict: z.enum(['fits', 'rebuild', 'unknown']),
  engine: z.string(),
  manifest: z.string(),
  reasons: z.array(
    z.object({
      kind: z.enum(REBUILD_REASON_KINDS),
      what: z.string(),
      was: z.string(),
      now: z.string(),
    }),
  ),
  missing: z.array(z.object({ kind: z.enum(UNKNOWN_REASON_KINDS), message: z.string() })),
  notes: z.array(z.string()),
  built: z.object({ buildId: z.string(), modelPath: z.string(), options: z.record(z.string(), z.unknown()) }).optional(),
});

/** The verdict of a check: any missing fact makes it unknown only when nothing already says rebuild. */
export function verdictOf(reasons: RebuildReason[], missing: UnknownReason[]): CheckVerdict {
  if (reasons.length > 0) return 'rebuild';
  return missing.length > 0 ? 'unknown' : 'fits';
}

/** One line per reason: "TensorRT version: 10.16.0 → 11.1.0". */
export function formatReason(r: RebuildReason): string {
  return `${r.what}: was ${r.was}, now ${r.now}`;
}
