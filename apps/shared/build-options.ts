// The table of build options: one entry per field of BuildOptions, saying everything every
// surface needs to know about it. The protocol schema (BuildOptions), the CLI's flags, parsing and
// help (apps/cli/build-args.ts), trtexec parsing and "Copy as trtexec command" (trtexec.ts), the
// options form's state, defaults, parsing and controls (apps/renderer/lib/options-form.ts,
// components/OptionsForm.tsx), the MCP/LSP tool schema (apps/surface/schemas.ts) and the flat request
// the addon reads (toNativeRequest in apps/worker/addon.ts) are all derived from it.
// Free of Node and DOM imports: it runs in the renderer, the worker, the service and Electron main.
//
// ── How to add a build option ──
//  1. Add one entry below, where its trtexec flag should appear in a copied command (the table's
//     order is the order of CLI help lines, trtexec flags and form controls within a group):
//       field     the camelCase name every surface uses (HTTP body, MCP, CLI --json, the form)
//       schema    its zod schema, `.optional()` (the protocol validates with exactly this)
//       unit      the unit of a number, when it has one ('MiB', 'KiB', 's', ...)
//       range     for numbers: the bounds the CLI, the form and trtexec check before the schema
//       doc       the description MCP's tools/list (and so the LSP's build command) shows
//       cli       its `build` flag: flag, arg, help, and how the value is read ('number' by range,
//                 'text', 'on' = a boolean flag setting true, 'off' = a boolean flag setting false,
//                 'list' = a repeatable text flag giving an array)
//       trtexec   its trtexec flag and how it reads and prints ('number', 'text', 'on', 'off'), or
//                 `pool` for a --memPoolSize pool; `missing` says what a copied command leaves
//                 out when trtexec has no equivalent (shown next to the copy)
//       form      its control: group (which fieldset), control ('number', 'decimal', 'checkbox',
//                 'select'), label, and for errors a name and what a valid value is
//       native    the key of the flat request the addon reads, with the unit conversion
//                 (`scale`: multiply by it, e.g. MiB → bytes), or `none` and why. The key must be a
//                 line of native/src/core/request_fields.def: the worker refuses an addon whose
//                 fields differ (checkRequestFields in apps/worker/addon.ts)
//       engineIdentity  true when the option can change the engine (then it is part of the
//                 manifest's canonical options and the reuse key), else { not: why }
//       manifest  how the manifest records it (ManifestSpec: its value when left out, lists
//                 sorted or not); an identity option without one is recorded only when given,
//                 which keeps every older engine's reuse key; engine-manifest.ts derives from it
//       sample    a valid value, which test/contract/option-table.test.ts sends through every
//                 surface and through the native request parser and back
//     A `custom` cli/trtexec/form kind means that surface handles the field by hand (shapes,
//     precision flags, the backend choice): look for the field's name in that surface's file.
//  2. Read it natively: one line in native/src/core/request_fields.def (key, kind, unset value,
//     unit, the TensorRT versions that have it, its lower bound); the C++ request member, its reader
//     from JS and its echo (echoBuildRequest) follow from that line.
//  3. The TensorRT call: where the backend applies it (native/src/trt/trt_backend.cc, or a
//     translation in trt_options.cc); the simulator's part, if it imitates one.
//  4. Version gates (an option only some TensorRT versions have) go in trt-capabilities.ts.
//  5. Tests: the table test walks the new entry through every surface by itself, and
//     test/contract/engine-identity.test.ts through the reuse key and `check`; add tests for
//     what the option does.
import { z } from 'zod';
import { OPTION_LIMITS } from './option-limits.js';
import { parseMemoryLimit, parseMemorySize } from './memory-size.js';
import {
  BackendChoice,
  ioFormatsProblem,
  layerTypesProblem,
  MemoryLimit,
  MemorySize,
  parseShapeSpec,
  parseSimFault,
  Precision,
  previewProblem,
  ShapeRange,
  ShapeValueRange,
  SimFault,
  specString,
  tacticSourcesProblem,
  type SimFaultKind,
} from './option-values.js';

/**
 * What a TensorRT version offers, as far as the table's gates need it (TrtCapabilities fits;
 * written out here so this module does not import trt-capabilities, which imports the protocol).
 */
export interface OptionGate {
  version: string;
  stronglyTypedImplied: boolean;
  buildRoutes: boolean;
  hardwareCompatibility: readonly string[];
}

/** Bounds of a number option; `kind` says whether it is a whole number or a (decimal) number of seconds. */
export type OptionRange =
  | { kind: 'int'; min: number; max?: number }
  | { kind: 'seconds'; max?: number }
  /** A memory size as typed ("20G", "512M", bytes); `auto` also takes "auto". */
  | { kind: 'bytes'; auto?: boolean; min?: undefined; max?: undefined };

export interface CliSpec {
  /** The long flag, without "--" (a 'custom' entry may have several, written by hand). */
  flag?: string;
  /** What follows the flag in help, e.g. "<MiB>". */
  arg?: string;
  /** How help writes the flag when not `--flag arg` (several flags for one field). */
  usage?: string;
  /** One help text ("\n" starts a continuation line), or one built for the TensorRT version in use. */
  help?: string | ((gate?: OptionGate) => string);
  /** Only listed in help when this says so (the version in use has the option). */
  shown?: (gate?: OptionGate) => boolean;
  /** 'simulator': listed under "Simulated backend only". */
  section?: 'simulator';
  /**
   * How the flag's text becomes the value; `fallback` is sent when the flag is absent. 'list': a
   * repeatable text flag, one array element per occurrence.
   */
  value: 'number' | 'text' | 'on' | 'off' | 'list' | 'custom';
  fallback?: string;
}

export type TrtexecSpec =
  | {
      flag: string;
      /** 'list': repeatable, `--flag=<value>` once per array element (trtexec's plugin flags). */
      value: 'number' | 'text' | 'on' | 'off' | 'list' | 'custom';
      /** false: read, never written (this product's own flags). */
      emit?: boolean;
      /** Other spellings trtexec reads as this flag ('on'/'off' flags: --vc for --versionCompatible); never written. */
      aliases?: readonly string[];
      /** Written only for a TensorRT version that has it. */
      emitWhen?: (gate?: OptionGate) => boolean;
      /** For 'text': the message when the value is empty (else an empty value is taken). */
      emptyError?: string;
      /** How `trtexec --help` lists it (for the TensorRT version in use); none: not listed. */
      help?: string | ((gate?: OptionGate) => string);
    }
  | {
      /** A --memPoolSize pool: `pool:<size>`, written in `unit`. */
      pool: string;
      unit: 'MiB' | 'KiB';
      /** false: read (for this product's own pool), never written. */
      emit?: boolean;
    };

export interface FormSpec {
  /** The fieldset the control sits in (OptionsForm lays the groups out). */
  group: 'top' | 'shapes' | 'precision' | 'pools' | 'build' | 'cache' | 'simulator';
  /**
   * number/decimal: a text field (kept as typed); text: a text field whose value is checked by the
   * entry's schema (trtexec-style specs); checkbox; select ('' = not set); custom: drawn by OptionsForm.
   */
  control: 'number' | 'decimal' | 'text' | 'checkbox' | 'select' | 'custom';
  label?: string;
  /** How errors name the field ("Workspace must be ..."), and what a valid value is. */
  name?: string;
  invalid?: string;
  placeholder?: string;
  title?: string;
  /** The value a new form starts with (a checkbox sends its value only when it differs). */
  initial?: string | boolean | number;
  /** A checkbox that sends its value even at `initial` (a toggle on by default: reuse). */
  alwaysSent?: boolean;
  /** select: [value, label] in order; `available` narrows them to the version in use. */
  choices?: ReadonlyArray<readonly [string, string]>;
  available?: (gate: OptionGate) => readonly string[];
  /** The label of the "not set" choice of a select. */
  unsetLabel?: string;
}

