// trtexec command lines, both ways: `trt-build-studio trtexec <flags>` parses what people already
// have in scripts and notes, and "Copy as trtexec command" writes one. One module, so a copied
// command always parses back into the same build (a round-trip test holds them together).
//
// Syntax follows trtexec's own help: `--flag=value` (a space instead of "=" is accepted too),
// shape specs `name:1x3x224x224,name2:...` with names optionally in single quotes ('Input:0'),
// `name:` or `name:scalar` for a 0-D shape. As in trtexec, a missing one of --minShapes/
// --optShapes/--maxShapes is filled in from the others with a warning (only --optShapes: min = opt
// = max), and each of the three may be given once (several profiles need --profile, which this
// product does not take). The same three flags carry the values of shape-tensor inputs.
// --memPoolSize takes `pool:size[,pool:size]`, sizes in MiB unless suffixed B, K, M or G (either
// case, base 2), decimals allowed and rounded down to whole bytes.
// Deprecated spellings trtexec still takes (--profilingVerbosity=default|verbose, --plugins) and
// ones it took before 10.0 (--buildOnly, --workspace, --nvtxMode, --explicitBatch) are accepted
// with the warning trtexec printed for them. Inference-only flags are accepted and returned as
// `ignored`; renamed or removed flags with another meaning are refused naming the successor;
// --best is returned as `best` and resolved once the TensorRT version is known (bestPrecisions);
// all from trtexec-other-flags.ts.
import { BUILD_OPTIONS, HARDWARE_TRTEXEC, readNumber, type OptionEntry } from './build-options.js';
import { engineFileName } from './engine-name.js';
import { UsageError } from './usage-error.js';
import type { BackendInfo, BuildOptionsInput, Precision, ShapeRange, ShapeValueRange } from './protocol.js';
import { trtCapabilities, type TrtCapabilities } from './trt-capabilities.js';
import { INFERENCE_ONLY_FLAGS, NOTED_FLAGS, refusedBuildFlag, RENAMED_FLAG_WARNINGS, RETIRED_FLAGS } from './trtexec-other-flags.js';

export interface TrtexecBuild {
  modelPath: string;
  /** --saveEngine; without it the service's default output location (as `build` without -o). */
  enginePath?: string;
  options: BuildOptionsInput;
  /** This product's --json: NDJSON events instead of the live tree. */
  json: boolean;
  /** What trtexec would warn about (deprecated spellings, shapes filled in), for stderr. */
  warnings: string[];
  /** Inference-only flags as given (`--iterations=100`): accepted, not used (ignoredFlagsNote). */
  ignored: string[];
  /** --best: its precisions depend on the TensorRT version and GPU (bestPrecisions). */
  best: boolean;
  /**
   * --dumpLayerInfo (print the engine's layer information after the build) and
   * --exportLayerInfo=<file> (write it there, in IEngineInspector's JSON): what trtexec does after
   * a build-only run, done by the trtexec command from the `<engine>.layers.json` every build writes.
   */
  layerInfo: { dump: boolean; exportPath?: string };
}

// ───────────────────────────────── shape specs ─────────────────────────────

export type Which = 'min' | 'opt' | 'max';
const WHICH: Which[] = ['min', 'opt', 'max'];
const SHAPE_FLAG: Record<Which, string> = { min: '--minShapes', opt: '--optShapes', max: '--maxShapes' };

/**
 * One flag's value, `a:1x3x224x224,'b:0':4,c:` → [["a",[1,3,224,224]],["b:0",[4]],["c",[]]].
 * Values are integers of either sign: shape-tensor values may be 0 or -1; dims are checked later.
 */
