// `build` command line → StartBuildInput. Flag names follow trtexec where users know them; every
// flag lands on the BuildOptions field of the same meaning (the names HTTP and MCP use too).
import { parseArgs } from 'node:util';
import { BuildOptions, describeZodError, parseShapeSpec, type BackendInfo, type BuildOptionsInput, type Precision, type ShapeRange } from '../shared/protocol.js';
import { backendCapabilities, chosenBackend, versionProblems, type OptionNamer, type TrtCapabilities } from '../shared/trt-capabilities.js';
import { parseShapeList, shapesFromFlags, shellQuote, type Which } from '../shared/trtexec.js';
import type { ShapeExample } from '../service/build-validation.js';
import type { StartBuildInput } from '../service/api.js';
import { UsageError } from '../shared/usage-error.js';
import type { LayerInfoRequest } from './layer-info-export.js';
import { BUILD_OPTIONS, readNumber, type OptionEntry } from '../shared/build-options.js';

/** The precision flags' help lines: which flags the TensorRT version in use has. */
function precisionHelp(caps?: TrtCapabilities): string[] {
  if (!caps) {
    return [
      '      --fp16 --bf16 --int8 --fp8 --int4 --fp4',
      '                                 allow these precisions (weakly typed networks, TensorRT 10.x only;',
      '                                 --int4 from 10.1, --fp4 from 10.8, both deprecated since 10.12 and',
      '                                 only enable plugins with INT4/FP4 I/O). TensorRT 11 has none: it',
      '                                 builds strongly typed networks; cast or quantize the model offline',
    ];
  }
  if (caps.precisions.length === 0) {
    return [
      `  No precision flags on TensorRT ${caps.major}: networks are strongly typed (precision comes from the model);`,
      '  cast or quantize the model offline, e.g. with NVIDIA Model Optimizer.',
    ];
  }
  const lines = [
    `      ${caps.precisions
      .filter((p) => !caps.deprecatedPrecisions.includes(p))
      .map((p) => `--${p}`)
      .join(' ')}`,
    `                                 allow these precisions (weakly typed network${caps.weakTypingDeprecated ? '; deprecated since 10.12, each warns' : ''})`,
    '                                 --int8 without Q/DQ nodes: placeholder ranges, accuracy meaningless (perf only)',
  ];
  if (caps.deprecatedPrecisions.length) {
    lines.push(`      ${caps.deprecatedPrecisions.map((p) => `--${p}`).join(' ')}`.padEnd(33) + 'deprecated: only enable plugins with these I/O types');
  } else {
    const old = caps.precisions.filter((p) => p === 'int4' || p === 'fp4');
    if (old.length) lines.push(`      ${old.map((p) => `--${p}`).join(' ')}`.padEnd(33) + 'only enable plugins with these I/O types');
  }
  return lines;
}

/** Column where flag help starts. */
const HELP_COLUMN = 33;

/** One flag's help lines: the flag, then its text from HELP_COLUMN (continuations aligned under it). */
function flagHelp(usage: string, text: string): string[] {
  const head = `      ${usage}`;
  const [first, ...rest] = text.split('\n');
  const indent = ' '.repeat(HELP_COLUMN);
  const lines = head.length > 40 ? [head, indent + first] : [head.length + 2 <= HELP_COLUMN ? head.padEnd(HELP_COLUMN) + first : `${head}  ${first}`];
  return [...lines, ...rest.map((l) => indent + l)];
}

/** The help lines of the table's options of one section, for the TensorRT version in use. */
function optionHelp(caps: TrtCapabilities | undefined, section: 'simulator' | undefined): string {
  const lines: string[] = [];
  for (const { field, cli } of BUILD_OPTIONS) {
    if (!cli || cli.section !== section || (cli.shown && !cli.shown(caps))) continue;
    if (field === 'precision') lines.push(...precisionHelp(caps));
    else if (cli.flag && cli.help !== undefined) {
      const text = typeof cli.help === 'function' ? cli.help(caps) : cli.help;
      lines.push(...flagHelp(cli.usage ?? `--${cli.flag}${cli.arg ? ` ${cli.arg}` : ''}`, text));
    }
  }
  return lines.join('\n');
}

