// `compare <a> <b> [--json]`: two builds side by side, from their manifests (engines, manifests or
// build ids): the inputs that differ, phase times per top-level phase (and per row where the full
// tree was saved) with the ratio b/a, and per-layer differences where layer information was saved.
import { parseArgs } from 'node:util';
import { defaultOutputDir } from '../../service/build-service.js';
import { compareSources } from '../../service/compare-sources.js';
import { defaultStoreDir } from '../../service/engine-reuse-store.js';
import { isSlower, type BuildComparison, type PhaseComparison } from '../../shared/build-compare.js';
import { displayText } from '../../shared/display-text.js';
import { formatDuration } from '../../shared/format.js';
import { endQuietlyWhenStdoutCloses } from '../closed-stdout.js';
import { UsageError } from '../../shared/usage-error.js';
import { loadEngineLayers } from '../../service/engine-layers-file.js';
import { compareEngineLayers, type LayerChange, type LayerSummary } from '../../shared/engine-layers.js';
import * as fs from 'node:fs';

export const COMPARE_HELP = `Usage: trt-build-studio compare <a> <b> [--dir <folder>]... [--json]

Compares two builds from their manifests: what differs in their inputs (options, TensorRT
version, GPU, model, timing cache, plugins), how long each top-level phase took in both with the
ratio b/a (every phase row too, where the builds saved the full tree: build --manifest-rows), and
per-layer differences (precision, tactic, format) where layer information was saved.

<a> and <b> are engines (their <engine>.manifest.json is read), manifest files, or build ids,
looked up among the manifests in the default output folder, the reuse store and --dir folders.
Two layer JSON files (IEngineInspector's, as trtexec --exportLayerInfo writes them) are compared
layer by layer without manifests: precision, tactic, format, layers only in one, and time ratios
where both have profiles (--profile-a, --profile-b: trtexec --exportProfile files).

Options:
  --dir <folder>   another folder to look for build ids in (repeatable)
  --profile-a <f>, --profile-b <f>   profiles of two layer JSON files
  --json           print the comparison as one JSON object
  -h, --help
`;