export type NativeSpec =
  | { key: string; scale?: number; toNative?: (value: never) => unknown; fromNative?: (value: never) => unknown }
  | { keys: readonly string[]; toNative: (value: never) => Record<string, unknown>; fromNative: (request: Record<string, unknown>) => unknown }
  | { none: string };

/**
 * How the engine manifest records an option among its canonical options (engine-manifest.ts:
 * NormalizedOptions, normalizeOptions, optionsFromManifest; docs/engines.md). An entry with
 * `engineIdentity: true` and no spec is recorded only when given (`whenGiven`), so a new option
 * leaves the reuse key of every build without it as it was.
 */
export type ManifestSpec =
  /**
   * Always recorded; `unset` when the request leaves it out: TensorRT's default (what it builds with
   * anyway), or null where TensorRT picks by itself. `impliedBy`: another option, when true, makes
   * the unset value this one instead. `olderManifestsLack`: added after manifests were first
   * written; a manifest without it reads as `unset`. `nullable`: a manifest may hold null for it.
   */
  | {
      unset: string | number | boolean | null;
      impliedBy?: { option: string; value: string | number | boolean };
      olderManifestsLack?: true;
      nullable?: true;
    }
  /** A list, [] when left out: 'sorted' when order does not matter, else kept 'as given'. */
  | { list: 'sorted' | 'as given' }
  /** A record of inputs, {} when left out, keyed in name order. */
  | { byName: true }
  /** Recorded only when given. */
  | { whenGiven: true }
  /** Shapes the engine but is recorded elsewhere in the manifest (said where). */
  | { elsewhere: string };

/**
 * The order the engine manifest (format 1) holds its canonical options in, frozen: the reuse key
 * is the sha256 of their JSON text, and a stored engine's key is recomputed from its manifest, so
 * moving one would change every key. Options recorded later follow in the table's order (so a new
 * option is never added here). engine-manifest.ts reads it.
 */
export const MANIFEST_FORMAT_1_ORDER: readonly string[] = [
  'optLevel',
  'workspaceMiB',
  'tacticDramMiB',
  'tacticSharedMemoryKiB',
  'shapes',
  'shapeValues',
  'stronglyTyped',
  'precision',
  'tf32',
  'profilingVerbosity',
  'hardwareCompatibility',
  'versionCompatible',
  'excludeLeanRuntime',
  'maxAuxStreams',
  'device',
  'buildRoute',
  'staticPlugins',
  'dynamicPlugins',
  'pluginsToSerialize',
  'maxGpuMemory',
  'inferCacheMisses',
  'verboseLog',
  'simSeed',
  'simDuration',
  'inputIOFormats',
  'outputIOFormats',
  'precisionConstraints',
  'layerPrecisions',
  'layerOutputTypes',
  'sparsity',
  'tacticSources',
  'previewFeatures',
  'avgTiming',
  'compilationCache',
  'dlaCore',
  'allowGPUFallback',
];

export interface OptionEntry {
  field: string;
  schema: z.ZodType;
  unit?: string;
  range?: OptionRange;
  doc?: string;
  /** What tools/list advertises when `schema` cannot be written as JSON Schema (preprocessing). */
  jsonSchema?: z.ZodType;
  cli?: CliSpec;
  trtexec?: TrtexecSpec;
  /**
   * trtexec has no equivalent: the warning shown next to a copied command that leaves the value
   * out (undefined: nothing is left out for this value and these options).
   */
  trtexecMissing?: (value: never, options: Record<string, unknown>) => string | undefined;
  form?: FormSpec;
  native: NativeSpec;
  /**
   * Whether the option can change the engine that is built, and so belongs to the engine's
   * identity (docs/engines.md): the manifest's canonical options, what `check` compares and the
   * reuse key. `true`, or why not (it only says how the build is watched, logged, limited or
   * stored). Required, so a new option cannot be left out of the reuse key by omission;
   * test/contract/engine-identity.test.ts walks every entry.
   */
  engineIdentity: true | { not: string };
  /** How the manifest's canonical options record it (ManifestSpec); absent: see ManifestSpec. */
  manifest?: ManifestSpec;
  sample: unknown;
}

const MiB = 1024 * 1024;
/** trtexec's --hardwareCompatibilityLevel words for this product's values. */
export const HARDWARE_TRTEXEC: Record<string, string> = { none: 'none', ampere_plus: 'ampere+', same_compute_capability: 'sameComputeCapability' };
const poolMiB = () => z.number().int().positive().max(OPTION_LIMITS.poolMiB, `at most ${OPTION_LIMITS.poolMiB} MiB (8 PiB)`).optional();
const int32 = { kind: 'int', min: 0, max: OPTION_LIMITS.int32 } as const;

/** Shapes: the record form, or trtexec-style strings ["x:1x3x224x224/4x3x224x224/8x3x224x224", ...]. */
const ShapesSchema = z
  .preprocess(
    (value, ctx) => {
      if (!Array.isArray(value)) return value;
      const out: Record<string, unknown> = {};
      for (const spec of value) {
        try {
          const [name, range] = parseShapeSpec(String(spec));
          out[name] = range;
        } catch (e) {
          ctx.addIssue({ code: 'custom', message: (e as Error).message });
        }
      }
      return out;
    },
    z.record(z.string(), ShapeRange),
  )
  .optional();

