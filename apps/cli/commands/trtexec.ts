// `trtexec <trtexec flags>`: the build a trtexec command line describes, run the way `build` runs
// it (live phases, cancel, timing cache, same exit codes). For people with trtexec commands in
// scripts and notes; the flags are trtexec's own spelling, parsed by the same module that writes
// the app's "Copy as trtexec command".
import * as fs from 'node:fs';
import { knobEntriesJson, parseKnobDatabase } from '../../shared/build-routes.js';
import type { BackendInfo, BuildOptionsInput } from '../../shared/protocol.js';
import { BackendChoice } from '../../shared/protocol.js';
import { BUILD_OPTIONS } from '../../shared/build-options.js';
import { backendCapabilities, chosenBackend, trtVersionOf, type TrtCapabilities } from '../../shared/trt-capabilities.js';
import { parseTrtexecArgs, SUPPORTED_TRTEXEC_FLAGS, TRTEXEC_POOLS, trtexecShapeArgs } from '../../shared/trtexec.js';
import { bestPrecisions, ignoredFlagsNote } from '../../shared/trtexec-other-flags.js';
import { ServiceError } from '../../service/api.js';
import type { ShapesError } from '../../service/build-validation.js';
import { checkCliOptions, helpCapabilities } from '../build-args.js';
import { UsageError } from '../../shared/usage-error.js';
import { inputErrorFinished, runBuildInput } from './build.js';
import { layerInfoAfterBuild } from '../layer-info-export.js';

const TRTEXEC_LAYER_WORDS = { command: 'trtexec', dumpFlag: '--dumpLayerInfo', exportFlag: '--exportLayerInfo' };

/**
 * The options table's trtexec flags, for the TensorRT version in use: short ones several to a
 * line, long ones (with a description) on lines of their own, in the table's order.
 */
function tableFlagHelp(caps: TrtCapabilities | undefined): string {
  const lines: string[] = [];
  let line = '';
  const flush = () => {
    if (line) lines.push(`  ${line}`);
    line = '';
  };
  for (const { trtexec: t } of BUILD_OPTIONS) {
    if (!t) continue;
    if ('pool' in t) {
      if (t.pool !== TRTEXEC_POOLS[0]) continue;
      flush();
      const [first, ...more] = TRTEXEC_POOLS.map((p) => `${p}:<size>`);
      lines.push(`  --memPoolSize=${first}${more.map((m) => `[,${m}]`).join('')}   size in MiB, or suffixed B, K, M, G (any case)`);
      continue;
    }
    if (!t.help || (t.emitWhen && !t.emitWhen(caps))) continue;
    const text = typeof t.help === 'function' ? t.help(caps) : t.help;
    if (text.length > 40) {
      flush();
      lines.push(`  ${text}`);
    } else line = line ? `${line} ${text}` : text;
  }
  line = line ? `${line} --skipInference --best` : '--skipInference --best';
  flush();
  return lines.join('\n');
}