export function parseShapeList(flag: string, spec: string): Array<[string, number[]]> {
  const out: Array<[string, number[]]> = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new UsageError(`${flag}: ${why} in "${spec}" (expected e.g. ${flag}=input0:1x3x256x256,input1:1x3x128x128)`);
  };
  while (i < spec.length) {
    let name: string;
    if (spec[i] === "'") {
      const close = spec.indexOf("'", i + 1);
      if (close < 0) fail('unterminated quote');
      name = spec.slice(i + 1, close);
      i = close + 1;
      if (spec[i] !== ':') fail(`expected ":" after the quoted name '${name}'`);
    } else {
      // Unquoted, the name runs to the last colon of the entry (so "Input:0:1x3" names "Input:0").
      const comma = spec.indexOf(',', i);
      const entry = spec.slice(i, comma < 0 ? undefined : comma);
      const colon = entry.lastIndexOf(':');
      if (colon < 0) fail(`"${entry}" has no ":<dims>"`);
      name = entry.slice(0, colon);
      i += colon;
    }
    if (name === '') fail('an input name is empty');
    i++; // the colon
    const end = spec.indexOf(',', i) < 0 ? spec.length : spec.indexOf(',', i);
    const text = spec.slice(i, end).trim();
    i = end + 1;
    let dims: number[];
    if (text === '' || text === 'scalar') dims = [];
    else {
      dims = text.split('x').map((d) => (/^-?\d+$/.test(d) ? Number(d) : NaN));
      if (dims.some((d) => !Number.isSafeInteger(d))) fail(`"${text}" for "${name}" is not whole numbers joined by "x"`);
    }
    if (out.some(([n]) => n === name)) fail(`"${name}" is given twice`);
    out.push([name, dims]);
    if (end === spec.length) break;
  }
  if (out.length === 0) fail('no input given');
  return out;
}

/**
 * trtexec's own quoting for a name that contains ":" (it also splits on the last colon, but the
 * quotes say it plainly). A name with "," is quoted too, which this parser reads but trtexec does
 * not (it splits the list on commas first): the formatter warns about such names.
 */
function specName(name: string): string {
  return /[:,]/.test(name) ? `'${name}'` : name;
}

/** Why trtexec cannot be given this input name in a shape flag, if it cannot. */
export function unsayableInputName(name: string): string | undefined {
  if (name.includes(',')) return `trtexec splits shape lists on "," before it reads quotes`;
  if (name.includes("'")) return `trtexec reads "'" as the quote around a name`;
  return undefined;
}

export function formatShapeList(entries: Array<[string, number[]]>): string {
  return entries.map(([n, d]) => `${specName(n)}:${d.length === 0 ? 'scalar' : d.join('x')}`).join(',');
}

/**
 * Where trtexec takes a missing bound from (its processShapes): min from opt, else max; opt from
 * max, else min; max from opt, else min. Only the bounds not given appear.
 */
function broadcastSources(given: readonly Which[]): Partial<Record<Which, Which>> {
  const has = (w: Which) => given.includes(w);
  const src: Partial<Record<Which, Which>> = {};
  if (!has('min')) src.min = has('opt') ? 'opt' : 'max';
  if (!has('opt')) src.opt = has('max') ? 'max' : 'min';
  if (!has('max')) src.max = has('opt') ? 'opt' : 'min';
  return src;
}

/**
 * --minShapes/--optShapes/--maxShapes → per-input ranges. Entries naming a known shape-tensor
 * input, or holding a value below 1 (which no dimension can be), are shape values; the rest are
 * dimensions. Without the list the service sorts dimensions of shape-tensor inputs out later.
 *
 * With `warnings` (the trtexec command) a missing flag is filled in from the others as trtexec
 * does, and trtexec's warning for each input goes there. Without it (`build`), only --optShapes
 * alone may stand for all three.
 */
export function shapesFromFlags(
  lists: Partial<Record<Which, Array<[string, number[]]>>>,
  shapeTensorInputs: readonly string[] = [],
  warnings?: string[],
): { shapes?: Record<string, ShapeRange>; shapeValues?: Record<string, ShapeValueRange> } {
  const given = WHICH.filter((w) => lists[w]);
  if (given.length === 0) return {};
  for (const w of given) {
    const names = lists[w]!.map(([n]) => n);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) throw new UsageError(`${SHAPE_FLAG[w]}: "${twice}" is given twice`);
  }
  if (given.length !== 3 && !warnings && !(given.length === 1 && given[0] === 'opt')) {
    const missing = WHICH.filter((w) => !lists[w]).map((w) => SHAPE_FLAG[w]);
    throw new UsageError(`${missing.join(' and ')} missing: give all three of --minShapes, --optShapes and --maxShapes (or only --optShapes)`);
  }
  const sources = broadcastSources(given);
  const maps = Object.fromEntries(given.map((w) => [w, new Map(lists[w])])) as Partial<Record<Which, Map<string, number[]>>>;
  const names = [...new Set(given.flatMap((w) => [...maps[w]!.keys()]))];
  const shapes: Record<string, ShapeRange> = {};
  const shapeValues: Record<string, ShapeValueRange> = {};
  for (const name of names) {
    const absent = given.filter((w) => !maps[w]!.has(name));
    if (absent.length) {
      throw new UsageError(`"${name}" is missing from ${absent.map((w) => SHAPE_FLAG[w]).join(' and ')}: every input needs min, opt and max`);
    }
    // A source is always a flag that was given (see broadcastSources).
    const bound = (w: Which): number[] => (maps[w] ?? maps[sources[w]!]!).get(name)!;
    for (const w of WHICH) if (sources[w]) warnings?.push(`${sources[w]}Shapes is being broadcasted to ${w}Shapes for tensor ${name}`);
    const r = { min: bound('min'), opt: bound('opt'), max: bound('max') };
    const values = shapeTensorInputs.includes(name) || WHICH.some((w) => r[w].some((d) => d < 1));
    if (values) shapeValues[name] = r;
    else shapes[name] = r;
  }
  return {
    ...(Object.keys(shapes).length ? { shapes } : {}),
    ...(Object.keys(shapeValues).length ? { shapeValues } : {}),
  };
}