export const BUILD_OPTION_TABLE = [
  {
    field: 'backend',
    schema: BackendChoice.default('auto'),
    cli: { flag: 'backend', arg: '<b>', help: 'auto (default: TensorRT when present, else simulated) | tensorrt | simulated', value: 'text', fallback: 'auto' },
    trtexec: { flag: '--backend', value: 'text', emit: false },
    form: { group: 'top', control: 'custom', initial: 'auto' },
    native: { none: 'the service resolves the choice to the backend that runs the build (the request\'s "backend")' },
    engineIdentity: { not: "the backend that ran is recorded as the manifest's backend, which the reuse key and check compare" },
    sample: 'simulated',
  },
  {
    field: 'optLevel',
    schema: z.number().int().min(0).max(5).optional(),
    range: { kind: 'int', min: 0, max: 5 },
    cli: { flag: 'opt-level', arg: '<0-5>', help: 'builder optimization level (TensorRT default 3)', value: 'number' },
    trtexec: { flag: '--builderOptimizationLevel', value: 'number', help: '--builderOptimizationLevel=N (0-5)' },
    form: { group: 'top', control: 'custom', initial: 3 },
    native: { key: 'optLevel' },
    manifest: { unset: 3 },
    engineIdentity: true,
    sample: 4,
  },
  {
    field: 'workspaceMiB',
    schema: poolMiB(),
    doc: 'Workspace memory pool limit in MiB.',
    unit: 'MiB',
    range: { kind: 'int', min: 1, max: OPTION_LIMITS.poolMiB },
    cli: { flag: 'workspace', arg: '<MiB>', help: 'workspace memory pool limit', value: 'number' },
    trtexec: { pool: 'workspace', unit: 'MiB' },
    form: {
      group: 'pools',
      control: 'number',
      label: 'Workspace (MiB)',
      name: 'Workspace',
      invalid: 'must be a positive whole number of MiB',
      placeholder: 'default',
      initial: '',
    },
    native: { key: 'workspaceBytes', scale: MiB },
    manifest: { unset: null },
    engineIdentity: true,
    sample: 2048,
  },
  {
    field: 'tacticSharedMemoryKiB',
    schema: z.number().int().positive().max(OPTION_LIMITS.poolKiB, `at most ${OPTION_LIMITS.poolKiB} KiB (8 PiB)`).optional(),
    doc: "Tactic shared memory pool limit in KiB (trtexec's tacticSharedMem).",
    unit: 'KiB',
    range: { kind: 'int', min: 1, max: OPTION_LIMITS.poolKiB },
    cli: { flag: 'tactic-shared-memory', arg: '<KiB>', help: "tactic shared memory pool limit (trtexec's tacticSharedMem)", value: 'number' },
    trtexec: { pool: 'tacticSharedMem', unit: 'KiB' },
    form: {
      group: 'pools',
      control: 'number',
      label: 'Tactic shared memory (KiB)',
      name: 'Tactic shared memory',
      invalid: 'must be a positive whole number of KiB',
      placeholder: 'default',
      initial: '',
    },
    native: { key: 'tacticSharedMemoryBytes', scale: 1024 },
    manifest: { unset: null },
    engineIdentity: true,
    sample: 48,
  },
  {
    // Not a trtexec pool (no trtexec 10.x or 11.x has one): read from --memPoolSize for this
    // product's own option, and left out of a copied command with a warning.
    field: 'tacticDramMiB',
    schema: poolMiB(),
    doc: 'Tactic DRAM memory pool limit in MiB (no trtexec equivalent).',
    unit: 'MiB',
    range: { kind: 'int', min: 1, max: OPTION_LIMITS.poolMiB },
    cli: { flag: 'tactic-dram', arg: '<MiB>', help: 'tactic DRAM pool limit (no trtexec flag)', value: 'number' },
    trtexec: { pool: 'tacticDram', unit: 'MiB', emit: false },
    trtexecMissing: (mib: number) =>
      `Tactic DRAM (${mib} MiB) has no trtexec equivalent: trtexec's --memPoolSize has no tactic DRAM pool (only workspace, tacticSharedMem and DLA pools), so the command leaves it out.`,
    form: {
      group: 'pools',
      control: 'number',
      label: 'Tactic DRAM (MiB)',
      name: 'Tactic DRAM',
      invalid: 'must be a positive whole number of MiB',
      placeholder: 'default',
      initial: '',
    },
    native: { key: 'tacticDramBytes', scale: MiB },
    manifest: { unset: null },
    engineIdentity: true,
    sample: 512,
  },
  {
    field: 'shapes',
    schema: ShapesSchema,
    doc:
      'Per dynamic input, min/opt/max dims: {"input": {"min": [1,3,224,224], "opt": [4,3,224,224], "max": [8,3,224,224]}} ' +
      'or trtexec strings ["input:1x3x224x224/4x3x224x224/8x3x224x224"]. Required for every dynamic input.',
    jsonSchema: z.union([z.record(z.string(), ShapeRange), z.array(z.string())]).optional(),
    cli: {
      flag: 'shapes',
      arg: '<in:min/opt/max>',
      help: 'shapes of a dynamic input, e.g.\nx:1x3x224x224/4x3x224x224/8x3x224x224 (repeat per input, or\nseparate with commas); one shape means min = opt = max',
      value: 'custom',
    },
    trtexec: {
      flag: '--minShapes',
      value: 'custom',
      help:
        '--minShapes=spec --optShapes=spec --maxShapes=spec   e.g. input:1x3x224x224,mask:1x16 (also\n' +
        '                      shape-tensor values), each once; a missing one is filled in from the\n' +
        '                      others as trtexec does (with its warning); --shapes=spec is a fixed profile',
    },
    form: { group: 'shapes', control: 'custom' },
    native: { key: 'shapes' },
    manifest: { byName: true },
    engineIdentity: true,
    sample: { x: { min: [1, 3, 8, 8], opt: [2, 3, 16, 16], max: [4, 3, 32, 32] } },
  },
  {
    // Values of shape-tensor inputs (an int32/int64 input whose values, not dims, shape the
    // network): trtexec reads them from the same --minShapes/--optShapes/--maxShapes flags;
    // TensorRT takes them through IOptimizationProfile::setShapeValues(V2).
    field: 'shapeValues',
    schema: z.record(z.string(), ShapeValueRange).optional(),
    doc:
      "Values (not dims) of shape-tensor inputs (int32/int64, rank 0 or 1; see the model summary's shapeTensorInputs): " +
      '{"input": {"min": [1, 64], "opt": [4, 64], "max": [8, 64]}}, one number per element (dims[0] for rank 1, one for a ' +
      'scalar), may be 0 or negative. Shapes given for a shape-tensor input are taken as its values, as trtexec does.',
    cli: {
      flag: 'minShapes',
      usage: '--minShapes, --optShapes, --maxShapes <in:dims,...>',
      help: 'the same the way trtexec writes it, e.g. --minShapes x:1x3x224x224;\nfor shape-tensor inputs these give their values',
      value: 'custom',
    },
    trtexec: { flag: '--minShapes', value: 'custom' },
    form: { group: 'shapes', control: 'custom' },
    native: { key: 'shapeValues' },
    manifest: { byName: true },
    engineIdentity: true,
    sample: { n: { min: [1, -1], opt: [2, -1], max: [4, 0] } },
  },
  {
    field: 'timingCache',
    /** Read (ignoring mismatches) before the build and merged back after it. */
    schema: z.string().min(1).optional(),
    cli: { flag: 'timing-cache', arg: '<file>', help: 'timing cache to read and update (created when missing)', value: 'text' },
    trtexec: { flag: '--timingCacheFile', value: 'text', help: '--timingCacheFile=<file>' },
    form: { group: 'cache', control: 'custom', initial: '' },
    native: { key: 'timingCachePath' },
    engineIdentity: { not: "a cache only saves timing runs; its digests before and after are recorded (timingCache), and a pinned build's cache is in the key (pinnedCache)" },
    sample: '/caches/model.cache',
  },
  {
    field: 'stronglyTyped',
    schema: z.boolean().optional(),
    doc: 'Strongly typed network (precision from the model). Implied on TensorRT 11.',
    cli: {
      flag: 'strongly-typed',
      help: 'strongly typed network (precision from the model; not with precision flags)',
      shown: (gate) => !gate?.stronglyTypedImplied,
      value: 'on',
    },
    trtexec: { flag: '--stronglyTyped', value: 'on', emitWhen: (gate) => !gate?.stronglyTypedImplied, help: '--stronglyTyped' },
    form: { group: 'precision', control: 'custom', initial: false },
    native: { key: 'stronglyTyped' },
    manifest: { unset: false },
    engineIdentity: true,
    sample: true,
  },
  {
    // Weakly typed precision flags (TensorRT 10.x only; int4 from 10.1, fp4 from 10.8, both
    // deprecated since 10.12). Refused with stronglyTyped and on TensorRT 11 (see trt-capabilities).
    field: 'precision',
    schema: z.array(Precision).optional(),
    doc:
      'Weakly typed precision flags, TensorRT 10.x only (int4 from 10.1, fp4 from 10.8; both deprecated since 10.12 and only ' +
      'enable plugins with those I/O types). Refused on TensorRT 11 (networks are strongly typed: cast or quantize the ' +
      'model offline) and together with stronglyTyped. list_backends says which TensorRT version builds use.',
    cli: { value: 'custom' },
    trtexec: { flag: '--fp16', value: 'custom' },
    trtexecMissing: (p: Precision[], o) => (p.includes('fp4') && !o.stronglyTyped ? 'FP4 has no trtexec flag, so the command leaves it out.' : undefined),
    form: { group: 'precision', control: 'custom', initial: '' },
    native: { key: 'precision' },
    manifest: { list: 'sorted' },
    engineIdentity: true,
    sample: ['fp16', 'int8'],
  },
  {
    field: 'tf32',
    schema: z.boolean().optional(),
    doc: 'false disallows TF32 (trtexec --noTF32); TensorRT allows it by default.',
    cli: { flag: 'no-tf32', help: 'disallow TF32', value: 'off' },
    trtexec: { flag: '--noTF32', value: 'off', help: '--noTF32' },
    form: { group: 'precision', control: 'checkbox', label: 'TF32', title: "Off is trtexec's --noTF32: FP32 layers may not use TF32 Tensor Cores", initial: true },
    native: { key: 'tf32', toNative: (on: boolean) => (on ? 1 : 0), fromNative: (n: number) => n === 1 },
    manifest: { unset: true },
    engineIdentity: true,
    sample: false,
  },
  {
    // trtexec --precisionConstraints with --layerPrecisions/--layerOutputTypes: ILayer::setPrecision/
    // setOutputType plus kOBEY/kPREFER_PRECISION_CONSTRAINTS. Weakly typed networks only: TensorRT
    // 10.x (both flags deprecated since 10.12); refused on 11.x, where every network is strongly typed.
    field: 'precisionConstraints',
    schema: z.enum(['none', 'prefer', 'obey']).optional(),
    doc: 'TensorRT 10.x only: how the builder treats layerPrecisions/layerOutputTypes: obey (fail when it cannot), prefer (fall back with a warning), none (ignore them). Refused on 11.x (strongly typed).',
    cli: { flag: 'precision-constraints', arg: '<c>', help: 'none | prefer | obey: how layer precisions are held (TensorRT 10.x)', value: 'text' },
    trtexec: { flag: '--precisionConstraints', value: 'text', help: '--precisionConstraints=none|prefer|obey' },
    form: {
      group: 'precision',
      control: 'select',
      label: 'Precision constraints',
      name: 'Precision constraints',
      unsetLabel: 'default',
      choices: [
        ['none', 'none'],
        ['prefer', 'prefer'],
        ['obey', 'obey'],
      ],
      initial: '',
    },
    native: { key: 'precisionConstraints' },
    engineIdentity: true,
    sample: 'obey',
  },
  {
    field: 'layerPrecisions',
    schema: specString('layerPrecisions', (s) => layerTypesProblem(s, false)).optional(),
    doc: 'TensorRT 10.x only: compute precision per layer as trtexec writes it, "conv1:fp16,*:fp32" (* = every layer); needs precisionConstraints prefer or obey.',
    cli: { flag: 'layer-precisions', arg: '<spec>', help: 'per-layer precision, e.g. conv1:fp16,*:fp32 (TensorRT 10.x)', value: 'text' },
    trtexec: { flag: '--layerPrecisions', value: 'text', help: '--layerPrecisions=layer:type[,layer:type]' },
    form: {
      group: 'precision',
      control: 'text',
      label: 'Layer precisions',
      name: 'Layer precisions',
      invalid: 'is not valid',
      placeholder: 'conv1:fp16,*:fp32',
      title: "trtexec's --layerPrecisions (TensorRT 10.x, with precision constraints prefer or obey)",
      initial: '',
    },
    native: { key: 'layerPrecisions' },
    engineIdentity: true,
    sample: 'conv1:fp16,*:fp32',
  },
  {
    field: 'layerOutputTypes',
    schema: specString('layerOutputTypes', (s) => layerTypesProblem(s, true)).optional(),
    doc: 'TensorRT 10.x only: output types per layer, "conv1:fp16" or "split:fp16+fp32" (one per output); needs precisionConstraints prefer or obey.',
    cli: { flag: 'layer-output-types', arg: '<spec>', help: 'per-layer output types, e.g. conv1:fp16 (TensorRT 10.x)', value: 'text' },
    trtexec: { flag: '--layerOutputTypes', value: 'text', help: '--layerOutputTypes=layer:type[+type][,...]' },
    form: {
      group: 'precision',
      control: 'text',
      label: 'Layer output types',
      name: 'Layer output types',
      invalid: 'is not valid',
      placeholder: 'split:fp16+fp32',
      title: "trtexec's --layerOutputTypes (TensorRT 10.x, with precision constraints prefer or obey)",
      initial: '',
    },
    native: { key: 'layerOutputTypes' },
    engineIdentity: true,
    sample: 'split:fp16+fp32',
  },
  {
    // ITensor::setType/setAllowedFormats on the network's inputs (outputs), one entry per tensor in order.
    field: 'inputIOFormats',
    schema: specString('inputIOFormats', ioFormatsProblem).optional(),
    doc: 'Type and allowed formats of each network input in order, as trtexec writes them: "fp16:chw,int8:chw4+hwc8".',
    cli: { flag: 'input-io-formats', arg: '<spec>', help: 'type:format[+format] per input, in order, e.g. fp16:chw', value: 'text' },
    trtexec: { flag: '--inputIOFormats', value: 'text', help: '--inputIOFormats=type:fmt[+fmt][,...]' },
    form: {
      group: 'precision',
      control: 'text',
      label: 'Input I/O formats',
      name: 'Input I/O formats',
      invalid: 'is not valid',
      placeholder: 'fp16:chw',
      title: "trtexec's --inputIOFormats: type:format[+format] per network input, in order",
      initial: '',
    },
    native: { key: 'inputIOFormats' },
    engineIdentity: true,
    sample: 'fp16:chw,int8:chw4+hwc8',
  },
  {
    field: 'outputIOFormats',
    schema: specString('outputIOFormats', ioFormatsProblem).optional(),
    doc: 'Type and allowed formats of each network output in order, as trtexec writes them: "fp16:chw".',
    cli: { flag: 'output-io-formats', arg: '<spec>', help: 'type:format[+format] per output, in order, e.g. fp16:hwc8', value: 'text' },
    trtexec: { flag: '--outputIOFormats', value: 'text', help: '--outputIOFormats=type:fmt[+fmt][,...]' },
    form: {
      group: 'precision',
      control: 'text',
      label: 'Output I/O formats',
      name: 'Output I/O formats',
      invalid: 'is not valid',
      placeholder: 'fp16:chw',
      title: "trtexec's --outputIOFormats: type:format[+format] per network output, in order",
      initial: '',
    },
    native: { key: 'outputIOFormats' },
    engineIdentity: true,
    sample: 'fp16:chw',
  },
  {
    // BuilderFlag::kSPARSE_WEIGHTS. trtexec's "force" (rewrite the weights) is deprecated there and refused here.
    field: 'sparsity',
    schema: z.enum(['disable', 'enable']).optional(),
    doc: 'enable: let TensorRT use structured-sparsity kernels where weights are 2:4 sparse (BuilderFlag::kSPARSE_WEIGHTS).',
    cli: { flag: 'sparsity', arg: '<s>', help: 'disable | enable: structured-sparsity kernels for 2:4 sparse weights', value: 'text' },
    trtexec: { flag: '--sparsity', value: 'text', help: '--sparsity=disable|enable' },
    form: {
      group: 'precision',
      control: 'select',
      label: 'Sparsity',
      name: 'Sparsity',
      unsetLabel: 'default (disable)',
      choices: [
        ['disable', 'disable'],
        ['enable', 'enable'],
      ],
      initial: '',
    },
    native: { key: 'sparsity' },
    engineIdentity: true,
    sample: 'enable',
  },
  {
    field: 'profilingVerbosity',
    schema: z.enum(['layer_names_only', 'none', 'detailed']).optional(),
    cli: { flag: 'profiling-verbosity', arg: '<v>', help: 'layer_names_only | none | detailed', value: 'text' },
    trtexec: { flag: '--profilingVerbosity', value: 'custom', help: '--profilingVerbosity=layer_names_only|detailed|none (default, verbose: deprecated)' },
    form: {
      group: 'build',
      control: 'select',
      label: 'Profiling verbosity',
      unsetLabel: 'default',
      choices: [
        ['layer_names_only', 'layer_names_only'],
        ['detailed', 'detailed'],
        ['none', 'none'],
      ],
      initial: '',
    },
    native: { key: 'profilingVerbosity' },
    manifest: { unset: 'layer_names_only', impliedBy: { option: 'inferCacheMisses', value: 'detailed' } },
    engineIdentity: true,
    sample: 'detailed',
  },
  {
    field: 'hardwareCompatibility',
    schema: z.enum(['none', 'ampere_plus', 'same_compute_capability']).optional(),
    doc: 'same_compute_capability needs TensorRT 10.9+.',
    cli: {
      flag: 'hardware-compatibility',
      arg: '<h>',
      help: (gate) => (gate ? gate.hardwareCompatibility.join(' | ') : 'none | ampere_plus | same_compute_capability (10.9+)'),
      value: 'text',
    },
    trtexec: {
      flag: '--hardwareCompatibilityLevel',
      value: 'custom',
      help: (gate) =>
        `--hardwareCompatibilityLevel=${(gate ? gate.hardwareCompatibility : ['none', 'ampere_plus', 'same_compute_capability']).map((h) => HARDWARE_TRTEXEC[h] ?? h).join('|')}`,
    },
    form: {
      group: 'build',
      control: 'select',
      label: 'Hardware compatibility',
      name: 'Hardware compatibility',
      unsetLabel: 'default',
      choices: [
        ['none', 'none'],
        ['ampere_plus', 'ampere+'],
        ['same_compute_capability', 'same compute capability'],
      ],
      available: (gate) => gate.hardwareCompatibility,
      initial: '',
    },
    native: { key: 'hardwareCompatibility' },
    manifest: { unset: 'none' },
    engineIdentity: true,
    sample: 'ampere_plus',
  },
  {
    // trtexec --versionCompatible (alias --vc): BuilderFlag::kVERSION_COMPATIBLE, in every TensorRT
    // this product drives (10.3 and later), so it has no version gate. The engine is restricted
    // to lean-runtime operators and loads on later TensorRT versions of the same major
    // (docs/engines.md says what `check` assumes from that).
    field: 'versionCompatible',
    schema: z.boolean().optional(),
    doc: 'Build a version-compatible engine (trtexec --versionCompatible, BuilderFlag::kVERSION_COMPATIBLE): it also loads on later TensorRT versions of the same major, through the lean runtime it embeds.',
    cli: { flag: 'version-compatible', help: 'version-compatible engine: loads on later TensorRT of the same major\n(trtexec --versionCompatible, --vc)', value: 'on' },
    trtexec: { flag: '--versionCompatible', value: 'on', aliases: ['--vc'], help: '--versionCompatible, --vc' },
    form: {
      group: 'build',
      control: 'checkbox',
      label: 'Version compatible',
      title: "trtexec's --versionCompatible: the engine also loads on later TensorRT versions of the same major (lean-runtime operators only)",
      initial: false,
    },
    native: { key: 'versionCompatible' },
    manifest: { unset: false, olderManifestsLack: true },
    engineIdentity: true,
    sample: true,
  },
  {
    // trtexec --excludeLeanRuntime: BuilderFlag::kEXCLUDE_LEAN_RUNTIME. TensorRT ignores it without
    // kVERSION_COMPATIBLE; accepted alone as trtexec accepts it, with a warning on the build
    // (build-validation.ts; natively trt_options.cc).
    field: 'excludeLeanRuntime',
    schema: z.boolean().optional(),
    doc: 'With versionCompatible: leave the lean runtime out of the engine (trtexec --excludeLeanRuntime); whoever loads it must supply a lean runtime. Without versionCompatible TensorRT ignores it (a warning says so).',
    cli: { flag: 'exclude-lean-runtime', help: 'with --version-compatible: do not embed the lean runtime\n(trtexec --excludeLeanRuntime)', value: 'on' },
    trtexec: { flag: '--excludeLeanRuntime', value: 'on', help: '--excludeLeanRuntime' },
    form: {
      group: 'build',
      control: 'checkbox',
      label: 'Exclude lean runtime',
      title: "trtexec's --excludeLeanRuntime (with Version compatible): the engine does not embed the lean runtime, so the loader must supply one",
      initial: false,
    },
    native: { key: 'excludeLeanRuntime' },
    manifest: { unset: false, olderManifestsLack: true },
    engineIdentity: true,
    sample: true,
  },
  {
    field: 'maxAuxStreams',
    schema: z.number().int().min(0).max(OPTION_LIMITS.int32, `at most ${OPTION_LIMITS.int32} (TensorRT takes a 32-bit count)`).optional(),
    range: int32,
    doc: 'Auxiliary streams TensorRT may use per inference (IBuilderConfig::setMaxAuxStreams).',
    cli: { flag: 'max-aux-streams', arg: '<n>', help: 'auxiliary streams per inference', value: 'number' },
    trtexec: { flag: '--maxAuxStreams', value: 'number', help: '--maxAuxStreams=N' },
    form: {
      group: 'build',
      control: 'number',
      label: 'Max auxiliary streams',
      name: 'Max auxiliary streams',
      invalid: 'must be a whole number ≥ 0',
      placeholder: 'default',
      initial: '',
    },
    native: { key: 'maxAuxStreams' },
    manifest: { unset: null },
    engineIdentity: true,
    sample: 3,
  },
  {
    field: 'device',
    schema: z.number().int().min(0).max(OPTION_LIMITS.int32, `at most ${OPTION_LIMITS.int32} (a CUDA device index)`).optional(),
    range: int32,
    doc: 'CUDA device index the build runs on (default 0).',
    cli: { flag: 'device', arg: '<n>', help: 'CUDA device index (default 0)', value: 'number' },
    trtexec: { flag: '--device', value: 'number', help: '--device=N' },
    form: { group: 'build', control: 'number', label: 'Device', name: 'Device', invalid: 'must be a CUDA device index (a whole number ≥ 0)', placeholder: '0', initial: '' },
    native: { key: 'device' },
    manifest: { unset: 0 },
    engineIdentity: true,
    sample: 1,
  },
  {
    field: 'tacticSources',
    schema: specString('tacticSources', tacticSourcesProblem).optional(),
    doc: 'Tactic sources to enable (+) or disable (-) from TensorRT\'s defaults, as trtexec writes them: "-CUBLAS,+CUDNN" (IBuilderConfig::setTacticSources).',
    cli: { flag: 'tactic-sources', arg: '<spec>', help: 'enable (+) or disable (-) tactic sources, e.g. -CUBLAS,+CUDNN', value: 'text' },
    trtexec: { flag: '--tacticSources', value: 'text', help: '--tacticSources=[+|-]source[,...]' },
    form: {
      group: 'build',
      control: 'text',
      label: 'Tactic sources',
      name: 'Tactic sources',
      invalid: 'is not valid',
      placeholder: '-CUBLAS,+CUDNN',
      title: "trtexec's --tacticSources: enable (+) or disable (-) tactic sources",
      initial: '',
    },
    native: { key: 'tacticSources' },
    engineIdentity: true,
    sample: '+CUDNN,-CUBLAS',
  },
  {
    field: 'avgTiming',
    schema: z.number().int().min(1).max(OPTION_LIMITS.int32).optional(),
    range: { kind: 'int', min: 1, max: OPTION_LIMITS.int32 },
    doc: 'Timing runs averaged per tactic (IBuilderConfig::setAvgTimingIterations; TensorRT default 1).',
    cli: { flag: 'avg-timing', arg: '<n>', help: 'timing runs averaged per tactic (TensorRT default 1)', value: 'number' },
    trtexec: { flag: '--avgTiming', value: 'number', help: '--avgTiming=N' },
    form: { group: 'build', control: 'number', label: 'Averaged timing runs', name: 'Averaged timing runs', invalid: 'must be a whole number ≥ 1', placeholder: '1', initial: '' },
    native: { key: 'avgTiming' },
    engineIdentity: true,
    sample: 4,
  },
  {
    // BuilderFlag::kDISABLE_COMPILATION_CACHE (trtexec --noCompilationCache).
    field: 'compilationCache',
    schema: z.boolean().optional(),
    doc: "false disables TensorRT's compilation cache (trtexec --noCompilationCache); on by default.",
    cli: { flag: 'no-compilation-cache', help: "disable TensorRT's compilation cache (trtexec --noCompilationCache)", value: 'off' },
    trtexec: { flag: '--noCompilationCache', value: 'off', help: '--noCompilationCache' },
    form: {
      group: 'cache',
      control: 'checkbox',
      label: 'Compilation cache',
      title: "Off is trtexec's --noCompilationCache (BuilderFlag::kDISABLE_COMPILATION_CACHE)",
      initial: true,
    },
    native: { key: 'compilationCache', toNative: (on: boolean) => (on ? 1 : 0), fromNative: (n: number) => n === 1 },
    engineIdentity: true,
    sample: false,
  },
  {
    field: 'previewFeatures',
    schema: specString('previewFeatures', previewProblem).optional(),
    doc: 'Preview features to enable (+) or disable (-), as trtexec --preview writes them: "+multiDeviceRuntime" (IBuilderConfig::setPreviewFeature).',
    cli: { flag: 'preview', arg: '<spec>', help: 'preview features, e.g. +aliasedPluginIO1003,-runtimeActivationResize', value: 'text' },
    trtexec: { flag: '--preview', value: 'text', help: '--preview=[+|-]feature[,...]' },
    form: {
      group: 'build',
      control: 'text',
      label: 'Preview features',
      name: 'Preview features',
      invalid: 'is not valid',
      placeholder: '+aliasedPluginIO1003',
      title: "trtexec's --preview: enable (+) or disable (-) preview features",
      initial: '',
    },
    native: { key: 'previewFeatures' },
    engineIdentity: true,
    sample: '+aliasedPluginIO1003',
  },
  {
    // DLA: setDefaultDeviceType(kDLA) + setDLACore; refused natively where the GPU has no DLA.
    field: 'dlaCore',
    schema: z.number().int().min(0).max(OPTION_LIMITS.int32).optional(),
    range: int32,
    doc: 'Build for this DLA core (trtexec --useDLACore): layers DLA supports run there. Refused on GPUs without DLA (only Jetson/DRIVE have one).',
    cli: { flag: 'dla-core', arg: '<n>', help: 'build for DLA core N (Jetson/DRIVE; refused where the GPU has no DLA)', value: 'number' },
    trtexec: { flag: '--useDLACore', value: 'number', help: '--useDLACore=N' },
    form: { group: 'build', control: 'number', label: 'DLA core', name: 'DLA core', invalid: 'must be a DLA core index (a whole number ≥ 0)', placeholder: 'none', initial: '' },
    native: { key: 'dlaCore' },
    engineIdentity: true,
    sample: 1,
  },
  {
    field: 'allowGPUFallback',
    schema: z.boolean().optional(),
    doc: 'With dlaCore: layers DLA cannot run fall back to the GPU (BuilderFlag::kGPU_FALLBACK, trtexec --allowGPUFallback).',
    cli: { flag: 'allow-gpu-fallback', help: 'with --dla-core: layers DLA cannot run go to the GPU', value: 'on' },
    trtexec: { flag: '--allowGPUFallback', value: 'on', help: '--allowGPUFallback' },
    form: {
      group: 'build',
      control: 'checkbox',
      label: 'GPU fallback (DLA)',
      title: "trtexec's --allowGPUFallback: with a DLA core, layers DLA cannot run go to the GPU",
      initial: false,
    },
    native: { key: 'allowGPUFallback' },
    engineIdentity: true,
    sample: true,
  },
  {
    field: 'buildRoute',
    schema: z.string().min(1).optional(),
    doc:
      'TensorRT 11.1+ only: the build route, space-separated knob settings as NVIDIA writes them, e.g. ' +
      '"-conv_use_long_w=off -kgen:codegen:cuda_tile=2"; one value per knob (list_backends shows each knob\'s allowed-values ' +
      'pattern, e.g. -conv_use_long_w=[on|off], which is not itself a route).',
    cli: {
      flag: 'build-route',
      arg: '<route>',
      help: 'build route (TensorRT 11.1+): knob settings, e.g. "-conv_use_long_w=off\n-kgen:codegen:cuda_tile=2"; `trtexec --helpBuildRoute` lists the knobs',
      shown: (gate) => !gate || gate.buildRoutes,
      value: 'text',
    },
    trtexec: {
      flag: '--setBuildRoute',
      value: 'text',
      emitWhen: (gate) => !gate || gate.buildRoutes,
      emptyError: '--setBuildRoute needs a route: space-separated knob settings, e.g. "-conv_use_long_w=off -kgen:codegen:cuda_tile=2"',
      help: '--setBuildRoute=<route>   (11.1+) space-separated knob settings, e.g. "-conv_use_long_w=off -kgen:codegen:cuda_tile=2"',
    },
    form: { group: 'build', control: 'custom', initial: '' },
    native: { key: 'buildRoute' },
    manifest: { unset: null },
    engineIdentity: true,
    sample: '-conv_use_long_w=off -kgen:codegen:cuda_tile=2',
  },
  // Plugin libraries, as trtexec takes them (samples/common/sampleOptions.cpp): the standard
  // plugins (libnvinfer_plugin) are always initialized first; these add the user's. Paths on the
  // machine that builds; each must be a file (checked before the build).
  {
    field: 'staticPlugins',
    schema: z.array(z.string().min(1)).optional(),
    doc: 'Plugin libraries (.so paths) to load before parsing; their creators register when loaded (trtexec --staticPlugins).',
    cli: { flag: 'static-plugins', arg: '<lib.so>', help: 'plugin library to load before parsing (repeat for several;\ntrtexec --staticPlugins)', value: 'list' },
    trtexec: { flag: '--staticPlugins', value: 'list', help: '--staticPlugins=<lib.so>' },
    form: { group: 'build', control: 'custom', label: 'Static plugin libraries', initial: '' },
    native: { key: 'staticPlugins' },
    manifest: { list: 'as given' },
    engineIdentity: true,
    sample: ['/opt/plugins/libstatic_plugin.so'],
  },
  {
    field: 'dynamicPlugins',
    schema: z.array(z.string().min(1)).optional(),
    doc: 'Plugin libraries (.so paths) loaded through IPluginRegistry::loadLibrary before parsing (trtexec --dynamicPlugins); supply the one registering a custom op the parser names.',
    cli: { flag: 'dynamic-plugins', arg: '<lib.so>', help: 'plugin library loaded through the plugin registry (repeat for\nseveral; trtexec --dynamicPlugins)', value: 'list' },
    trtexec: { flag: '--dynamicPlugins', value: 'list', help: '--dynamicPlugins=<lib.so>' },
    form: { group: 'build', control: 'custom', label: 'Dynamic plugin libraries', initial: '' },
    native: { key: 'dynamicPlugins' },
    manifest: { list: 'as given' },
    engineIdentity: true,
    sample: ['/opt/plugins/libmy_plugin.so'],
  },
  {
    field: 'pluginsToSerialize',
    schema: z.array(z.string().min(1)).optional(),
    doc: 'Plugin libraries (.so paths) to serialize into the engine (trtexec --setPluginsToSerialize, IBuilderConfig::setPluginsToSerialize).',
    cli: {
      flag: 'plugins-to-serialize',
      arg: '<lib.so>',
      help: 'plugin library to serialize into the engine (repeat for several;\ntrtexec --setPluginsToSerialize)',
      value: 'list',
    },
    trtexec: { flag: '--setPluginsToSerialize', value: 'list', help: '--setPluginsToSerialize=<lib.so>' },
    form: { group: 'build', control: 'custom', label: 'Plugin libraries to serialize', initial: '' },
    native: { key: 'pluginsToSerialize' },
    manifest: { list: 'as given' },
    engineIdentity: true,
    sample: ['/opt/plugins/libmy_plugin.so'],
  },
  {
    // Turns on the editable timing cache, detailed profiling verbosity and verbose logging, which
    // the inference needs. Off: misses are reported as unknown on TensorRT.
    field: 'inferCacheMisses',
    schema: z.boolean().optional(),
    doc:
      "Infer timing-cache misses from TensorRT's verbose log (enables the editable timing cache, detailed profiling " +
      'verbosity and verbose logging; costs a few percent of build time). Without it misses are unknown on TensorRT.',
    cli: {
      flag: 'infer-cache-misses',
      help: "count timing-cache misses from TensorRT's log (turns on the editable\ncache and verbose logging: a few percent slower)",
      value: 'on',
    },
    trtexecMissing: () => 'Inferring timing-cache misses has no trtexec equivalent (trtexec has no editable timing cache), so the command leaves it out.',
    form: {
      group: 'cache',
      control: 'checkbox',
      label: 'Infer timing-cache misses',
      title:
        'TensorRT has no hit/miss figures: with this on, builds run with detailed profiling and a verbose log, and every tactic TensorRT times afresh is counted as a miss (inferred)',
      initial: false,
    },
    native: { key: 'inferCacheMisses' },
    manifest: { unset: false },
    engineIdentity: true,
    sample: true,
  },
  {
    // Changes nothing in the build itself; a large build can log millions of lines, so surfaces
    // keep only the last ones.
    field: 'verboseLog',
    schema: z.boolean().optional(),
    doc: "Pass TensorRT's VERBOSE log lines on as log events (trtexec --verbose); the build itself is unchanged. A large build logs very many lines.",
    cli: { flag: 'verbose', help: "pass TensorRT's VERBOSE log lines on and print them (a large\nbuild logs very many; --json carries them as log events)", value: 'on' },
    trtexec: { flag: '--verbose', value: 'on', help: "--verbose             pass TensorRT's VERBOSE log lines on and print them (can be very many)" },
    form: {
      group: 'cache',
      control: 'checkbox',
      label: 'Verbose log',
      title: "Pass TensorRT's VERBOSE log lines on (trtexec --verbose); the log panel shows them under “everything” and keeps the last ones",
      initial: false,
    },
    native: { key: 'verboseLog' },
    manifest: { unset: false },
    engineIdentity: { not: 'how much is logged; the build is the same (recorded in the manifest, never compared)' },
    sample: true,
  },
  {
    field: 'maxHostMemory',
    schema: MemoryLimit.optional(),
    jsonSchema: z.union([z.number().int().positive(), z.string()]).optional(),
    range: { kind: 'bytes', auto: true },
    doc: 'Stop the build (cancel reason "memory") when its worker\'s resident host memory passes this: bytes, a size such as "20G", or "auto" (90 % of the lower of the cgroup memory limit and the memory available at start).',
    cli: {
      flag: 'max-host-memory',
      arg: '<size|auto>',
      help: 'stop the build (reason "memory") when its worker\'s host memory passes\nthis (20G, 512M; auto: 90 % of the cgroup limit or of the memory\navailable at start, whichever is lower)',
      value: 'text',
    },
    trtexec: { flag: '--maxHostMemory', value: 'text', emit: false, help: '--maxHostMemory=<size|auto>  (this product) stop the build when its host memory passes this' },
    trtexecMissing: () => "trtexec has no host memory limit (--maxHostMemory is this product's own flag), so the command leaves it out.",
    form: {
      group: 'build',
      control: 'number',
      label: 'Max host memory',
      name: 'Max host memory',
      invalid: 'must be a size such as 20G or 512M, or auto',
      placeholder: 'none',
      initial: '',
    },
    native: { none: 'the service watches the worker\'s memory at each heartbeat and cancels the build (reason "memory") when it passes the limit' },
    engineIdentity: { not: 'a limit that stops the build; it never changes what is built' },
    sample: 'auto',
  },
  {
    field: 'maxGpuMemory',
    schema: MemorySize.optional(),
    jsonSchema: z.union([z.number().int().positive(), z.string()]).optional(),
    range: { kind: 'bytes' },
    doc: 'Stop the build (cancel reason "memory") when the GPU memory its worker holds (NVML) passes this: bytes or a size such as "24G". Also caps the workspace and tactic DRAM memory pools.',
    cli: { flag: 'max-gpu-memory', arg: '<size>', help: 'stop the build when its GPU memory (NVML) passes this; also caps\nthe workspace and tactic DRAM pools', value: 'text' },
    trtexec: { flag: '--maxGpuMemory', value: 'text', emit: false, help: '--maxGpuMemory=<size>  (this product) stop the build when its GPU memory passes this' },
    trtexecMissing: () => "trtexec has no GPU memory limit (--maxGpuMemory is this product's own flag; --memPoolSize caps the pools), so the command leaves it out.",
    form: { group: 'build', control: 'number', label: 'Max GPU memory', name: 'Max GPU memory', invalid: 'must be a size such as 24G or 512M', placeholder: 'none', initial: '' },
    native: { none: "the service watches the worker's GPU memory (NVML) at each heartbeat; toNativeRequest caps workspaceBytes and tacticDramBytes by it" },
    manifest: { unset: null },
    engineIdentity: true,
    sample: 25769803776,
  },
  {
    field: 'simDuration',
    schema: z
      .number()
      .positive()
      .max(24 * 3600)
      .optional(),
    unit: 's',
    range: { kind: 'seconds', max: 24 * 3600 },
    doc: 'Simulated backend only: target wall time in seconds.',
    cli: { flag: 'sim-duration', arg: '<s>', help: 'target wall time in seconds (fractions allowed)', section: 'simulator', value: 'number' },
    form: {
      group: 'simulator',
      control: 'decimal',
      label: 'Duration (s)',
      name: 'Simulated duration',
      invalid: 'must be a number of seconds above 0 (up to 86400)',
      placeholder: 'auto',
      initial: '',
    },
    native: { key: 'simDurationMs', scale: 1000 },
    manifest: { unset: null },
    engineIdentity: { not: 'how long the simulator takes; the bytes are the same (recorded in the manifest, never compared)' },
    sample: 2.5,
  },
  {
    field: 'simSeed',
    schema: z.number().int().nonnegative().optional(),
    range: { kind: 'int', min: 0 },
    doc: 'Simulated backend only: seed (same seed, same build; default 1).',
    cli: { flag: 'sim-seed', arg: '<n>', help: 'seed (same seed → same build; default 1)', section: 'simulator', value: 'number' },
    // The simulator's default seed, shown as the value it is (every build without one uses it).
    form: { group: 'simulator', control: 'number', label: 'Seed', name: 'Seed', invalid: 'must be a whole number ≥ 0', placeholder: '1', initial: '1' },
    native: { key: 'simSeed' },
    // Unset: the simulator's own seed (simSeed's line in native/src/core/request_fields.def), so no
    // seed and seed 1 build the same; a manifest may hold null for it.
    manifest: { unset: 1, nullable: true },
    engineIdentity: true,
    sample: 7,
  },
  {
    field: 'simFault',
    schema: SimFault.optional(),
    doc: 'Simulated backend only: inject "fail", "crash" or "hang", optionally "@<phase name>".',
    cli: { flag: 'sim-fault', arg: '<f>', help: 'fail | crash | hang, optionally @<phase name>', section: 'simulator', value: 'text' },
    form: { group: 'simulator', control: 'custom', initial: '' },
    native: {
      keys: ['simFault', 'simFaultPhase'],
      toNative: (s: string) => {
        const f = parseSimFault(s);
        return { simFault: f.kind, simFaultPhase: f.phase };
      },
      fromNative: (r: Record<string, unknown>) => (r.simFaultPhase ? `${r.simFault as SimFaultKind}@${r.simFaultPhase as string}` : r.simFault),
    },
    engineIdentity: { not: 'a build with a fault injected never writes an engine' },
    sample: 'hang@Timing graph nodes',
  },
  {
    field: 'simMemory',
    schema: MemorySize.optional(),
    jsonSchema: z.union([z.number().int().positive(), z.string()]).optional(),
    range: { kind: 'bytes' },
    doc: 'Simulated backend only: host memory the simulated build allocates and touches, rising through its phases to this peak (bytes or a size such as "4G").',
    cli: { flag: 'sim-memory', arg: '<size>', help: 'host memory the simulated build holds at its peak (e.g. 4G)', section: 'simulator', value: 'text' },
    form: { group: 'simulator', control: 'number', label: 'Memory', name: 'Simulated memory', invalid: 'must be a size such as 4G or 512M', placeholder: 'none', initial: '' },
    native: { key: 'simMemoryBytes' },
    engineIdentity: { not: 'host memory the simulator touches; the bytes are the same' },
    sample: 268435456,
  },
  {
    // Reuse instead of rebuild (docs/engines.md): decided by the service before any worker starts.
    field: 'reuse',
    schema: z.boolean().optional(),
    doc:
      'Reuse an up-to-date engine: when the engine store holds an engine whose manifest key matches this build (options, shapes, ' +
      'model bytes, TensorRT and adapter versions, GPU as the portability settings require), the build ends at once with those ' +
      'bytes (build.finished says reused); otherwise it builds and keeps the engine in the store.',
    cli: { flag: 'reuse', help: "reuse an up-to-date engine from the engine store instead of building\n(and keep this build's engine there); see docs/engines.md", value: 'on' },
    form: {
      group: 'cache',
      control: 'checkbox',
      label: 'Reuse an up-to-date engine',
      title: 'When the engine store holds an engine built from the same model, options and TensorRT for this GPU, use it instead of building',
      initial: true,
      alwaysSent: true,
    },
    native: { none: 'the service looks the engine up before any worker starts; a worker only ever builds' },
    engineIdentity: { not: 'what to do with an engine, not how to build it' },
    sample: true,
  },
  {
    field: 'storeLimitMiB',
    schema: z.number().int().min(0).max(OPTION_LIMITS.poolMiB, `at most ${OPTION_LIMITS.poolMiB} MiB (8 PiB)`).optional(),
    unit: 'MiB',
    range: { kind: 'int', min: 0, max: OPTION_LIMITS.poolMiB },
    doc: "With reuse: the engine store's size limit in MiB (default 20480); least recently used engines are removed first.",
    cli: { flag: 'store-limit', arg: '<MiB>', help: "with --reuse: the engine store's size limit (default 20480 MiB);\nleast recently used engines go first", value: 'number' },
    native: { none: 'the service keeps the engine store; the worker never sees it' },
    engineIdentity: { not: "the engine store's size, not how to build an engine" },
    sample: 512,
  },
  {
    // The manifest (docs/engines.md) always holds the top-level phases; with this, every row of
    // the phase tree too, so that `compare` and the Compare view can line two builds up row by row.
    field: 'manifestRows',
    schema: z.boolean().optional(),
    doc:
      "Write every row of the phase tree into the engine's manifest (build.rows), not only the top-level phases, so compare " +
      'can set two builds side by side row by row. The build itself is unchanged.',
    cli: { flag: 'manifest-rows', help: "write every phase row into the engine's manifest, not only the\ntop-level phases (compare then lines up every row)", value: 'on' },
    form: {
      group: 'cache',
      control: 'checkbox',
      label: 'Every phase row in the manifest',
      title: "Keep the whole phase tree in the engine's manifest (not only the top-level phases), so Compare lines up every row",
      initial: false,
    },
    native: { none: "the service writes the manifest from the build's phase tree; the worker never sees it" },
    engineIdentity: { not: 'how much of the phase tree the manifest keeps; the build is the same' },
    sample: true,
  },
  {
    // Pinned, reproducible builds: read this cache, fail on any miss, never write it.
    field: 'pinnedCache',
    schema: z.string().min(1).optional(),
    doc:
      'Pinned build: build from this timing cache and fail at the first cache miss (TensorRT: kERROR_ON_TIMING_CACHE_MISS; ' +
      'the simulator imitates it). The cache is read, never written. Not with timingCache.',
    cli: {
      flag: 'pinned-cache',
      arg: '<file>',
      help: 'build from this timing cache and fail on any cache miss (same cache\nand inputs, same tactics); the cache is not written',
      value: 'text',
    },
    trtexecMissing: (file: string) =>
      `A pinned build is close to trtexec's --timingCacheFile=${file} --errorOnTimingCacheMiss, but trtexec writes the cache back after the build; the command leaves it out.`,
    form: { group: 'cache', control: 'custom', initial: '' },
    native: { key: 'pinnedCachePath' },
    manifest: { elsewhere: 'pinnedCache: { path, sha256 } beside the options (the reuse key takes its sha256)' },
    engineIdentity: true,
    sample: '/caches/pinned.cache',
  },
] as const satisfies readonly OptionEntry[];