export function trtexecHelp(backends?: BackendInfo[]): string {
  const caps = backends ? helpCapabilities(backends) : undefined;
  const precision = !caps
    ? '  --fp16 --bf16 --int8 --fp8 --int4   precision flags (TensorRT 10.x only; --int4 deprecated since 10.12)\n'
    : caps.precisions.length
      ? `  ${caps.precisions
          .filter((p) => p !== 'fp4')
          .map((p) => `--${p}`)
          .join(' ')}   precision flags${caps.deprecatedPrecisions.includes('int4') ? ' (--int4 deprecated)' : ''}\n`
      : '  (no precision flags on TensorRT 11: networks are strongly typed)\n';
  return `Usage: trt-build-studio trtexec --onnx=<model.onnx> [--saveEngine=<engine>] [trtexec flags]

Runs the engine build a trtexec command line describes, with this tool's live view of the build.
Flags use trtexec's spelling (--flag=value); no inference is run (--skipInference and its old
name --buildOnly are implied). Without --saveEngine the engine goes where \`build\` puts engines
it is not told where to write: <model>.<gpu or sim>.<TensorRT version>.engine in the
trt-build-studio/engines folder of the system's temporary folder; the output names the file.
${caps ? `Flags for TensorRT ${caps.version}, the version builds use here.\n` : ''}
Supported trtexec flags:
  --onnx=<file> --saveEngine=<file>
${tableFlagHelp(caps)}
${!caps || caps.buildRoutes ? '  --helpBuildRoute[=<knob>]   (11.1+) print the knob database (or one knob) as JSON and exit\n' : ''}${precision}Also read, with trtexec's deprecation warning: --workspace=<MiB> (as --memPoolSize=workspace),
  --plugins (as --staticPlugins), --nvtxMode (as --profilingVerbosity), --buildOnly,
  --explicitBatch. --best: FP16 and INT8, and BF16 on compute capability 8.0+, as trtexec 10.x
  (TensorRT 11 has no --best: networks are strongly typed).
Inference-only flags (--iterations, --warmUp, --duration, --useCudaGraph, --noDataTransfers,
  --separateProfileRun, --dumpProfile, --exportTimes, ...) are accepted and listed once as ignored.
Layer information: --dumpLayerInfo (print it after the build), --exportLayerInfo=<file> (write it
  there; both need --saveEngine), detail as --profilingVerbosity says. Sizes also take KiB/MiB/GiB.
Build flags this tool does not carry (--refit, --safe, --profile, ...) exit 2 naming the flag and why.
This tool's own:
  --backend=auto|tensorrt|simulated   --json (NDJSON events)   -h, --help

Any other flag exits 2 naming it. Exit codes as for \`build\`.
`;
}

/** trtexec's flag names (from the options table) in version-gate messages. */
const trtexecNamer = (field: string, value?: string) => {
  const t = BUILD_OPTIONS.find((e) => e.field === field)?.trtexec;
  return field === 'precision' ? `--${value}` : t && 'flag' in t ? t.flag : field;
};

/**
 * `--helpBuildRoute[=<knob>]`, as trtexec 11.1: the knob database of the backend a build would use,
 * as JSON (getAllBuildRoutes()' form), or the one knob named (leading dash optional). Other flags
 * but --backend are ignored. With TensorRT the database is read from the library when no earlier
 * read left it on disk (the service asks a worker: the addon creates a builder off the JS thread
 * and keeps the JSON on disk). A knob that is not in the database, or a backend without build
 * routes, is a usage error naming it; a library that cannot list them is a failure (exit 1).
 */
async function printBuildRouteHelp(argv: string[], flag: string): Promise<number> {
  // `--helpBuildRoute=` with no knob is the whole database, as in trtexec.
  const knob = (flag.includes('=') ? flag.slice(flag.indexOf('=') + 1) : '') || undefined;
  const choiceArg = argv.find((a) => a.startsWith('--backend='))?.slice('--backend='.length);
  const choice = BackendChoice.safeParse(choiceArg ?? 'auto');
  if (!choice.success) throw new UsageError(`--backend must be auto, tensorrt or simulated, got "${choiceArg}"`);
  const { createBuildService } = await import('../../service/build-service.js');
  const service = createBuildService();
  let read;
  try {
    read = await service.readBuildRoutes(choice.data);
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'bad_input') throw new UsageError(`--helpBuildRoute: ${e.message}`);
    throw e;
  } finally {
    await service.shutdown();
  }
  // As trtexec: without a knob, the database exactly as the library returned it. An empty one is
  // an answer (this build of TensorRT lists no routes), said on stderr.
  if (knob === undefined) {
    process.stdout.write(read.json + '\n');
    if (read.json.trim() === '') process.stderr.write(`--helpBuildRoute: TensorRT ${read.version} lists no build routes (its knob database is empty)\n`);
    return 0;
  }
  let db;
  let entries;
  try {
    db = parseKnobDatabase(read.json);
    entries = knobEntriesJson(read.json, knob);
  } catch (e) {
    throw new ServiceError('internal', `--helpBuildRoute: the ${read.backend} backend (TensorRT ${read.version}) returned ${(e as Error).message}`);
  }
  if (entries === undefined) {
    const known = db.knobs.length > 0 ? `knobs: ${db.knobs.map((k) => k.option).join(', ')}` : `TensorRT ${read.version} lists no build routes`;
    throw new UsageError(`--helpBuildRoute=${knob}: no such knob in the database (${known}). Run --helpBuildRoute without a value to see them all.`);
  }
  process.stdout.write(entries + '\n');
  return 0;
}