// ───────────────────────────────── memory pools ────────────────────────────

const UNIT: Record<string, number> = { B: 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 };

/**
 * `4096`, `0.5G`, `64K`, `512m` → bytes (rounded down), MiB when no suffix, as trtexec reads them
 * (it upper-cases the suffix). `1024MiB`, `1GiB`, `512KiB` are read as meant, with a warning:
 * trtexec looks only at the last character, so it would read them as bytes (a copy writes `1024M`).
 */
export function parsePoolSize(flag: string, text: string, warnings?: string[]): number {
  const m = /^(\d+(?:\.\d*)?|\.\d+)(?:([BKMG])|([KMG])iB)?$/i.exec(text);
  if (!m) throw new UsageError(`${flag}: size "${text}" is not a number with an optional B, K, M or G suffix (also KiB, MiB, GiB; no suffix: MiB)`);
  if (m[3]) {
    const unit = m[3].toUpperCase();
    warnings?.push(`${flag}: "${text}" read as ${m[1]}${unit} (${unit}iB); trtexec itself reads the last letter only and would take it as ${m[1]} bytes, so write ${m[1]}${unit}.`);
  }
  return Math.floor(Number(m[1]) * UNIT[(m[2] ?? m[3] ?? 'M').toUpperCase()]);
}

/**
 * The --memPoolSize pools, from the options table. A pool the table marks `emit: false` (tactic
 * DRAM: no trtexec 10.x or 11.x has one) is read for this product's own option, and a copied
 * command leaves it out with the table's warning.
 */
const POOLS: Record<string, { field: string; unit: number; unitName: 'MiB' | 'KiB'; max: number; emit: boolean }> = Object.fromEntries(
  BUILD_OPTIONS.flatMap(({ field, trtexec, range }) =>
    trtexec && 'pool' in trtexec
      ? [
          [
            trtexec.pool,
            { field, unit: trtexec.unit === 'MiB' ? 1024 ** 2 : 1024, unitName: trtexec.unit, max: range?.max ?? Number.MAX_SAFE_INTEGER, emit: trtexec.emit !== false },
          ],
        ]
      : [],
  ),
);
/** The pools trtexec itself has, for messages and help. */
export const TRTEXEC_POOLS = Object.keys(POOLS).filter((p) => POOLS[p].emit);

function parsePools(spec: string, into: BuildOptionsInput, warnings: string[]): void {
  const flag = '--memPoolSize';
  for (const part of spec.split(',')) {
    const colon = part.indexOf(':');
    if (colon <= 0) throw new UsageError(`${flag}: "${part}" is not <pool>:<size>, e.g. ${flag}=workspace:1024M`);
    const pool = part.slice(0, colon);
    const p = POOLS[pool];
    if (!p) {
      throw new UsageError(
        `${flag}: pool "${pool}" is not supported here (supported: ${TRTEXEC_POOLS.join(', ')}${pool.startsWith('dla') ? '; DLA pools are not used by this product' : ''})`,
      );
    }
    const bytes = parsePoolSize(`${flag} ${pool}`, part.slice(colon + 1), warnings);
    if (bytes === 0 || bytes % p.unit !== 0) {
      throw new UsageError(`${flag}: ${pool} size "${part.slice(colon + 1)}" must be a positive whole number of ${p.unitName} here`);
    }
    if (bytes / p.unit > p.max) throw new UsageError(`${flag}: ${pool} size "${part.slice(colon + 1)}" is too large (at most ${p.max} ${p.unitName})`);
    (into as Record<string, unknown>)[p.field] = bytes / p.unit;
  }
}