/** The table, typed loosely: for code that walks every entry the same way. */
export const BUILD_OPTIONS: readonly OptionEntry[] = BUILD_OPTION_TABLE;

type Table = (typeof BUILD_OPTION_TABLE)[number];
export type OptionField = Table['field'];

/** The protocol's schema of build options, one field per entry. */
export const BuildOptions = z.object(Object.fromEntries(BUILD_OPTION_TABLE.map((e) => [e.field, e.schema])) as { [E in Table as E['field']]: E['schema'] });
export type BuildOptions = z.infer<typeof BuildOptions>;
export type BuildOptionsInput = z.input<typeof BuildOptions>;

/** The entry of a field. */
export function optionEntry(field: string): OptionEntry {
  const e = BUILD_OPTIONS.find((o) => o.field === field);
  if (!e) throw new Error(`no build option "${field}" in the options table`);
  return e;
}

/** Fields whose form control the generic code draws and reads, with their state's type. */
type GenericFormEntry = Extract<Table, { form: { control: 'number' | 'decimal' | 'text' | 'checkbox' | 'select' } }>;
export type GenericFormFields = { [E in GenericFormEntry as E['field']]: E['form']['control'] extends 'checkbox' ? boolean : string };

/** A number's text → the number, or an error naming what is allowed; shared by every text surface. */
export function readNumber(range: OptionRange, text: string): number | 'auto' | null {
  const t = text.trim();
  if (range.kind === 'bytes') {
    try {
      return range.auto ? parseMemoryLimit(t) : parseMemorySize(t);
    } catch {
      return null;
    }
  }
  if (range.kind === 'seconds') {
    const n = Number(t);
    return t !== '' && Number.isFinite(n) && n > 0 && (range.max === undefined || n <= range.max) ? n : null;
  }
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) && n >= range.min && n <= (range.max ?? Number.MAX_SAFE_INTEGER) ? n : null;
}
