// `build` command line → StartBuildInput. Flag names follow trtexec where users know them; every
// flag lands on the BuildOptions field of the same meaning (the names HTTP and MCP use too).
import { parseArgs } from 'node:util';
import { BuildOptions, describeZodError, OPTION_LIMITS, parseShapeSpec, type BackendInfo, type BuildOptionsInput, type Precision, type ShapeRange } from '../shared/protocol.js';
import {
  chosenBackend,
  trtCapabilities,
  trtVersionOf,
  versionProblems,
  type OptionNamer,
  type TrtCapabilities,
} from '../shared/trt-capabilities.js';
import { parseShapeList, shapesFromFlags, shellQuote, TrtexecUsageError, type Which } from '../shared/trtexec.js';
import type { ShapeExample } from '../service/build-validation.js';
import type { StartBuildInput } from '../service/api.js';
import { UsageError } from './usage-error.js';

/**
 * `build --help` for the TensorRT version builds would use (precision flags exist only on 10.x,
 * build routes only from 11.1); without one, every flag with the versions that have it.
 */
export function buildHelp(caps?: TrtCapabilities): string {
  const precisionLines = (): string[] => {
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
    const lines = [`      ${caps.precisions.filter((p) => !caps.deprecatedPrecisions.includes(p)).map((p) => `--${p}`).join(' ')}`,
      `                                 allow these precisions (weakly typed network${caps.weakTypingDeprecated ? '; deprecated since 10.12, each warns' : ''})`,
      '                                 --int8 without Q/DQ nodes: placeholder ranges, accuracy meaningless (perf only)'];
    if (caps.deprecatedPrecisions.length) {
      lines.push(`      ${caps.deprecatedPrecisions.map((p) => `--${p}`).join(' ')}`.padEnd(33) + 'deprecated: only enable plugins with these I/O types');
    } else {
      const old = caps.precisions.filter((p) => p === 'int4' || p === 'fp4');
      if (old.length) lines.push(`      ${old.map((p) => `--${p}`).join(' ')}`.padEnd(33) + 'only enable plugins with these I/O types');
    }
    return lines;
  };
  const typed = caps?.stronglyTypedImplied
    ? []
    : ['      --strongly-typed           strongly typed network (precision from the model; not with precision flags)'];
  const hw = caps ? caps.hardwareCompatibility.join(' | ') : 'none | ampere_plus | same_compute_capability (10.9+)';
  const route = !caps || caps.buildRoutes ? [
        '      --build-route <route>      build route (TensorRT 11.1+): knob settings, e.g. "-conv_use_long_w=off',
        '                                 -kgen:codegen:cuda_tile=2"; `trtexec --helpBuildRoute` lists the knobs',
      ] : [];
  const version = caps ? `\nOptions for TensorRT ${caps.version}, the version builds use here (see \`trt-build-studio backends\`).\n` : '';
  return `Usage: trt-build-studio build <model.onnx> -o <engine> [options]

Builds a TensorRT engine from an ONNX model, showing the build's phases as they happen.
Ctrl-C (or SIGTERM) stops the build at the next step; a second Ctrl-C kills the build worker.
${version}
Options:
  -o, --output <file>            where the engine goes (written atomically; nothing on failure)
      --backend <b>              auto (default: TensorRT when present, else simulated) | tensorrt | simulated
      --timing-cache <file>      timing cache to read and update (created when missing)
      --opt-level <0-5>          builder optimization level (TensorRT default 3)
      --workspace <MiB>          workspace memory pool limit
      --tactic-shared-memory <KiB>  tactic shared memory pool limit (trtexec's tacticSharedMem)
      --tactic-dram <MiB>        tactic DRAM pool limit (no trtexec flag)
      --shapes <in:min/opt/max>  shapes of a dynamic input, e.g.
                                 x:1x3x224x224/4x3x224x224/8x3x224x224 (repeat per input, or
                                 separate with commas); one shape means min = opt = max
      --minShapes, --optShapes, --maxShapes <in:dims,...>
                                 the same the way trtexec writes it, e.g. --minShapes x:1x3x224x224;
                                 for shape-tensor inputs these give their values
${[...typed, ...precisionLines()].join('\n')}
      --no-tf32                  disallow TF32
      --profiling-verbosity <v>  layer_names_only | none | detailed
      --hardware-compatibility <h>  ${hw}
      --max-aux-streams <n>      auxiliary streams per inference
      --device <n>               CUDA device index (default 0)
${route.length ? route.join('\n') + '\n' : ''}      --infer-cache-misses       count timing-cache misses from TensorRT's log (turns on the editable
                                 cache and verbose logging: a few percent slower)
      --verbose                  pass TensorRT's VERBOSE log lines on and print them (a large
                                 build logs very many; --json carries them as log events)
      --time-budget <s>          cancel the build (reason "timeout") after this many seconds
      --json                     print protocol events as NDJSON (last line: build.finished)
  Build farm (builds run on \`trt-build-studio worker\` machines; paths must be shared):
      --queue <redis://host:port>  send the build to the farm's queue instead of running it here
      --target <k=v,...>         run only on a worker with these labels, e.g. gpu=A100,trt=10.16.0
      --retries <n>              run again elsewhere if the worker is lost (default 0: "crashed")
  Simulated backend only:
      --sim-duration <s>         target wall time in seconds (fractions allowed)
      --sim-seed <n>             seed (same seed → same build; default 1)
      --sim-fault <f>            fail | crash | hang, optionally @<phase name>
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
export const cliNamer: OptionNamer = (field, value) =>
  field === 'precision' ? `--${value}` : field === 'stronglyTyped' ? '--strongly-typed' : field === 'buildRoute' ? '--build-route' : '--hardware-compatibility';

/**
 * The version gates of the backend the build will use, as usage errors naming this command's
 * flags; the service checks the same again (for HTTP and MCP) with the option names.
 */
export function checkCliOptions(options: BuildOptionsInput, backends: BackendInfo[], namer: OptionNamer = cliNamer): void {
  const parsed = BuildOptions.safeParse(options);
  const backend = chosenBackend(parsed.success ? parsed.data.backend : undefined, backends);
  const version = trtVersionOf(backend);
  if (!parsed.success || !backend || !version) return; // the service says why
  const problems = versionProblems(parsed.data, trtCapabilities(version), namer, backend.buildRoutes);
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
  const v = trtVersionOf(chosenBackend('auto', backends));
  return v ? trtCapabilities(v) : undefined;
}

const PRECISIONS: Precision[] = ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'];

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  backend: { type: 'string' },
  'timing-cache': { type: 'string' },
  'opt-level': { type: 'string' },
  workspace: { type: 'string' },
  'tactic-shared-memory': { type: 'string' },
  'tactic-dram': { type: 'string' },
  shapes: { type: 'string', multiple: true },
  minShapes: { type: 'string', multiple: true },
  optShapes: { type: 'string', multiple: true },
  maxShapes: { type: 'string', multiple: true },
  device: { type: 'string' },
  'build-route': { type: 'string' },
  'infer-cache-misses': { type: 'boolean' },
  verbose: { type: 'boolean' },
  'strongly-typed': { type: 'boolean' },
  fp16: { type: 'boolean' },
  bf16: { type: 'boolean' },
  int8: { type: 'boolean' },
  fp8: { type: 'boolean' },
  int4: { type: 'boolean' },
  fp4: { type: 'boolean' },
  'no-tf32': { type: 'boolean' },
  'profiling-verbosity': { type: 'string' },
  'hardware-compatibility': { type: 'string' },
  'max-aux-streams': { type: 'string' },
  'time-budget': { type: 'string' },
  json: { type: 'boolean' },
  queue: { type: 'string' },
  target: { type: 'string', multiple: true },
  retries: { type: 'string' },
  'sim-duration': { type: 'string' },
  'sim-seed': { type: 'string' },
  'sim-fault': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface BuildCommand {
  help: boolean;
  json: boolean;
  /** Build farm: the Redis URL the build is queued in. */
  queue?: string;
  input: StartBuildInput;
}

function int(flag: string, v: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
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

/**
 * A build route starts with a dash (`-conv_use_long_w=off …`), which parseArgs would take for an
 * option: `--build-route <route>` becomes `--build-route=<route>` first.
 */
function joinDashValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--build-route' && i + 1 < argv.length) out.push(`--build-route=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

export function parseBuildArgs(argv: string[]): BuildCommand {
  const { values, positionals } = parseArgs({ args: joinDashValues(argv), options: OPTIONS, strict: true, allowPositionals: true });
  if (values.help) return { help: true, json: false, input: { modelPath: '' } };
  if (positionals.length === 0) throw new UsageError('build needs a model: trt-build-studio build <model.onnx> -o <engine>');
  if (positionals.length > 1) throw new UsageError(`build takes one model, got ${positionals.length}: ${positionals.join(' ')}`);
  if (!values.output) throw new UsageError('build needs an output file: -o <engine>');

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
  let trtexecShapes: ReturnType<typeof shapesFromFlags> = {};
  try {
    const lists: Partial<Record<Which, Array<[string, number[]]>>> = {};
    for (const w of ['min', 'opt', 'max'] as const) {
      const specs = values[`${w}Shapes`];
      if (specs) lists[w] = specs.flatMap((spec) => parseShapeList(`--${w}Shapes`, spec));
    }
    trtexecShapes = shapesFromFlags(lists);
  } catch (e) {
    if (e instanceof TrtexecUsageError) throw new UsageError(e.message);
    throw e;
  }
  for (const name of Object.keys(trtexecShapes.shapes ?? {})) {
    if (shapes[name]) throw new UsageError(`shapes for "${name}" are given both with --shapes and with --minShapes/--optShapes/--maxShapes; give them once`);
    shapes[name] = trtexecShapes.shapes![name];
  }

  const precision = PRECISIONS.filter((p) => values[p]);
  const options: BuildOptionsInput = {
    backend: (values.backend ?? 'auto') as BuildOptionsInput['backend'],
    timingCache: values['timing-cache'],
    optLevel: int('opt-level', values['opt-level'], 0, 5),
    workspaceMiB: int('workspace', values.workspace, 1, OPTION_LIMITS.poolMiB),
    tacticSharedMemoryKiB: int('tactic-shared-memory', values['tactic-shared-memory'], 1, OPTION_LIMITS.poolKiB),
    tacticDramMiB: int('tactic-dram', values['tactic-dram'], 1, OPTION_LIMITS.poolMiB),
    shapes: Object.keys(shapes).length ? shapes : undefined,
    stronglyTyped: values['strongly-typed'] || undefined,
    precision: precision.length ? precision : undefined,
    tf32: values['no-tf32'] ? false : undefined,
    profilingVerbosity: values['profiling-verbosity'] as BuildOptionsInput['profilingVerbosity'],
    hardwareCompatibility: values['hardware-compatibility'] as BuildOptionsInput['hardwareCompatibility'],
    maxAuxStreams: int('max-aux-streams', values['max-aux-streams'], 0, OPTION_LIMITS.int32),
    device: int('device', values.device, 0, OPTION_LIMITS.int32),
    shapeValues: trtexecShapes.shapeValues,
    buildRoute: values['build-route'],
    inferCacheMisses: values['infer-cache-misses'] || undefined,
    verboseLog: values.verbose || undefined,
    simDuration: seconds('sim-duration', values['sim-duration']),
    simSeed: int('sim-seed', values['sim-seed'], 0),
    simFault: values['sim-fault'],
  };
  for (const k of Object.keys(options) as Array<keyof BuildOptionsInput>) if (options[k] === undefined) delete options[k];
  // Same schema the service applies; checked here too so a typo is a usage error (exit 2) at once.
  const parsed = BuildOptions.safeParse(options);
  if (!parsed.success) {
    const flagOf: Record<string, string> = {
      backend: '--backend',
      simFault: '--sim-fault',
      profilingVerbosity: '--profiling-verbosity',
      hardwareCompatibility: '--hardware-compatibility',
      buildRoute: '--build-route',
    };
    const msg = describeZodError(parsed.error).replace(/^(\w+)(?=:)/, (k) => flagOf[k] ?? k);
    throw new UsageError(`invalid option: ${msg}`);
  }
  if ((values.target || values.retries !== undefined) && !values.queue) {
    throw new UsageError(`--${values.target ? 'target' : 'retries'} needs --queue redis://host:port (only a build farm routes builds)`);
  }
  let target: Record<string, string> | undefined;
  for (const spec of values.target ?? []) {
    for (const pair of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
      const eq = pair.indexOf('=');
      if (eq <= 0 || eq === pair.length - 1) throw new UsageError(`--target: "${pair}" is not label=value`);
      (target ??= {})[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return {
    help: false,
    json: !!values.json,
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