/**
 * `build --help` for the TensorRT version builds would use (precision flags exist only on 10.x,
 * build routes only from 11.1); without one, every flag with the versions that have it.
 */
export function buildHelp(caps?: TrtCapabilities): string {
  const version = caps ? `\nOptions for TensorRT ${caps.version}, the version builds use here (see \`trt-build-studio backends\`).\n` : '';
  return `Usage: trt-build-studio build <model.onnx> -o <engine> [options]

Builds a TensorRT engine from an ONNX model, showing the build's phases as they happen.
Ctrl-C (or SIGTERM) stops the build at the next step; a second Ctrl-C kills the build worker.
${version}
Options:
  -o, --output <file>            where the engine goes (written atomically; nothing on failure)
${optionHelp(caps, undefined)}
      --time-budget <s>          cancel the build (reason "timeout") after this many seconds
      --dump-layer-info          print the engine's layer information after the build (trtexec's
                                 --dumpLayerInfo; on stderr with --json), as detailed as the
                                 profiling verbosity option above says
      --export-layer-info <file> write it to <file> too, in IEngineInspector's JSON as trtexec's
                                 --exportLayerInfo does (\`layers\` and \`compare\` read it)
      --json                     print protocol events as NDJSON (last line: build.finished)
  Build farm (builds run on \`trt-build-studio worker\` machines; paths must be shared):
      --queue <redis://host:port>  send the build to the farm's queue instead of running it here
      --target <k=v,...>         run only on a worker with these labels, e.g. gpu=A100,trt=10.16.0
      --retries <n>              run again elsewhere if the worker is lost (default 0: "crashed")
  Simulated backend only:
${optionHelp(caps, 'simulator')}
  -h, --help

Exit codes: 0 succeeded, 1 failed or crashed, 2 bad usage or bad input, 130 cancelled.
`;
}

/** How to give shapes to inputs that lack them, in this command's --shapes flag. */
export function buildShapesSuggestion(examples: ShapeExample[]): string {
  const spec = (e: ShapeExample) => shellQuote(`${e.name}:${[e.min, e.opt, e.max].map((d) => d.join('x')).join('/')}`);
  return `give min/opt/max shapes, e.g. ${examples.map((e) => `--shapes ${spec(e)}`).join(' ')}`;
}

/** Version-independent help (every flag, with the versions that have it). */
export const BUILD_HELP = buildHelp();

/** Option names as this command spells them, for version-gate messages. */
export const cliNamer: OptionNamer = (field, value) => (field === 'precision' ? `--${value}` : (flagOf(field) ?? field));

/**
 * The version gates of the backend the build will use, as usage errors naming this command's
 * flags; the service checks the same again (for HTTP and MCP) with the option names.
 */
export function checkCliOptions(options: BuildOptionsInput, backends: BackendInfo[], namer: OptionNamer = cliNamer): void {
  const parsed = BuildOptions.safeParse(options);
  const backend = chosenBackend(parsed.success ? parsed.data.backend : undefined, backends);
  const caps = backendCapabilities(backend);
  if (!parsed.success || !backend || !caps) return; // the service says why
  const problems = versionProblems(parsed.data, caps, namer, backend.buildRoutes);
  if (problems.length) throw new UsageError(problems.join('\n'));
}

/**
 * Help for the TensorRT version in use; the version-independent text when the backends cannot be
 * listed (help must never fail because the addon or a worker did).
 */
export async function versionedBuildHelp(): Promise<string> {
  const { createBuildService } = await import('../service/build-service.js');
  const service = createBuildService();
  try {
    return buildHelp(helpCapabilities(await service.listBackends()));
  } catch {
    return BUILD_HELP;
  } finally {
    await service.shutdown();
  }
}

