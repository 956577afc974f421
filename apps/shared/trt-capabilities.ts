// Which build options a TensorRT version has. Every surface (service validation, CLI help and
// flags, the options form, "Copy as trtexec command") asks this one module, so what the user is
// offered and what a build accepts cannot drift apart. Options are gated by name on the version
// TensorRT this backend can drive: the lower of the library that will run the build and the headers
// the adapter was compiled against (trtVersionOf). A 10.16-built adapter driving a 10.3 library
// must not pass a flag that 10.3 lacks, and a 10.3-built adapter cannot pass one its headers lack.
import { knobsFromPatterns, routeProblems } from './build-routes.js';
import type { BackendInfo, BuildOptions, Precision } from './protocol.js';

export interface TrtVersion {
  major: number;
  minor: number;
  patch: number;
}

/** What the simulated backend imitates when it does not say (older addons report no `emulates`). */
export const SIM_DEFAULT_TRT_VERSION = '10.16.0';

/** "10.3.0", "10.16.1.11", "11.1" → numbers; anything else → null. */
export function parseTrtVersion(s: string | undefined): TrtVersion | null {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?(?:\.\d+)*$/.exec((s ?? '').trim());
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) };
}

const atLeast = (v: TrtVersion, major: number, minor: number) => v.major > major || (v.major === major && v.minor >= minor);

export type HardwareCompatibility = NonNullable<BuildOptions['hardwareCompatibility']>;

export interface TrtCapabilities {
  /** The version string these capabilities were derived from, e.g. "10.3.0". */
  version: string;
  major: number;
  minor: number;
  /** Weakly typed precision flags (BuilderFlag kFP16 ...) this version has; none on 11. */
  precisions: Precision[];
  /** Flags that exist but are deprecated: kINT4/kFP4 only enable plugin I/O types (since 10.12). */
  deprecatedPrecisions: Precision[];
  /** 10.12+: every weakly typed precision flag is deprecated (removed in 11); builds warn for each. */
  weakTypingDeprecated: boolean;
  /** 11.x: weak typing is gone; every network is strongly typed. */
  stronglyTypedImplied: boolean;
  hardwareCompatibility: HardwareCompatibility[];
  /** 11.1+: IBuilderConfig::setBuildRoute. */
  buildRoutes: boolean;
  /** 10.8+: ITimingCache::queryKeys, so cache entry counts can be reported. */
  timingCacheKeyCount: boolean;
  /** 10.13+: buildSerializedNetworkToStream (the engine is not held in memory). */
  serializeToStream: boolean;
}

export const ALL_PRECISIONS: readonly Precision[] = ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'];

/**
 * Capabilities of a TensorRT version. An unparsable string gets the newest 10.x behaviour the
 * simulator imitates by default; majors after 11 are treated like the newest known (11.x).
 */
export function trtCapabilities(version: string): TrtCapabilities {
  const v = parseTrtVersion(version) ?? (parseTrtVersion(SIM_DEFAULT_TRT_VERSION) as TrtVersion);
  const eleven = v.major >= 11;
  const precisions: Precision[] = eleven ? [] : ['fp16', 'bf16', 'int8', 'fp8'];
  if (!eleven && atLeast(v, 10, 1)) precisions.push('int4');
  if (!eleven && atLeast(v, 10, 8)) precisions.push('fp4');
  return {
    version,
    major: v.major,
    minor: v.minor,
    precisions,
    deprecatedPrecisions: !eleven && atLeast(v, 10, 12) ? precisions.filter((p) => p === 'int4' || p === 'fp4') : [],
    weakTypingDeprecated: !eleven && atLeast(v, 10, 12),
    stronglyTypedImplied: eleven,
    hardwareCompatibility: atLeast(v, 10, 9) ? ['none', 'ampere_plus', 'same_compute_capability'] : ['none', 'ampere_plus'],
    buildRoutes: atLeast(v, 11, 1),
    timingCacheKeyCount: atLeast(v, 10, 8),
    serializeToStream: atLeast(v, 10, 13),
  };
}

const compareVersions = (a: TrtVersion, b: TrtVersion) => a.major - b.major || a.minor - b.minor || a.patch - b.patch;

/**
 * The TensorRT version a build on this backend follows: for `tensorrt` the LOWER of the found
 * library's and the headers the adapter in use was compiled with (an option the library has but
 * the adapter's headers lack cannot be passed, and one the headers have but an older library lacks
 * would be refused); the imitated one for `simulated`. Undefined when tensorrt found no library.
 */
export function trtVersionOf(b: BackendInfo | undefined): string | undefined {
  if (!b) return undefined;
  if (b.name === 'simulated') return b.emulates ?? SIM_DEFAULT_TRT_VERSION;
  const lib = b.library?.version ?? (b.available ? b.version : undefined);
  const headers = b.adapter?.headerVersion;
  const [l, h] = [parseTrtVersion(lib), parseTrtVersion(headers)];
  if (l && h && compareVersions(h, l) < 0) return headers;
  return lib;
}