/**
 * --best on the backend the build will use: its precisions added to the options (with the note
 * that says which, on stderr), or a usage error on TensorRT 11 / with --stronglyTyped. Without a
 * backend that can build, the options go on unchanged and the service says why.
 */
function resolveBest(options: BuildOptionsInput, backends: BackendInfo[]): BuildOptionsInput {
  const backend = chosenBackend(options.backend, backends);
  const version = trtVersionOf(backend);
  if (!backend || !version) return options;
  // On 11.x or with --stronglyTyped this throws a UsageError: exit 2.
  const best = bestPrecisions(version, backend.gpu?.computeCapability, options.stronglyTyped === true, backendCapabilities(backend));
  process.stderr.write(`trt-build-studio trtexec: warning: ${best.warning}\n`);
  return { ...options, precision: [...new Set([...(options.precision ?? []), ...best.precision])] };
}

export async function runTrtexec(argv: string[]): Promise<number> {
  const helpRoute = argv.find((a) => a === '--helpBuildRoute' || a.startsWith('--helpBuildRoute='));
  if (helpRoute !== undefined && !argv.includes('-h') && !argv.includes('--help')) return printBuildRouteHelp(argv, helpRoute);
  if (argv.includes('-h') || argv.includes('--help')) {
    const { createBuildService } = await import('../../service/build-service.js');
    const service = createBuildService();
    let backends: BackendInfo[] | undefined;
    try {
      backends = await service.listBackends();
    } catch {
      // Help must not fail because no worker could list backends: the general text will do.
    } finally {
      await service.shutdown();
    }
    process.stdout.write(trtexecHelp(backends));
    return 0;
  }
  if (argv.length === 0) throw new UsageError(`trtexec needs at least --onnx=<model.onnx> (supported: ${SUPPORTED_TRTEXEC_FLAGS.join(' ')})`);
  // A bad command line throws a UsageError: exit 2. With --json,
  // stdout still ends with the contract's build.finished (for no build), as build's does.
  const startedAt = Date.now();
  let parsed: ReturnType<typeof parseTrtexecArgs>;
  try {
    parsed = parseTrtexecArgs(argv);
    if ((parsed.layerInfo.dump || parsed.layerInfo.exportPath !== undefined) && parsed.enginePath === undefined) {
      throw new UsageError("--dumpLayerInfo/--exportLayerInfo need --saveEngine here: the layer information is read from the engine's .layers.json after the build");
    }
  } catch (e) {
    if (argv.includes('--json')) {
      try {
        fs.writeSync(1, `${JSON.stringify(inputErrorFinished(e, Date.now() - startedAt))}\n`);
      } catch {
        // The reader is gone: nothing to end.
      }
    }
    throw e;
  }
  // On stderr, so --json output stays pure NDJSON; worded as trtexec words them.
  for (const w of parsed.warnings) process.stderr.write(`trt-build-studio trtexec: warning: ${w}\n`);
  const ignored = ignoredFlagsNote(parsed.ignored);
  if (ignored) process.stderr.write(`trt-build-studio trtexec: ${ignored}\n`);
  try {
    const code = await runBuildInput(
      { modelPath: parsed.modelPath, ...(parsed.enginePath !== undefined ? { outputPath: parsed.enginePath } : {}), options: parsed.options },
      parsed.json,
      (options: BuildOptionsInput, backends: BackendInfo[]) => {
        const withBest = parsed.best ? resolveBest(options, backends) : options;
        checkCliOptions(withBest, backends, trtexecNamer);
        return withBest;
      },
    );
    return code === 0 ? layerInfoAfterBuild(parsed.enginePath, parsed.layerInfo, parsed.json, TRTEXEC_LAYER_WORDS) : code;
  } catch (e) {
    // Inputs without shapes: say how to give them in trtexec's flags, not in another surface's.
    // (Recognised by its restate(): importing the class would load the model reader before the
    // build's signal handlers are in place.)
    if (e instanceof ServiceError && typeof (e as Partial<ShapesError>).restate === 'function') {
      throw new ServiceError(
        e.code,
        (e as ShapesError).restate((examples) => `give min/opt/max shapes in trtexec's flags, e.g. ${trtexecShapeArgs(examples)}`),
      );
    }
    throw e;
  }
}