/** The capabilities `build --help` describes: those of the backend auto would pick. */
export function helpCapabilities(backends: BackendInfo[]): TrtCapabilities | undefined {
  return backendCapabilities(chosenBackend('auto', backends));
}

const PRECISIONS: Precision[] = ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'];

type FlagSpec = { type: 'string' | 'boolean'; multiple?: boolean; short?: string };

/** The flags of the options table's entries that this file reads by hand ('custom'). */
const CUSTOM_FLAGS: Record<string, Record<string, FlagSpec>> = {
  shapes: { shapes: { type: 'string', multiple: true } },
  shapeValues: { minShapes: { type: 'string', multiple: true }, optShapes: { type: 'string', multiple: true }, maxShapes: { type: 'string', multiple: true } },
  precision: Object.fromEntries(PRECISIONS.map((p) => [p, { type: 'boolean' }])),
};

/** Every flag `build` takes: those of the build options (from the table) and the command's own. */
const OPTIONS: Record<string, FlagSpec> = {
  output: { type: 'string', short: 'o' },
  ...Object.fromEntries(
    BUILD_OPTIONS.flatMap(({ field, cli }): Array<[string, FlagSpec]> => {
      if (!cli) return [];
      if (cli.value === 'custom') return Object.entries(CUSTOM_FLAGS[field] ?? {});
      if (cli.value === 'list') return [[cli.flag!, { type: 'string', multiple: true }]];
      return [[cli.flag!, { type: cli.value === 'on' || cli.value === 'off' ? 'boolean' : 'string' }]];
    }),
  ),
  'time-budget': { type: 'string' },
  'dump-layer-info': { type: 'boolean' },
  'export-layer-info': { type: 'string' },
  json: { type: 'boolean' },
  queue: { type: 'string' },
  target: { type: 'string', multiple: true },
  retries: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/** What parseArgs gives back for OPTIONS. */
type FlagValues = Record<string, string | boolean | Array<string | boolean> | undefined>;

/** Option names as this command spells them (from the table), for messages. */
function flagOf(field: string): string | undefined {
  const flag = BUILD_OPTIONS.find((e) => e.field === field)?.cli?.flag;
  return flag ? `--${flag}` : undefined;
}

/** The value of one table entry's flag, read as the table says ('custom' entries are read by hand). */
function optionFromFlag({ cli, range }: OptionEntry, values: FlagValues): unknown {
  if (!cli?.flag) return undefined;
  const v = values[cli.flag];
  switch (cli.value) {
    case 'number':
      if (range?.kind === 'seconds') return seconds(cli.flag, v as string | undefined);
      return int(cli.flag, v as string | undefined, range?.min ?? 0, range?.max);
    case 'text':
      if (range?.kind === 'bytes' && typeof v === 'string') {
        const n = readNumber(range, v);
        if (n === null) throw new UsageError(`--${cli.flag}: invalid memory size "${v}": expected e.g. 512M, 20G, 1.5T (binary units)${range.auto ? ', or auto' : ''}`);
        return n;
      }
      return (v as string | undefined) ?? cli.fallback;
    case 'list': {
      const list = v as string[] | undefined;
      if (list?.some((x) => x === '')) throw new UsageError(`--${cli.flag} needs a value`);
      return list?.length ? list : undefined;
    }
    case 'on':
      return v ? true : undefined;
    case 'off':
      return v ? false : undefined;
    default:
      return undefined;
  }
}

export interface BuildCommand {
  help: boolean;
  json: boolean;
  /** Build farm: the Redis URL the build is queued in. */
  queue?: string;
  /** --dump-layer-info / --export-layer-info: done after a successful build. */
  layerInfo?: LayerInfoRequest;
  input: StartBuildInput;
}

function int(flag: string, v: string | undefined, min: number, max: number = Number.MAX_SAFE_INTEGER): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(`--${flag} expects a whole number${max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : ` >= ${min}`}, got "${v}"`);
  }
  return Number(v);
}

