// `layers <engine | layer JSON> [--profile <profile JSON>] [--expect <precision>] [--json]`: what
// TensorRT built, layer by layer, from IEngineInspector's JSON (saved beside each engine this
// product builds, or written by trtexec --exportLayerInfo) and trtexec's --exportProfile.
import { parseArgs } from 'node:util';
import { loadEngineLayers } from '../../service/engine-layers-file.js';
import { checkPrecision, LAYER_PRECISIONS, precisionCheckText, type EngineLayer, type EngineLayers, type LayerPrecision } from '../../shared/engine-layers.js';
import { displayText } from '../../shared/display-text.js';
import { UsageError } from '../../shared/usage-error.js';
import { endQuietlyWhenStdoutCloses } from '../closed-stdout.js';

export const LAYERS_HELP = `Usage: trt-build-studio layers <engine | layers.json> [--profile <profile.json>] [--expect <precision>] [--json]

What TensorRT built, layer by layer: each layer's type, precision (its first output's data type),
format, tactic and the operations fused into it, with times and shares where a profile is given.

<engine> reads <engine>.layers.json beside it (saved by every build of this product); a .json file
is read as IEngineInspector's JSON, as \`trtexec --exportLayerInfo=<f> --profilingVerbosity=detailed\`
writes it (TensorRT 10.x or 11.x). Below detailed verbosity layers are bare names: only names show.

Options:
  --profile <f>        trtexec --exportProfile=<f> of the same engine: per-layer times
  --expect <p>         exit 1 when a compute layer runs wider than <p> (${LAYER_PRECISIONS.filter((p) => !['int32', 'int64', 'bool', 'uint8'].includes(p)).join(', ')}), listing them
  --json               print { layers, summary, io, check? } as one JSON object
  -h, --help
`;

export async function runLayers(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { profile: { type: 'string' }, expect: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  endQuietlyWhenStdoutCloses();
  if (values.help) {
    process.stdout.write(LAYERS_HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`layers takes one engine or layer JSON file, got ${positionals.length}`);
  const expect = values.expect?.toLowerCase();
  if (expect !== undefined && !(LAYER_PRECISIONS as readonly string[]).includes(expect)) {
    throw new UsageError(`--expect takes one of ${LAYER_PRECISIONS.join(', ')}, got "${values.expect}"`);
  }
  const read = loadEngineLayers(positionals[0]!, values.profile);
  const check = expect !== undefined ? checkPrecision(read.layers, expect as LayerPrecision) : undefined;
  if (values.json) {
    const { layers, summary, io, schema, detailed, files } = read;
    process.stdout.write(`${JSON.stringify({ files, schema, detailed, layers, summary, io, ...(check ? { check } : {}) }, null, 2)}\n`);
  } else {
    process.stdout.write(formatLayers(read, 100));
    if (check) process.stdout.write(`\n${check.wider.length ? '✗' : '✓'} ${displayText(precisionCheckText(check, 50))}\n`);
  }
  return check && check.wider.length > 0 ? 1 : 0;
}

const fit = (s: string, w: number) => {
  const t = displayText(s);
  return t.length <= w ? t.padEnd(w) : `${t.slice(0, w - 1)}…`;
};

/** A table a person reads in `width` columns: slowest first when timed, else in engine order. */
export function formatLayers(r: EngineLayers, width = 100): string {
  const s = r.summary;
  const byP = Object.entries(s.byPrecision)
    .sort((a, b) => b[1] - a[1])
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  const lines = [
    `${s.count} layers${byP ? ` · ${byP}` : ''}${s.totalMs !== undefined ? ` · ${s.totalMs.toFixed(3)} ms profiled` : ''} · TensorRT ${r.schema} layer information${r.detailed ? '' : ' (names only: build with --profilingVerbosity=detailed for details)'}`,
  ];
  if (s.profileOnly?.length) lines.push(`note: the profile names ${s.profileOnly.length} layer(s) the layer information lacks (a profile of another engine?)`);
  const timed = s.totalMs !== undefined;
  const rows: EngineLayer[] = timed ? [...r.layers].sort((a, b) => (b.timeMs ?? -1) - (a.timeMs ?? -1)) : r.layers;
  // name | type | prec | time | share | tactic, the name and tactic taking what is left.
  const fixed = 18 + 6 + (timed ? 10 + 7 : 0) + 2 * (timed ? 5 : 3);
  const rest = Math.max(20, width - fixed);
  const nameW = Math.ceil(rest * 0.6);
  const tacW = rest - nameW;
  const head = [fit('layer', nameW), fit('type', 18), fit('prec', 6), ...(timed ? ['time ms'.padStart(10), 'share'.padStart(7)] : []), fit('tactic', tacW)];
  lines.push('', head.join('  ').trimEnd());
  for (const l of rows) {
    const cells = [
      fit(l.name, nameW),
      fit(l.type ?? '—', 18),
      fit(l.precision ?? '—', 6),
      ...(timed ? [(l.timeMs !== undefined ? l.timeMs.toFixed(4) : '—').padStart(10), (l.percent !== undefined ? `${l.percent.toFixed(1)}%` : '—').padStart(7)] : []),
      fit(l.tactic ?? '—', tacW),
    ];
    lines.push(cells.join('  ').trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
