// `build` command line → StartBuildInput. Flag names follow trtexec where users know them; every
// flag lands on the BuildOptions field of the same meaning (the names HTTP and MCP use too).
import { parseArgs } from 'node:util';
import { BuildOptions, describeZodError, parseShapeSpec, type BuildOptionsInput, type Precision, type ShapeRange } from '../shared/protocol.js';
import type { StartBuildInput } from '../service/api.js';
import { UsageError } from './usage-error.js';

export const BUILD_HELP = `Usage: trt-build-studio build <model.onnx> -o <engine> [options]

Builds a TensorRT engine from an ONNX model, showing the build's phases as they happen.
Ctrl-C (or SIGTERM) stops the build at the next step; a second Ctrl-C kills the build worker.

Options:
  -o, --output <file>            where the engine goes (written atomically; nothing on failure)
      --backend <b>              auto (default: TensorRT when present, else simulated) | tensorrt | simulated
      --timing-cache <file>      timing cache to read and update (created when missing)
      --opt-level <0-5>          builder optimization level (TensorRT default 3)
      --workspace <MiB>          workspace memory pool limit
      --shapes <in:min/opt/max>  shapes of a dynamic input, trtexec style, e.g.
                                 x:1x3x224x224/4x3x224x224/8x3x224x224 (repeat per input, or
                                 separate with commas); one shape means min = opt = max
      --strongly-typed           strongly typed network (precision from the model)
      --fp16 --bf16 --int8 --fp8 --int4 --fp4
                                 allow these precisions (weakly typed networks, TensorRT 10.x)
      --no-tf32                  disallow TF32
      --profiling-verbosity <v>  layer_names_only | none | detailed
      --hardware-compatibility <h>  none | ampere_plus | same_compute_capability
      --max-aux-streams <n>      auxiliary streams per inference
      --time-budget <s>          cancel the build (reason "timeout") after this many seconds
      --json                     print protocol events as NDJSON (last line: build.finished)
  Build farm (builds run on \`trt-build-studio worker\` machines; paths must be shared):
      --queue <redis://host:port>  send the build to the farm's queue instead of running it here
      --target <k=v,...>         run only on a worker with these labels, e.g. gpu=A100,trt=10.16.0
      --retries <n>              run again elsewhere if the worker is lost (default 0: "crashed")
  Simulated backend only:
      --sim-duration <s>         target wall time in seconds (fractions allowed)
      --sim-seed <n>             seed (same seed → same build)
      --sim-fault <f>            fail | crash | hang, optionally @<phase name>
  -h, --help

Exit codes: 0 succeeded, 1 failed or crashed, 2 bad usage or bad input, 130 cancelled.
`;

const PRECISIONS: Precision[] = ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'];

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  backend: { type: 'string' },
  'timing-cache': { type: 'string' },
  'opt-level': { type: 'string' },
  workspace: { type: 'string' },
  shapes: { type: 'string', multiple: true },
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

export function parseBuildArgs(argv: string[]): BuildCommand {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true });
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

  const precision = PRECISIONS.filter((p) => values[p]);
  const options: BuildOptionsInput = {
    backend: (values.backend ?? 'auto') as BuildOptionsInput['backend'],
    timingCache: values['timing-cache'],
    optLevel: int('opt-level', values['opt-level'], 0, 5),
    workspaceMiB: int('workspace', values.workspace, 1),
    shapes: Object.keys(shapes).length ? shapes : undefined,
    stronglyTyped: values['strongly-typed'] || undefined,
    precision: precision.length ? precision : undefined,
    tf32: values['no-tf32'] ? false : undefined,
    profilingVerbosity: values['profiling-verbosity'] as BuildOptionsInput['profilingVerbosity'],
    hardwareCompatibility: values['hardware-compatibility'] as BuildOptionsInput['hardwareCompatibility'],
    maxAuxStreams: int('max-aux-streams', values['max-aux-streams'], 0),
    simDuration: seconds('sim-duration', values['sim-duration']),
    simSeed: int('sim-seed', values['sim-seed'], 0),
    simFault: values['sim-fault'],
  };
  for (const k of Object.keys(options) as Array<keyof BuildOptionsInput>) if (options[k] === undefined) delete options[k];
  // Same schema the service applies; checked here too so a typo is a usage error (exit 2) at once.
  const parsed = BuildOptions.safeParse(options);
  if (!parsed.success) {
    const flagOf: Record<string, string> = { backend: '--backend', simFault: '--sim-fault', profilingVerbosity: '--profiling-verbosity', hardwareCompatibility: '--hardware-compatibility' };
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