/**
 * The backend a choice resolves to, the way the service resolves it (auto: TensorRT when
 * available, else the simulator); undefined when the choice cannot run.
 */
export function chosenBackend(choice: BuildOptions['backend'] | undefined, backends: BackendInfo[]): BackendInfo | undefined {
  const find = (n: BackendInfo['name']) => backends.find((b) => b.name === n && b.available);
  if (choice === 'tensorrt' || choice === 'simulated') return find(choice);
  return find('tensorrt') ?? find('simulated');
}

export const PRECISION_REMOVED_ADVICE = 'TensorRT 11 builds strongly typed networks; cast or quantize the model offline (e.g. NVIDIA Model Optimizer)';

const PRECISION_ADDED: Partial<Record<Precision, string>> = { int4: '10.1', fp4: '10.8' };

/** How each option is called where the problem is reported (CLI flag spelling or option field). */
export type OptionNamer = (
  field: 'precision' | 'stronglyTyped' | 'hardwareCompatibility' | 'buildRoute' | 'versionCompatible' | 'excludeLeanRuntime' | LayerConstraintField,
  value?: string,
) => string;

/** Per-layer precision options: weakly typed networks only (TensorRT 10.x). */
type LayerConstraintField = 'precisionConstraints' | 'layerPrecisions' | 'layerOutputTypes';
const LAYER_CONSTRAINT_FIELDS: readonly LayerConstraintField[] = ['precisionConstraints', 'layerPrecisions', 'layerOutputTypes'];

/** Names as HTTP, MCP and the service know them: the BuildOptions fields. */
export const fieldNamer: OptionNamer = (field, value) => (field === 'precision' && value ? `precision "${value}"` : field);

/**
 * What the options ask that this TensorRT version cannot do, one sentence per problem naming the
 * option, the version and what to do instead. Empty when the options fit the version.
 * `knownRoutes`: the library's knob patterns (`-knob=[a|b]`, BackendInfo.buildRoutes), when it
 * could list them; a route is checked against them knob by knob (build-routes.ts).
 */
export function versionProblems(
  o: Pick<BuildOptions, 'precision' | 'stronglyTyped' | 'hardwareCompatibility' | 'buildRoute' | 'versionCompatible' | 'excludeLeanRuntime' | LayerConstraintField>,
  caps: TrtCapabilities,
  name: OptionNamer = fieldNamer,
  knownRoutes?: string[],
): string[] {
  const problems: string[] = [];
  const v = `TensorRT ${caps.version}`;
  const precision = o.precision ?? [];
  if (precision.length > 0) {
    const names = precision.map((p) => name('precision', p)).join(', ');
    if (caps.stronglyTypedImplied) {
      problems.push(`${names}: ${v} has no precision flags. ${PRECISION_REMOVED_ADVICE}.`);
    } else if (o.stronglyTyped) {
      problems.push(
        `${name('stronglyTyped')} cannot be combined with ${names}: a strongly typed network takes its precision from the model, and TensorRT rejects precision flags with it. Drop one of them.`,
      );
    } else {
      for (const p of precision) {
        if (!caps.precisions.includes(p)) {
          problems.push(`${name('precision', p)} needs TensorRT ${PRECISION_ADDED[p] ?? '10.0'} or newer; the build would run on ${v}.`);
        }
      }
    }
  }
  const constraints = LAYER_CONSTRAINT_FIELDS.filter((f) => o[f] !== undefined && !(f === 'precisionConstraints' && o[f] === 'none'));
  if (constraints.length > 0) {
    const names = constraints.map((f) => name(f)).join(', ');
    if (caps.stronglyTypedImplied) {
      problems.push(
        `${names}: ${v} has no per-layer precision constraints: networks are strongly typed, so each layer runs in the precision its tensors' types give it. ${PRECISION_REMOVED_ADVICE}.`,
      );
    } else if (o.stronglyTyped) {
      problems.push(`${name('stronglyTyped')} cannot be combined with ${names}: a strongly typed network takes each layer's precision from the model. Drop one of them.`);
    }
  }
  const hc = o.hardwareCompatibility;
  if (hc && !caps.hardwareCompatibility.includes(hc)) {
    problems.push(`${name('hardwareCompatibility', hc)} "${hc}" needs TensorRT 10.9 or newer; ${v} offers ${caps.hardwareCompatibility.join(', ')}.`);
  }
  // excludeLeanRuntime without versionCompatible: accepted as trtexec accepts it (TensorRT ignores
  // the flag then); the build says so in a warning (build-validation.ts).
  if (o.buildRoute !== undefined) {
    if (!caps.buildRoutes) {
      problems.push(`${name('buildRoute')} needs TensorRT 11.1 or newer (build routes); the build would run on ${v}. Leave it out to use the default route.`);
    } else {
      problems.push(...routeProblems(o.buildRoute, knownRoutes ? knobsFromPatterns(knownRoutes) : undefined, name('buildRoute')));
    }
  }
  return problems;
}