// ──────────────────────────────────── parse ────────────────────────────────

const PRECISION_FLAGS: Record<string, Precision> = { '--fp16': 'fp16', '--bf16': 'bf16', '--int8': 'int8', '--fp8': 'fp8', '--int4': 'int4' };
/** The flags of table entries this file reads and writes by hand ('custom'). */
const CUSTOM_VALUE_FLAGS: Record<string, string[]> = {
  shapes: [...WHICH.map((w) => SHAPE_FLAG[w]), '--shapes'],
  profilingVerbosity: ['--profilingVerbosity'],
  hardwareCompatibility: ['--hardwareCompatibilityLevel'],
};
const VALUE_FLAGS = new Set([
  '--onnx',
  '--saveEngine',
  '--workspace',
  '--plugins',
  '--nvtxMode',
  '--exportLayerInfo',
  ...BUILD_OPTIONS.flatMap(({ field, trtexec: t }) =>
    !t || 'pool' in t ? [] : t.value === 'custom' ? (CUSTOM_VALUE_FLAGS[field] ?? []) : t.value === 'number' || t.value === 'text' || t.value === 'list' ? [t.flag] : [],
  ),
  ...(Object.keys(POOLS).length ? ['--memPoolSize'] : []),
]);
/** A boolean flag's other spellings → the flag (trtexec's --vc is --versionCompatible). */
const FLAG_ALIASES: Record<string, string> = Object.fromEntries(
  BUILD_OPTIONS.flatMap(({ trtexec: t }) => (t && !('pool' in t) && (t.value === 'on' || t.value === 'off') ? (t.aliases ?? []).map((a) => [a, t.flag]) : [])),
);
const BOOLEAN_FLAGS = new Set([
  ...BUILD_OPTIONS.flatMap(({ trtexec: t }) => (t && !('pool' in t) && (t.value === 'on' || t.value === 'off') ? [t.flag, ...(t.aliases ?? [])] : [])),
  '--skipInference',
  '--buildOnly',
  '--explicitBatch',
  '--explicitPrecision',
  '--best',
  '--json',
  '--dumpLayerInfo',
  ...Object.keys(PRECISION_FLAGS),
]);

/** Old spellings read as their successor: not offered in messages that list what is supported. */
const OLD_SPELLINGS = new Set(['--workspace', '--plugins', '--nvtxMode', '--explicitBatch', '--explicitPrecision', '--buildOnly']);
/** For an unsupported flag's message: what is accepted. */
export const SUPPORTED_TRTEXEC_FLAGS = [...VALUE_FLAGS, ...BOOLEAN_FLAGS].filter((f) => f !== '--backend' && f !== '--json' && !OLD_SPELLINGS.has(f));

/** trtexec's reading: "none" (or nothing) exactly, the other two in any case. */
function hardwareLevel(text: string): NonNullable<BuildOptionsInput['hardwareCompatibility']> {
  if (text === 'none' || text === '') return 'none';
  const lower = text.toLowerCase();
  if (lower === 'ampere+') return 'ampere_plus';
  if (lower === 'samecomputecapability') return 'same_compute_capability';
  throw new UsageError(`--hardwareCompatibilityLevel expects none, ampere+ or sameComputeCapability, got "${text}"`);
}

/** trtexec's values, and the deprecated ones it still takes (with its warning). */
const PROFILING: Record<string, { value: NonNullable<BuildOptionsInput['profilingVerbosity']>; deprecatedBy?: string }> = {
  layer_names_only: { value: 'layer_names_only' },
  detailed: { value: 'detailed' },
  none: { value: 'none' },
  default: { value: 'layer_names_only', deprecatedBy: 'layer_names_only' },
  verbose: { value: 'detailed', deprecatedBy: 'detailed' },
};

/** Text values are checked by the table's schema here, so the message names the trtexec flag. */
function checkedText(flag: string, text: string, schema: OptionEntry['schema']): string {
  if (flag === '--sparsity' && text === 'force') {
    throw new UsageError('--sparsity=force: trtexec deprecated it (it rewrites weights); prune the weights offline (polygraphy surgeon prune), then --sparsity=enable');
  }
  const r = schema.safeParse(text);
  if (!r.success) throw new UsageError(`${flag}: ${r.error.issues[0]?.message ?? 'invalid value'} (got "${text}")`);
  return text;
}

