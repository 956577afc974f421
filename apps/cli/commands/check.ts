// `check <engine> [--model m.onnx] [build options…] [--json]`: does the engine still fit this
// machine, this model and these options? Exit 0 fits, 1 needs a rebuild, 3 unknown, 2 bad usage.
// The build options are read by the `build` command's own parser (build-args.ts), so every flag
// means here what it means there.
import { createBuildService } from '../../service/build-service.js';
import { checkEngine } from '../../service/engine-check.js';
import { displayText } from '../../shared/display-text.js';
import { CHECK_EXIT_CODES, formatReason, type CheckResult } from '../../shared/engine-manifest.js';
import { parseBuildOptionFlags } from '../build-args.js';
import { endQuietlyWhenStdoutCloses } from '../closed-stdout.js';
import { UsageError } from '../../shared/usage-error.js';

export const CHECK_HELP = `Usage: trt-build-studio check <engine> [--model m.onnx] [build options…] [--json]

Says whether an engine still fits: this machine's TensorRT version and GPU, the model's bytes,
and the build options given (as \`build\` takes them; defaults count). It reads the manifest
written beside the engine (<engine>.manifest.json) and names every reason with both values.

  fits              exit 0
  needs a rebuild   exit 1: each reason names what changed, as built and now
  unknown           exit 3: no manifest, a manifest that describes other bytes, no backend or
                    GPU here to compare with (each named)

Options:
  --model <file>    the model to compare with (default: the model the manifest names, if it is
                    still there)
  build options     e.g. --opt-level 5 --shapes x:1x3/4x3/8x3 (see \`build --help\`); without
                    any, the options are not compared
  --json            print the answer as one JSON object (verdict, reasons, missing, notes)
  -h, --help
`;

interface CheckArgs {
  help: boolean;
  json: boolean;
  engine?: string;
  model?: string;
  /** The build flags given, still unparsed. */
  buildFlags: string[];
}

export function parseCheckArgs(argv: string[]): CheckArgs {
  const out: CheckArgs = { help: false, json: false, buildFlags: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') out.help = true;
    else if (a === '--json') out.json = true;
    else if (a === '--model' || a.startsWith('--model=')) {
      const v = a === '--model' ? argv[++i] : a.slice('--model='.length);
      if (!v) throw new UsageError('--model needs a file');
      if (out.model !== undefined) throw new UsageError('--model given twice');
      out.model = v;
    } else if (out.engine === undefined && !a.startsWith('-')) out.engine = a;
    else out.buildFlags.push(a);
  }
  return out;
}

export async function runCheck(argv: string[]): Promise<number> {
  const args = parseCheckArgs(argv);
  endQuietlyWhenStdoutCloses();
  if (args.help) {
    process.stdout.write(CHECK_HELP);
    return 0;
  }
  if (!args.engine) throw new UsageError('check needs an engine: trt-build-studio check <engine>');
  let options: unknown;
  if (args.buildFlags.length > 0) options = parseBuildOptionFlags(args.buildFlags, 'check', 'engine');
  const service = createBuildService({ profiles: null });
  let result: CheckResult;
  try {
    result = await checkEngine({ enginePath: args.engine, modelPath: args.model, options }, () => service.listBackends());
  } finally {
    await service.shutdown();
  }
  if (args.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  else process.stdout.write(formatCheck(result));
  return CHECK_EXIT_CODES[result.verdict];
}

/** The answer for a terminal: verdict and engine, then one line per reason, missing fact and note. */
export function formatCheck(r: CheckResult): string {
  const t = displayText;
  const head = { fits: 'fits', rebuild: 'needs a rebuild', unknown: 'unknown' }[r.verdict];
  const lines = [`${head}: ${t(r.engine)}`];
  for (const x of r.reasons) lines.push(`  ${t(formatReason(x))}`);
  for (const m of r.missing) lines.push(`  missing: ${t(m.message)}`);
  for (const n of r.notes) lines.push(`  note: ${t(n)}`);
  return lines.join('\n') + '\n';
}