function seconds(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d*\.?\d+$/.test(v) || !(n > 0)) throw new UsageError(`--${flag} expects a positive number of seconds, got "${v}"`);
  return n;
}

/** The long flags that take a value (`--tactic-sources`), as written on a command line. */
const VALUE_FLAGS = new Set(Object.entries(OPTIONS).flatMap(([name, spec]) => (spec.type === 'string' ? [`--${name}`] : [])));
/** The short flags, which a value never stands for (`-o -h` is a forgotten value, not an output named -h). */
const SHORT_FLAGS = new Set(Object.values(OPTIONS).flatMap((spec) => (spec.short ? [`-${spec.short}`] : [])));

/**
 * Values that start with a dash are routine here, as trtexec writes them: tactic sources
 * (`-CUBLAS,+CUDNN`), preview features (`-runtimeActivationResize`), a build route
 * (`-conv_use_long_w=off …`); parseArgs would take each for an option and refuse it as
 * ambiguous. So after a long flag that takes a value, the next word is its value (`--flag -x`
 * becomes `--flag=-x`) when it starts with a single dash and is not one of the short flags (an
 * output named with a dash: `-o ./-x.engine`). A flag with nothing after it, or a flag after it
 * (a word starting with `--`, or a short flag), is a forgotten value: said in one line naming the
 * flag, instead of parseArgs' three lines that suggest `--flag=-XYZ`.
 */
function joinDashValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (!VALUE_FLAGS.has(word)) {
      out.push(word);
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--') || SHORT_FLAGS.has(next)) {
      throw new UsageError(`${word} needs a value${next === undefined ? '' : ` (found ${next} after it)`}`);
    }
    if (next.startsWith('-')) out.push(`${word}=${argv[++i]}`);
    else out.push(word);
  }
  return out;
}

type BuildFlagValues = FlagValues & {
  output?: string;
  shapes?: string[];
  minShapes?: string[];
  optShapes?: string[];
  maxShapes?: string[];
  'time-budget'?: string;
  json?: boolean;
  queue?: string;
  target?: string[];
  retries?: string;
  help?: boolean;
};

function parseFlags(argv: string[]): { values: BuildFlagValues; positionals: string[] } {
  const parsed = parseArgs({ args: joinDashValues(argv), options: OPTIONS, strict: true, allowPositionals: true });
  return { values: parsed.values as BuildFlagValues, positionals: parsed.positionals };
}

/** The build options the flags give (the table's flags, shapes, precisions), validated as the service will. */
function optionsFromFlags(values: BuildFlagValues): BuildOptionsInput {
  const shapes: Record<string, ShapeRange> = {};
  for (const spec of (values.shapes ?? []).flatMap((s) => s.split(',')).filter(Boolean)) {
    try {
      const [name, range] = parseShapeSpec(spec);
      if (shapes[name]) throw new Error(`shapes for "${name}" given twice`);
      shapes[name] = range;
    } catch (e) {
      throw new UsageError(`--shapes: ${(e as Error).message}`);
    }
  }
  // trtexec's spelling: the same profile, one flag per bound (values for shape-tensor inputs).
  // (Their errors are UsageErrors: exit 2.)
  const lists: Partial<Record<Which, Array<[string, number[]]>>> = {};
  for (const w of ['min', 'opt', 'max'] as const) {
    const specs = values[`${w}Shapes`];
    if (specs) lists[w] = specs.flatMap((spec) => parseShapeList(`--${w}Shapes`, spec));
  }
  const trtexecShapes = shapesFromFlags(lists);
  for (const name of Object.keys(trtexecShapes.shapes ?? {})) {
    if (shapes[name]) throw new UsageError(`shapes for "${name}" are given both with --shapes and with --minShapes/--optShapes/--maxShapes; give them once`);
    shapes[name] = trtexecShapes.shapes![name];
  }

  const precision = PRECISIONS.filter((p) => values[p]);
  const options: BuildOptionsInput = {};
  const set = options as Record<string, unknown>;
  for (const entry of BUILD_OPTIONS) set[entry.field] = optionFromFlag(entry, values);
  options.shapes = Object.keys(shapes).length ? shapes : undefined;
  options.shapeValues = trtexecShapes.shapeValues;
  options.precision = precision.length ? precision : undefined;
  for (const k of Object.keys(options) as Array<keyof BuildOptionsInput>) if (options[k] === undefined) delete options[k];
  // Same schema the service applies; checked here too so a typo is a usage error (exit 2) at once.
  const parsed = BuildOptions.safeParse(options);
  if (!parsed.success) {
    const msg = describeZodError(parsed.error).replace(/^(\w+)(?=:)/, (k) => flagOf(k) ?? k);
    throw new UsageError(`invalid option: ${msg}`);
  }
  return options;
}