function wholeNumber(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${flag} expects a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

/**
 * --minShapes/--optShapes/--maxShapes (or --shapes, a fixed profile) → shapes and shape values
 * (the options table's `shapes` and `shapeValues`, which trtexec writes with the same flags).
 */
function readShapes(
  values: Map<string, string[]>,
  one: (flag: string) => string | undefined,
  options: BuildOptionsInput,
  shapeTensorInputs: readonly string[],
  warnings: string[],
): void {
  // trtexec takes each shape flag once: a second one is left over and refused (several profiles
  // need --profile). Each flag lists every input, separated by commas.
  for (const flag of [...WHICH.map((w) => SHAPE_FLAG[w]), '--shapes']) {
    const n = values.get(flag)?.length ?? 0;
    if (n > 1) {
      throw new UsageError(
        `${flag} is given ${n} times: trtexec takes each of --minShapes/--optShapes/--maxShapes/--shapes once ` +
          `(more than one profile needs --profile, which this command does not take); list every input in one flag, e.g. ${flag}=input0:1x3x256x256,input1:1x3x128x128`,
      );
    }
  }
  const lists: Partial<Record<Which, Array<[string, number[]]>>> = {};
  for (const w of WHICH) {
    const spec = one(SHAPE_FLAG[w]);
    if (spec !== undefined) lists[w] = parseShapeList(SHAPE_FLAG[w], spec);
  }
  const inference = one('--shapes');
  if (inference !== undefined) {
    // trtexec builds a static profile from --shapes (silently) when no --min/opt/maxShapes are given.
    if (WHICH.some((w) => lists[w])) throw new UsageError('--shapes cannot be combined with --minShapes/--optShapes/--maxShapes here (trtexec uses --shapes for inference)');
    lists.min = lists.opt = lists.max = parseShapeList('--shapes', inference);
  }
  Object.assign(options, shapesFromFlags(lists, shapeTensorInputs, warnings));
}

/**
 * trtexec arguments → the build they describe. `shapeTensorInputs` (from the model reader, when
 * known) sorts shape-flag entries into dims and shape-tensor values; see shapesFromFlags. A
 * command line that cannot be run as given throws a UsageError (the CLI exits 2 with it).
 */
export function parseTrtexecArgs(argv: string[], shapeTensorInputs: readonly string[] = []): TrtexecBuild {
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  const warnings: string[] = [];
  const ignored: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    if (!flag.startsWith('--')) throw new UsageError(`unexpected argument "${arg}": trtexec takes only --flags (the model is --onnx=<file>)`);
    if (Object.hasOwn(INFERENCE_ONLY_FLAGS, flag)) {
      // Its value, when written after a space, is taken with it (a following --flag is not).
      const spaced = eq < 0 && INFERENCE_ONLY_FLAGS[flag] && argv[i + 1] !== undefined && !argv[i + 1].startsWith('--');
      const given = spaced ? `${flag}=${argv[++i]}` : arg;
      if (!ignored.includes(given)) ignored.push(given);
    } else if (Object.hasOwn(RETIRED_FLAGS, flag)) {
      throw new UsageError(`${flag}: ${RETIRED_FLAGS[flag].instead}`);
    } else if (refusedBuildFlag(flag)) {
      throw new UsageError(refusedBuildFlag(flag)!);
    } else if (Object.hasOwn(NOTED_FLAGS, flag)) {
      if (eq >= 0) throw new UsageError(`${flag} takes no value, got "${arg}"`);
      if (!warnings.includes(NOTED_FLAGS[flag])) warnings.push(NOTED_FLAGS[flag]);
    } else if (VALUE_FLAGS.has(flag)) {
      let value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`${flag} needs a value: ${flag}=<value>`);
      value = value.trim();
      values.set(flag, [...(values.get(flag) ?? []), value]);
    } else if (BOOLEAN_FLAGS.has(flag)) {
      if (eq >= 0) throw new UsageError(`${flag} takes no value, got "${arg}"`);
      flags.add(FLAG_ALIASES[flag] ?? flag);
    } else {
      throw new UsageError(`${flag}: not a trtexec build flag this command knows (trt-build-studio trtexec --help lists what it reads)`);
    }
  }
  const one = (flag: string): string | undefined => {
    const v = values.get(flag);
    if (v && v.length > 1 && new Set(v).size > 1) throw new UsageError(`${flag} is given ${v.length} times with different values; give it once`);
    return v?.[0];
  };

  const modelPath = one('--onnx');
  if (!modelPath) throw new UsageError('--onnx=<model.onnx> is required: this command builds an engine from an ONNX model');
  const enginePath = one('--saveEngine');
  if (enginePath === '') throw new UsageError('--saveEngine needs a file name (leave the flag out for the default output location)');

  const options: BuildOptionsInput = {};
  const set = options as Record<string, unknown>;
  for (const { field, trtexec: t, range, schema } of BUILD_OPTIONS) {
    if (!t) continue;
    if ('pool' in t) {
      // All pools come in --memPoolSize, read once (at the first pool of the table).
      if (POOLS[t.pool] === Object.values(POOLS)[0]) for (const spec of values.get('--memPoolSize') ?? []) parsePools(spec, options, warnings);
      continue;
    }
    switch (t.value) {
      case 'number': {
        const text = one(t.flag);
        if (text !== undefined) set[field] = wholeNumber(t.flag, text, range?.kind === 'int' ? range.min : 0, range?.max ?? Number.MAX_SAFE_INTEGER);
        break;
      }
      case 'text': {
        const text = one(t.flag);
        if (text === '' && t.emptyError) throw new UsageError(t.emptyError);
        if (text !== undefined && range?.kind === 'bytes') {
          const n = readNumber(range, text);
          if (n === null) throw new UsageError(`${t.flag}: invalid memory size "${text}": expected e.g. 512M, 20G (binary units)${range.auto ? ', or auto' : ''}`);
          set[field] = n;
        } else if (text !== undefined) set[field] = checkedText(t.flag, text, schema);
        break;
      }
      case 'list': {
        // Repeatable, as trtexec's plugin flags: every occurrence is one entry.
        const all = values.get(t.flag) ?? [];
        if (all.some((v) => v === '')) throw new UsageError(`${t.flag} needs a file: ${t.flag}=<lib.so>`);
        if (all.length) set[field] = all;
        break;
      }
      case 'on':
        if (flags.has(t.flag)) set[field] = true;
        break;
      case 'off':
        if (flags.has(t.flag)) set[field] = false;
        break;
      case 'custom':
        if (field === 'shapes') readShapes(values, one, options, shapeTensorInputs, warnings);
        else if (field === 'precision') {
          const precision = Object.entries(PRECISION_FLAGS)
            .filter(([f]) => flags.has(f))
            .map(([, p]) => p);
          if (precision.length) options.precision = precision;
        } else if (field === 'profilingVerbosity') {
          const pv = one('--profilingVerbosity');
          if (pv !== undefined) {
            const p = Object.hasOwn(PROFILING, pv) ? PROFILING[pv] : undefined;
            if (!p) throw new UsageError(`--profilingVerbosity expects layer_names_only, detailed or none, got "${pv}"`);
            if (p.deprecatedBy) warnings.push(`--profilingVerbosity=${pv} has been deprecated by --profilingVerbosity=${p.deprecatedBy}.`);
            options.profilingVerbosity = p.value;
          }
        } else if (field === 'hardwareCompatibility') {
          const hc = one('--hardwareCompatibilityLevel');
          if (hc !== undefined) options.hardwareCompatibility = hardwareLevel(hc);
        }
        break;
    }
  }
  readRenamedFlags(values, flags, one, options, warnings);
  if (flags.has('--buildOnly')) {
    warnings.push('--buildOnly flag has been deprecated by --skipInference flag. (trtexec 10 and later no longer take --buildOnly.)');
  }
  const exportPath = one('--exportLayerInfo');
  if (exportPath === '') throw new UsageError('--exportLayerInfo needs a file: --exportLayerInfo=<layers.json>');
  const layerInfo = { dump: flags.has('--dumpLayerInfo'), ...(exportPath !== undefined ? { exportPath } : {}) };
  return { modelPath, ...(enginePath !== undefined ? { enginePath } : {}), options, json: flags.has('--json'), warnings, ignored, best: flags.has('--best'), layerInfo };
}