export async function runCompare(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean' },
      dir: { type: 'string', multiple: true },
      'profile-a': { type: 'string' },
      'profile-b': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  endQuietlyWhenStdoutCloses();
  if (values.help) {
    process.stdout.write(COMPARE_HELP);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError(`compare takes two builds (engines, manifests or build ids), got ${positionals.length}`);
  if (positionals.every(isLayerFile)) {
    const [a, b] = [loadEngineLayers(positionals[0]!, values['profile-a']), loadEngineLayers(positionals[1]!, values['profile-b'])];
    const changes = compareEngineLayers(a.layers, b.layers);
    const out = { a: { file: a.files.layers, summary: a.summary }, b: { file: b.files.layers, summary: b.summary }, layers: changes };
    process.stdout.write(values.json ? JSON.stringify(out, null, 2) + '\n' : formatLayerComparison(out));
    return 0;
  }
  if (values['profile-a'] || values['profile-b']) throw new UsageError('--profile-a and --profile-b go with two layer JSON files, not with builds');
  const dirs = [...(values.dir ?? []), defaultOutputDir(), defaultStoreDir()];
  const result = await compareSources(positionals[0], positionals[1], dirs);
  process.stdout.write(values.json ? JSON.stringify(result, null, 2) + '\n' : formatComparison(result));
  return 0;
}

const ms = (v: number | null) => (v === null ? '—' : formatDuration(v));

function phaseLine(p: PhaseComparison, width: number): string {
  const r = p.ratio === null ? '' : `×${p.ratio.toFixed(2)}`;
  return `  ${displayText(p.name).padEnd(width)}  ${ms(p.aMs).padStart(10)} → ${ms(p.bMs).padEnd(10)} ${r.padStart(6)}${isSlower(p) ? '  slower' : ''}`;
}

export function formatComparison(c: BuildComparison): string {
  const t = displayText;
  const lines = [`a: ${t(c.a.buildId)}  ${t(c.a.engine)}`, `b: ${t(c.b.buildId)}  ${t(c.b.engine)}`, ''];
  if (c.inputs.length === 0) lines.push('Inputs: the same');
  else {
    lines.push('Inputs that differ (a → b):');
    for (const d of c.inputs) lines.push(`  ${t(d.what)}: ${t(d.a)} → ${t(d.b)}`);
  }
  lines.push('', 'Phase times (a → b, ratio b/a):');
  const all = [c.wall, ...c.phases, ...(c.rows ?? [])];
  const width = Math.min(60, Math.max(...all.map((p) => p.name.length)));
  lines.push(phaseLine(c.wall, width));
  for (const p of c.phases) lines.push(phaseLine(p, width));
  if (c.rows) {
    lines.push('', 'Every phase row (a → b):');
    for (const p of c.rows) lines.push(phaseLine(p, width));
  }
  if (c.layers) {
    lines.push('', c.layers.length ? `Layers that differ (${c.layers.length}):` : 'Layers: the same');
    for (const l of c.layers) {
      const parts = l.what.map((f) => (f.startsWith('only') ? f : `${f} ${l.a?.[f as 'precision'] ?? '—'} → ${l.b?.[f as 'precision'] ?? '—'}`));
      lines.push(`  ${t(l.name)}: ${t(parts.join(', '))}`);
    }
  } else lines.push('', 'Layers: no layer information saved for both builds');
  return lines.join('\n') + '\n';
}

/** A JSON file holding IEngineInspector's layer list (not one of our manifests). */
function isLayerFile(p: string): boolean {
  if (!p.endsWith('.json')) return false;
  try {
    const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      if (!fs.fstatSync(fd).isFile()) return false;
      const head = Buffer.alloc(4096);
      const n = fs.readSync(fd, head, 0, head.length, 0);
      // A manifest starts with its own fields; TensorRT's export with "Layers".
      return /^\s*\{\s*"Layers"\s*:/.test(head.subarray(0, n).toString('utf8'));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

export function formatLayerComparison(c: { a: { file: string; summary: LayerSummary }; b: { file: string; summary: LayerSummary }; layers: LayerChange[] }): string {
  const t = displayText;
  const prec = (s: LayerSummary) =>
    Object.entries(s.byPrecision)
      .map(([p, n]) => `${p} ${n}`)
      .join(', ') || 'no precisions';
  const total = (s: LayerSummary) => (s.totalMs !== undefined ? `, ${s.totalMs.toFixed(3)} ms profiled` : '');
  const lines = [
    `a: ${t(c.a.file)}  (${c.a.summary.count} layers: ${prec(c.a.summary)}${total(c.a.summary)})`,
    `b: ${t(c.b.file)}  (${c.b.summary.count} layers: ${prec(c.b.summary)}${total(c.b.summary)})`,
    '',
  ];
  if (c.a.summary.totalMs && c.b.summary.totalMs) lines.push(`Total time: ×${(c.b.summary.totalMs / c.a.summary.totalMs).toFixed(2)} (b/a)`, '');
  const precision = c.layers.filter((l) => l.what.includes('precision'));
  if (precision.length) {
    lines.push(`Precision changed (${precision.length}):`);
    for (const l of precision) lines.push(`  ${t(l.name)}: ${l.a?.precision} → ${l.b?.precision}`);
    lines.push('');
  }
  const changed = c.layers.filter((l) => l.what.length > 0);
  lines.push(changed.length ? `Layers that differ (${changed.length}):` : 'Layers: the same');
  for (const l of changed) {
    const parts = l.what.map((f) => (f.startsWith('only') ? f : `${f} ${l.a?.[f as 'precision'] ?? '—'} → ${l.b?.[f as 'precision'] ?? '—'}`));
    lines.push(`  ${t(l.name)}: ${t(parts.join(', '))}${l.timeRatio !== undefined ? `  ×${l.timeRatio.toFixed(2)}` : ''}`);
  }
  const timed = c.layers.filter((l) => l.timeRatio !== undefined && l.what.length === 0);
  if (timed.length) {
    lines.push('', 'Same layer, time b/a:');
    for (const l of timed.sort((x, y) => y.timeRatio! - x.timeRatio!)) lines.push(`  ${t(l.name)}  ×${l.timeRatio!.toFixed(2)}`);
  }
  return lines.join('\n') + '\n';
}
