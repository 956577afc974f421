// The precision check of a build (issue 36 item 3): which precision the build asked for, and how
// many of its engine's compute layers run wider than that. One answer for build.finished (the CLI's
// closing lines, the UI's finished panel, MCP and the LSP) and GET /api/builds/{id}/layers.
// Pure: the service reads the layer JSON and passes it in.
import { checkPrecision, type EngineLayers, type LayerPrecision, type PrecisionCheck } from './engine-layers.js';
import type { BuildOptions, BuildFinished, ModelSummary } from './protocol.js';

export type BuildLayersFacts = NonNullable<BuildFinished['layers']>;

/** How many wider layers build.finished names (the rest are counted). */
export const WIDER_NAMES_MAX = 20;

/** The widest first: a build that allows fp16 and int8 asked for "fp16 or narrower". */
const FLAG_ORDER: readonly LayerPrecision[] = ['fp16', 'bf16', 'fp8', 'int8', 'int4', 'fp4'];

const ONNX_FLOAT: Record<string, LayerPrecision> = { float16: 'fp16', bfloat16: 'bf16', float32: 'fp32', float: 'fp32' };

/**
 * The precision a build asked for, or undefined when it asked for none narrower than FP32 (then
 * nothing can run wider). Weakly typed: the widest precision flag, since TensorRT may pick any
 * flagged precision per layer (fp16 + int8: a layer in fp16 is as asked, one in fp32 is not).
 * Strongly typed (the option, or TensorRT 11 where it is implied): the model's own types decide;
 * the model summary knows its inputs' element types (not its initializers'), so an fp16/bf16 float
 * input means the model is in that type. Mixed float inputs: the widest of them.
 */
export function expectedPrecision(
  options: Pick<BuildOptions, 'precision' | 'stronglyTyped'>,
  model: Pick<ModelSummary, 'inputs'> | undefined,
  stronglyTypedImplied: boolean,
): LayerPrecision | undefined {
  const flags = options.precision ?? [];
  if (!(options.stronglyTyped || stronglyTypedImplied)) {
    return FLAG_ORDER.find((p) => (flags as readonly string[]).includes(p));
  }
  const floats = (model?.inputs ?? []).map((i) => ONNX_FLOAT[i.elemType.toLowerCase()]).filter((p): p is LayerPrecision => p !== undefined);
  if (floats.length === 0 || floats.includes('fp32')) return undefined;
  return floats.includes('fp16') ? 'fp16' : 'bf16';
}

/** build.finished's `layers`: per precision, and the check where the build asked for one. */
export function buildLayersFacts(read: Pick<EngineLayers, 'layers' | 'summary'>, expected: LayerPrecision | undefined): BuildLayersFacts {
  const facts: BuildLayersFacts = { count: read.summary.count, byPrecision: { ...read.summary.byPrecision } };
  if (expected === undefined) return facts;
  const c: PrecisionCheck = checkPrecision(read.layers, expected);
  const widerByPrecision: Record<string, number> = {};
  for (const w of c.wider) widerByPrecision[w.precision] = (widerByPrecision[w.precision] ?? 0) + 1;
  return {
    ...facts,
    expected,
    checked: c.checked,
    asAsked: c.asAsked,
    wider: c.wider.length,
    ...(c.wider.length ? { widerByPrecision, widerNames: c.wider.slice(0, WIDER_NAMES_MAX).map((w) => w.name) } : {}),
  };
}

const up = (p: string) => p.toUpperCase();

/**
 * One line: "Layers: 31 of 36 compute layers run FP16; 5 run FP32: a, b, c, … (2 more)", or the
 * count per precision when the build asked for no reduced precision. Names are the caller's to
 * sanitize for its medium (displayText in a terminal).
 */
export function buildLayersText(f: BuildLayersFacts, listAtMost = 5): string {
  const per = Object.entries(f.byPrecision)
    .sort((a, b) => b[1] - a[1])
    .map(([p, n]) => `${n} ${up(p)}`)
    .join(', ');
  const all = `${f.count} layer${f.count === 1 ? '' : 's'}${per ? `: ${per}` : ''}`;
  if (f.expected === undefined || f.checked === undefined) return `Layers: ${all}`;
  if (f.checked === 0) return `Layers: ${all}; no compute layer with a known precision to check for ${up(f.expected)} (built without detailed profiling verbosity?)`;
  if (!f.wider) return `Layers: all ${f.checked} compute layers run ${up(f.expected)} or narrower (${all})`;
  const names = f.widerNames ?? [];
  const shown = names.slice(0, listAtMost);
  const more = f.wider - shown.length;
  const wider = Object.entries(f.widerByPrecision ?? {})
    .map(([p, n]) => `${n} run ${up(p)}`)
    .join(', ');
  return `Layers: ${f.asAsked ?? 0} of ${f.checked} compute layers run ${up(f.expected)}; ${wider}${shown.length ? `: ${shown.join(', ')}${more > 0 ? `, … (${more} more)` : ''}` : ''}`;
}
