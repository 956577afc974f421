// What a TensorRT release can do, for every surface (service validation, CLI help and flags, the
// options form, "Copy as trtexec command"), so what the user is offered and what a build accepts
// cannot drift apart. The native layer owns these facts: each backend reports the capabilities of
// the release it builds with (BackendInfo.capabilities: for tensorrt the lower of the library that
// will run the build and the headers the adapter was compiled against, for the simulator the
// release it imitates), computed from native/trt-facts.json, the one list of TensorRT facts. This
// module reads them (backendCapabilities) and checks options against them (versionProblems); it
// writes no TensorRT version of its own. Where only a version string is at hand (a build record,
// a manifest, a backend object from an addon or farm worker that reports no capabilities),
// trtCapabilities reads the same facts file for that version; test/trt-facts.test.ts holds it to
// what the addon computes for every release.
import FACTS from '../../native/trt-facts.json';
import { knobsFromPatterns, routeProblems } from './build-routes.js';
import type { BackendCapabilities, BackendInfo, BuildOptions, Precision } from './protocol.js';

export interface TrtVersion {
  major: number;
  minor: number;
  patch: number;
}

export type HardwareCompatibility = NonNullable<BuildOptions['hardwareCompatibility']>;

/** A fact of native/trt-facts.json: the first release that has it ("10.8"); absent = every supported release. */
interface Since {
  since?: string;
  /** precisionFlags: the release that deprecated the flag itself. */
  deprecated?: string;
}
type Feature = 'weakTypingDeprecated' | 'weakTypingRemoved' | 'buildRoutes' | 'timingCacheQueryKeys' | 'streamBuild' | 'bestWithoutInt8OnCc103';
const facts = FACTS as unknown as {
  supportedMajors: number[];
  simulatedDefault: string;
  precisionFlags: Record<Precision, Since>;
  hardwareCompatibility: Record<HardwareCompatibility, Since>;
  features: Record<Feature, Required<Pick<Since, 'since'>>>;
};

/** The TensorRT majors this product supports (native/trt-facts.json), oldest first. */
export const SUPPORTED_TRT_MAJORS: readonly number[] = [...facts.supportedMajors].sort((a, b) => a - b);

/** What the simulated backend imitates when it does not say (older addons report no `emulates`). */
export const SIM_DEFAULT_TRT_VERSION: string = facts.simulatedDefault;

/** "10.3.0", "10.16.1.11", "11.1" → numbers; anything else → null. */
export function parseTrtVersion(s: string | undefined): TrtVersion | null {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?(?:\.\d+)*$/.exec((s ?? '').trim());
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) };
}

/** Whether release `v` has a fact that starts at `since` (a later major counts; none: every release). */
function releaseHas(v: TrtVersion, since: string | undefined): boolean {
  const s = parseTrtVersion(since);
  return !s || v.major > s.major || (v.major === s.major && v.minor >= s.minor);
}

/** The first release with a feature, a precision flag or a hardware compatibility level, as text ("10.9"). */
export function trtSince(what: { feature: Feature } | { precision: Precision } | { hardwareCompatibility: HardwareCompatibility }): string {
  const since =
    'feature' in what
      ? facts.features[what.feature].since
      : 'precision' in what
        ? facts.precisionFlags[what.precision]?.since
        : facts.hardwareCompatibility[what.hardwareCompatibility]?.since;
  return since ?? `${SUPPORTED_TRT_MAJORS[0]}.0`;
}

/** What a TensorRT release can do: what its backend reports (BackendCapabilities), with its major and minor. */
export interface TrtCapabilities extends BackendCapabilities {
  major: number;
  minor: number;
}

export const ALL_PRECISIONS: readonly Precision[] = ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'];

/**
 * Capabilities of a TensorRT release given only as a version string, from the native facts file
 * (the same computation as native/src/trt/trt_capabilities.h). An unparsable string gets the
 * release the simulator imitates by default; majors after the newest are treated like it.
 * Prefer backendCapabilities where a backend is at hand: its report is the native layer's own.
 */
export function trtCapabilities(version: string): TrtCapabilities {
  const v = parseTrtVersion(version) ?? (parseTrtVersion(SIM_DEFAULT_TRT_VERSION) as TrtVersion);
  const has = (f: Feature) => releaseHas(v, facts.features[f].since);
  const removed = has('weakTypingRemoved');
  const flags = (Object.entries(facts.precisionFlags) as Array<[Precision, Since]>).filter(([, f]) => !removed && releaseHas(v, f.since));
  return {
    version,
    major: v.major,
    minor: v.minor,
    precisions: flags.map(([p]) => p),
    deprecatedPrecisions: flags.filter(([, f]) => f.deprecated !== undefined && releaseHas(v, f.deprecated)).map(([p]) => p),
    weakTypingDeprecated: !removed && has('weakTypingDeprecated'),
    stronglyTypedImplied: removed,
    hardwareCompatibility: (Object.entries(facts.hardwareCompatibility) as Array<[HardwareCompatibility, Since]>).filter(([, l]) => releaseHas(v, l.since)).map(([h]) => h),
    buildRoutes: has('buildRoutes'),
    timingCacheKeyCount: has('timingCacheQueryKeys'),
    serializeToStream: has('streamBuild'),
    bestWithoutInt8OnCc103: has('bestWithoutInt8OnCc103'),
  };
}

/**
 * What the TensorRT release a backend builds with can do: its own report (the native layer's,
 * BackendInfo.capabilities), else (an addon or farm worker from before backends reported them, a
 * hand-made backend object) trtCapabilities of trtVersionOf. Undefined when no release is known
 * (tensorrt found no library).
 */
export function backendCapabilities(b: BackendInfo | undefined): TrtCapabilities | undefined {
  const reported = b?.capabilities;
  if (reported) {
    const v = parseTrtVersion(reported.version) ?? (parseTrtVersion(SIM_DEFAULT_TRT_VERSION) as TrtVersion);
    return { ...reported, major: v.major, minor: v.minor };
  }
  const version = trtVersionOf(b);
  return version ? trtCapabilities(version) : undefined;
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
          problems.push(`${name('precision', p)} needs TensorRT ${trtSince({ precision: p })} or newer; the build would run on ${v}.`);
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
    problems.push(
      `${name('hardwareCompatibility', hc)} "${hc}" needs TensorRT ${trtSince({ hardwareCompatibility: hc })} or newer; ${v} offers ${caps.hardwareCompatibility.join(', ')}.`,
    );
  }
  // excludeLeanRuntime without versionCompatible: accepted as trtexec accepts it (TensorRT ignores
  // the flag then); the build says so in a warning (build-validation.ts).
  if (o.buildRoute !== undefined) {
    if (!caps.buildRoutes) {
      problems.push(
        `${name('buildRoute')} needs TensorRT ${trtSince({ feature: 'buildRoutes' })} or newer (build routes); the build would run on ${v}. Leave it out to use the default route.`,
      );
    } else {
      problems.push(...routeProblems(o.buildRoute, knownRoutes ? knobsFromPatterns(knownRoutes) : undefined, name('buildRoute')));
    }
  }
  return problems;
}