/**
 * The old spellings trtexec read as a newer flag: --workspace=N (MiB, deprecated by --memPoolSize
 * in 8.4, gone in 10.0), --plugins (deprecated by --staticPlugins), --nvtxMode (by
 * --profilingVerbosity), --explicitBatch and --explicitPrecision (no effect). Each with its note.
 */
function readRenamedFlags(values: Map<string, string[]>, flags: Set<string>, one: (flag: string) => string | undefined, options: BuildOptionsInput, warnings: string[]): void {
  const workspace = one('--workspace');
  if (workspace !== undefined) {
    const bytes = parsePoolSize('--workspace', workspace);
    if (bytes === 0 || bytes % 2 ** 20 !== 0) throw new UsageError(`--workspace: "${workspace}" must be a positive whole number of MiB (better: --memPoolSize=workspace:<size>)`);
    const mib = bytes / 2 ** 20;
    if (options.workspaceMiB !== undefined && options.workspaceMiB !== mib) {
      throw new UsageError(`--workspace=${workspace} and --memPoolSize=workspace:${options.workspaceMiB}M disagree: give the workspace once, as --memPoolSize=workspace:<size>`);
    }
    options.workspaceMiB = mib;
    warnings.push(RENAMED_FLAG_WARNINGS.workspace(mib));
  }
  const plugins = values.get('--plugins') ?? [];
  if (plugins.length) {
    if (plugins.some((v) => v === '')) throw new UsageError('--plugins needs a file: --staticPlugins=<lib.so>');
    options.staticPlugins = [...(options.staticPlugins ?? []), ...plugins];
    warnings.push(RENAMED_FLAG_WARNINGS.plugins);
  }
  const nvtx = one('--nvtxMode');
  if (nvtx !== undefined) {
    // trtexec 8.x read it into the same variable, then let --profilingVerbosity override it.
    const p = Object.hasOwn(PROFILING, nvtx) ? PROFILING[nvtx] : undefined;
    if (!p) throw new UsageError(`--nvtxMode expects layer_names_only, detailed or none (better: --profilingVerbosity=...), got "${nvtx}"`);
    options.profilingVerbosity ??= p.value;
    warnings.push(RENAMED_FLAG_WARNINGS.nvtxMode);
  }
  if (flags.has('--explicitBatch')) warnings.push(RENAMED_FLAG_WARNINGS.explicitBatch);
  if (flags.has('--explicitPrecision')) warnings.push(RENAMED_FLAG_WARNINGS.explicitPrecision);
}