/**
 * Build options alone, for commands that compare with a build rather than run one (`check
 * <engine> [build options…]`): every flag means what it means to `build`; a model, an output,
 * a farm flag or --time-budget is a usage error naming `command`.
 */
export function parseBuildOptionFlags(argv: string[], command: string, what: string): BuildOptionsInput {
  const { values, positionals } = parseFlags(argv);
  if (positionals.length > 0) throw new UsageError(`${command} takes one ${what}; unexpected: ${positionals.join(' ')}`);
  const notOptions = (['output', 'queue', 'target', 'retries', 'time-budget', 'dump-layer-info', 'export-layer-info'] as const).filter((k) => values[k] !== undefined);
  if (notOptions.length > 0) throw new UsageError(`${command} takes build options, not ${notOptions.map((k) => (k === 'output' ? '-o/--output' : `--${k}`)).join(', ')}`);
  return optionsFromFlags(values);
}

export function parseBuildArgs(argv: string[]): BuildCommand {
  const { values, positionals } = parseFlags(argv);
  if (values.help) return { help: true, json: false, input: { modelPath: '' } };
  if (positionals.length === 0) throw new UsageError('build needs a model: trt-build-studio build <model.onnx> -o <engine>');
  if (positionals.length > 1) throw new UsageError(`build takes one model, got ${positionals.length}: ${positionals.join(' ')}`);
  if (!values.output) throw new UsageError('build needs an output file: -o <engine>');
  const options = optionsFromFlags(values);
  if ((values.target || values.retries !== undefined) && !values.queue) {
    throw new UsageError(`--${values.target ? 'target' : 'retries'} needs --queue redis://host:port (only a build farm routes builds)`);
  }
  let target: Record<string, string> | undefined;
  for (const spec of values.target ?? []) {
    for (const pair of spec
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const eq = pair.indexOf('=');
      if (eq <= 0 || eq === pair.length - 1) throw new UsageError(`--target: "${pair}" is not label=value`);
      (target ??= {})[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  const exportPath = values['export-layer-info'] as string | undefined;
  if (exportPath === '') throw new UsageError('--export-layer-info needs a file: --export-layer-info <layers.json>');
  return {
    help: false,
    json: !!values.json,
    layerInfo: { dump: values['dump-layer-info'] === true, ...(exportPath !== undefined ? { exportPath } : {}) },
    ...(values.queue ? { queue: values.queue } : {}),
    input: {
      ...(target ? { target } : {}),
      ...(values.retries !== undefined ? { retries: int('retries', values.retries, 0, 10) } : {}),
      modelPath: positionals[0],
      outputPath: values.output,
      options,
      timeBudgetSeconds: seconds('time-budget', values['time-budget']),
    },
  };
}