// ─────────────────────────────────── format ────────────────────────────────

export interface TrtexecFormatInput {
  modelPath: string;
  /** Where trtexec should write the engine; defaults to defaultEnginePath(modelPath, backend). */
  enginePath?: string;
  options: BuildOptionsInput;
  /** The TensorRT version the command is for; flags it lacks or implies are left out. */
  trtVersion?: string;
  /**
   * What that release can do, as its backend reports it (backendCapabilities); read before
   * trtVersion, which serves only where no backend is at hand.
   */
  capabilities?: TrtCapabilities;
  /** The backend the build would run on: the engine then gets the name the service would give it. */
  backend?: BackendInfo;
}

/**
 * Beside the model: with the backend known, under the name the service gives an engine it writes
 * without a path (`<model>.<gpu or "sim">.<TensorRT version>.engine`, engineFileName); without
 * it, the model's name with ".engine".
 */
export function defaultEnginePath(modelPath: string, backend?: BackendInfo): string {
  const slash = Math.max(modelPath.lastIndexOf('/'), modelPath.lastIndexOf('\\'));
  const dir = modelPath.slice(0, slash + 1);
  const base = modelPath.slice(slash + 1);
  if (backend) return dir + engineFileName(base, backend);
  return /\.onnx$/i.test(modelPath) ? modelPath.replace(/\.onnx$/i, '.engine') : `${modelPath}.engine`;
}

/** POSIX shell quoting: bare when safe, else single quotes (with ' written as '\''). */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

type Range = { min: number[]; opt: number[]; max: number[] };

function rangeEntries(r: unknown): Array<[string, Range]> {
  // Only the record form: trtexec-style strings are accepted on input, never produced by a form.
  return r && typeof r === 'object' && !Array.isArray(r) ? Object.entries(r as Record<string, Range>) : [];
}

/**
 * The argument vector of the trtexec command for a build (without "trtexec"). Simulator-only
 * options, fp4 and the options the table gives a `trtexecMissing` have no trtexec flag and are left out
 * (trtexecWarnings says so for those); on TensorRT 11 the precision flags (removed) and --stronglyTyped (implied) are too.
 */
export function trtexecArgs({ modelPath, enginePath, options: o, trtVersion, capabilities, backend }: TrtexecFormatInput): string[] {
  const caps = capabilities ?? (trtVersion ? trtCapabilities(trtVersion) : undefined);
  const args = [`--onnx=${modelPath}`, `--saveEngine=${enginePath ?? defaultEnginePath(modelPath, backend)}`];
  const given = o as Record<string, unknown>;
  for (const { field, trtexec: t } of BUILD_OPTIONS) {
    const value = given[field];
    if (!t) continue;
    if ('pool' in t) {
      // One --memPoolSize for all pools, where the table's first pool stands.
      if (POOLS[t.pool] !== Object.values(POOLS)[0]) continue;
      const pools = Object.entries(POOLS)
        .filter(([, p]) => p.emit && given[p.field] !== undefined)
        .map(([name, p]) => `${name}:${given[p.field] as number}${p.unitName === 'MiB' ? 'M' : 'K'}`);
      if (pools.length > 0) args.push(`--memPoolSize=${pools.join(',')}`);
      continue;
    }
    if (t.emit === false || (t.emitWhen && !t.emitWhen(caps))) continue;
    switch (t.value) {
      case 'number':
      case 'text':
        if (value !== undefined && value !== '') args.push(`${t.flag}=${value as string | number}`);
        break;
      case 'list':
        for (const v of (value as string[] | undefined) ?? []) args.push(`${t.flag}=${v}`);
        break;
      case 'on':
        if (value === true) args.push(t.flag);
        break;
      case 'off':
        if (value === false) args.push(t.flag);
        break;
      case 'custom':
        if (field === 'shapes') {
          const ranges = [...rangeEntries(o.shapes), ...rangeEntries(o.shapeValues)];
          if (ranges.length > 0) {
            for (const w of WHICH) args.push(`${SHAPE_FLAG[w]}=${formatShapeList(ranges.map(([n, r]) => [n, r[w]]))}`);
          }
        } else if (field === 'precision') {
          if (!o.stronglyTyped && !caps?.stronglyTypedImplied) {
            for (const p of o.precision ?? []) if (p !== 'fp4' && (!caps || caps.precisions.includes(p))) args.push(`--${p}`);
          }
        } else if (field === 'profilingVerbosity') {
          if (o.profilingVerbosity) args.push(`--profilingVerbosity=${o.profilingVerbosity}`);
        } else if (field === 'hardwareCompatibility') {
          if (o.hardwareCompatibility) args.push(`--hardwareCompatibilityLevel=${HARDWARE_TRTEXEC[o.hardwareCompatibility]}`);
        }
        break;
    }
  }
  args.push('--skipInference');
  return args;
}

/** The whole command, quoted for a POSIX shell. */
export function formatTrtexecCommand(input: TrtexecFormatInput): string {
  return ['trtexec', ...trtexecArgs(input)].map(shellQuote).join(' ');
}

/**
 * What the command cannot say in trtexec's terms: options it leaves out for want of a trtexec
 * equivalent, and input names trtexec cannot read in a shape flag. Shown next to the copy, so
 * nothing is dropped silently. (Simulator-only options need no word: trtexec builds for real.)
 */
export function trtexecWarnings({ options: o }: TrtexecFormatInput): string[] {
  const warnings: string[] = [];
  for (const [name] of [...rangeEntries(o.shapes), ...rangeEntries(o.shapeValues)]) {
    const why = unsayableInputName(name);
    if (why) warnings.push(`Input "${name}": ${why}, so trtexec would reject this command (trt-build-studio trtexec reads it).`);
  }
  for (const { field, trtexecMissing } of BUILD_OPTIONS) {
    const value = (o as Record<string, unknown>)[field];
    if (!trtexecMissing || value === undefined || value === false) continue;
    const why = trtexecMissing(value as never, o as Record<string, unknown>);
    if (why) warnings.push(why);
  }
  return warnings;
}

/** The command and what it could not say (for the UI's "Copy as trtexec command"). */
export function trtexecCopy(input: TrtexecFormatInput): { text: string; warnings: string[] } {
  return { text: formatTrtexecCommand(input), warnings: trtexecWarnings(input) };
}

/**
 * The --minShapes/--optShapes/--maxShapes arguments for these ranges, quoted for a POSIX shell:
 * for a message that tells a trtexec user what to add.
 */
export function trtexecShapeArgs(ranges: Array<{ name: string; min: number[]; opt: number[]; max: number[] }>): string {
  return WHICH.map((w) => shellQuote(`${SHAPE_FLAG[w]}=${formatShapeList(ranges.map((r) => [r.name, r[w]]))}`)).join(' ');
}
