// What TensorRT built, layer by layer: one reader for the files that say so, and one answer that
// every surface shows (the CLI's `layers`, `compare`, GET /api/builds/{id}/layers, MCP's
// explain_engine, the LSP command, the UI's Engine view).
//
// The files, as TensorRT writes them:
// - IEngineInspector::getEngineInformation(kJSON), which this product saves beside each engine
//   (`<engine>.layers.json`) and `trtexec --exportLayerInfo=<f>` writes:
//     10.x: {"Layers": [...], "Bindings": ["input", "output"]}
//     11.x: {"Layers": [...], "I/O Tensors": [{"Name", "IOMode", "DataType", "Dimensions", ...}]}
//   A layer is an object with detailed profiling verbosity ({"Name", "LayerType", "Inputs",
//   "Outputs": [{"Name", "Location", "Dimensions", "Format/Datatype"}], "Weights": {"Type",
//   "Count"}, "TacticName", "TacticValue", ...}) and its bare name below it. Fused layers are
//   named "A + B + C".
// - `trtexec --exportProfile=<f>`: [{"count": N}, {"name", "timeMs", "averageMs", "medianMs",
//   "percentage"}, ...], one entry per layer name.
// A layer's precision is its first output's data type as its "Format/Datatype" text names it (the
// rule NVIDIA's TREx used). A field a file does not have stays absent: nothing is guessed.
// Pure: no Node, no DOM.

/** The data types a "Format/Datatype" text can name, narrowest compute types first. */
export const LAYER_PRECISIONS = ['fp4', 'int4', 'fp8', 'int8', 'fp16', 'bf16', 'fp32', 'int32', 'int64', 'bool', 'uint8'] as const;
export type LayerPrecision = (typeof LAYER_PRECISIONS)[number];

export interface LayerTensor {
  name: string;
  dimensions?: number[];
  format?: string;
  precision?: LayerPrecision;
}

export interface EngineLayer {
  name: string;
  type?: string;
  precision?: LayerPrecision;
  /** The first output's "Format/Datatype" text, as TensorRT wrote it. */
  format?: string;
  tactic?: string;
  /** The operations fused into this layer ("A + B + C" → [A, B, C]); absent for a single one. */
  fused?: string[];
  inputs: LayerTensor[];
  outputs: LayerTensor[];
  weights?: { type?: string; count?: number };
  /** The profile's total time for this layer name, and its share of the profile's total. */
  timeMs?: number;
  averageMs?: number;
  medianMs?: number;
  percent?: number;
}

export interface EngineIoTensor {
  name: string;
  mode?: 'input' | 'output';
  dataType?: string;
  dimensions?: number[];
}

export interface LayerSummary {
  count: number;
  byPrecision: Record<string, number>;
  byType: Record<string, number>;
  /** Sum of the profile's per-layer times (when a profile was given). */
  totalMs?: number;
  /** The slowest layers, slowest first (when timed), at most 10. */
  slowest: Array<{ name: string; timeMs: number; percent?: number }>;
  /** Layers the profile names that the layer information lacks (a profile of another engine?). */
  profileOnly?: string[];
}

export interface EngineLayers {
  /** Which writer's shape the file has: 10.x ("Bindings"), 11.x ("I/O Tensors"), or neither known. */
  schema: '10.x' | '11.x' | 'unknown';
  /** Whether layers carry details (detailed profiling verbosity) or are bare names. */
  detailed: boolean;
  layers: EngineLayer[];
  io: EngineIoTensor[];
  summary: LayerSummary;
}

/** A file that is not what it should be: its message is fit to show as it is. */
export class LayerFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LayerFileError';
  }
}

/** Limits on what is read: a hostile file gets a clear error, never a hang or a stack overflow. */
export const LAYER_FILE_LIMITS = {
  /** Characters of JSON text (real exports are a few MB; a 10,000-layer engine about 20 MB). */
  maxChars: 256 * 1024 * 1024,
  /** Nesting of arrays and objects (real files nest 5 deep). */
  maxDepth: 64,
  maxLayers: 1_000_000,
} as const;

/**
 * Nesting depth of a JSON text, counting brackets outside strings: checked before JSON.parse,
 * whose recursion a deeply nested file would exhaust. Stops as soon as the limit is passed.
 */
function checkDepth(text: string, what: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) throw new LayerFileError(`${what}: JSON nested deeper than ${maxDepth} levels (at character ${i}); not a TensorRT export`);
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
}

function parseJson(text: string, what: string, limits = LAYER_FILE_LIMITS): unknown {
  if (text.length > limits.maxChars) throw new LayerFileError(`${what}: ${text.length} characters, more than the ${limits.maxChars} this reader takes`);
  checkDepth(text, what, limits.maxDepth);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new LayerFileError(`${what}: not JSON (${(e as Error).message})`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const dims = (v: unknown): number[] | undefined => (Array.isArray(v) && v.every((d) => typeof d === 'number') ? (v as number[]) : undefined);

/**
 * The data type a "Format/Datatype" (or 11.x "DataType") text names: "Channel major FP16 format
 * where channel % 8 == 0" → fp16, "Four wide channel vectorized row major Int8 format" → int8,
 * "Row major linear FP32" → fp32. Undefined when it names none of them.
 */
export function precisionOfFormat(format: string): LayerPrecision | undefined {
  // Formats repeat across an engine's layers (a handful of distinct texts for thousands of
  // tensors): each text is matched once.
  let p = formatPrecisions.get(format);
  if (p === undefined && !formatPrecisions.has(format)) {
    const f = format.toLowerCase();
    p = FORMAT_RULES.find(([re]) => re.test(f))?.[1];
    if (formatPrecisions.size > 4096) formatPrecisions.clear();
    formatPrecisions.set(format, p);
  }
  return p;
}

// Longest and most specific names first: "bf16" before "fp16", "int64" before "int4".
const FORMAT_RULES: ReadonlyArray<readonly [RegExp, LayerPrecision]> = [
  [/\b(bf16|bfloat16)\b/, 'bf16'],
  [/\b(fp16|half)\b/, 'fp16'],
  [/\b(fp32|float|float32)\b/, 'fp32'],
  [/\b(fp8|e4m3|fp8e4m3)\b/, 'fp8'],
  [/\b(fp4|e2m1|fp4e2m1)\b/, 'fp4'],
  [/\bint64\b/, 'int64'],
  [/\bint32\b/, 'int32'],
  [/\bint8\b/, 'int8'],
  [/\bint4\b/, 'int4'],
  [/\buint8\b/, 'uint8'],
  [/\bbool\b/, 'bool'],
];
const formatPrecisions = new Map<string, LayerPrecision | undefined>();

function tensorOf(v: unknown): LayerTensor | undefined {
  if (!isObject(v)) return typeof v === 'string' ? { name: v } : undefined;
  // Fields set one by one (no spread of temporary objects): a 10,000-layer file makes tens of
  // thousands of these, and the temporaries were most of the reader's garbage.
  const t: LayerTensor = { name: str(v['Name']) ?? '' };
  const d = dims(v['Dimensions']);
  if (d) t.dimensions = d;
  const format = str(v['Format/Datatype']);
  if (format !== undefined) {
    t.format = format;
    const precision = precisionOfFormat(format);
    if (precision) t.precision = precision;
  }
  return t;
}

const tensors = (v: unknown): LayerTensor[] => (Array.isArray(v) ? v.map(tensorOf).filter((t): t is LayerTensor => t !== undefined) : []);

/** "A + B + C" → [A, B, C]; a reformatting layer's name ("Reformatting CopyNode for ...") is one op. */
function fusedOps(name: string): string[] | undefined {
  // "Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1" names the layer it feeds.
  if (name.startsWith('Reformatting CopyNode')) return undefined;
  const parts = name.split(' + ').map((s) => s.trim());
  return parts.length > 1 && parts.every((p) => p.length > 0) ? parts : undefined;
}

function layerOf(v: unknown, i: number): EngineLayer {
  if (typeof v === 'string') {
    const l: EngineLayer = { name: v, inputs: [], outputs: [] };
    const fused = fusedOps(v);
    if (fused) l.fused = fused;
    return l;
  }
  if (!isObject(v)) throw new LayerFileError(`layer ${i}: neither a name nor an object`);
  const name = str(v['Name']) ?? `(layer ${i})`;
  const outputs = tensors(v['Outputs']);
  const first = outputs[0];
  const l: EngineLayer = { name, inputs: [], outputs };
  const type = str(v['LayerType']);
  if (type !== undefined) l.type = type;
  if (first?.precision) l.precision = first.precision;
  if (first?.format !== undefined) l.format = first.format;
  const tactic = str(v['TacticName']) ?? str(v['TacticValue']);
  if (tactic !== undefined) l.tactic = tactic;
  const fused = fusedOps(name);
  if (fused) l.fused = fused;
  l.inputs = tensors(v['Inputs']);
  const w = v['Weights'];
  if (isObject(w)) {
    const weights: { type?: string; count?: number } = {};
    const wt = str(w['Type']);
    if (wt !== undefined) weights.type = wt;
    const wc = num(w['Count']);
    if (wc !== undefined) weights.count = wc;
    if (wt !== undefined || wc !== undefined) l.weights = weights;
  }
  return l;
}

function ioOf(v: unknown): EngineIoTensor | undefined {
  if (typeof v === 'string') return { name: v };
  if (!isObject(v)) return undefined;
  const mode = str(v['IOMode'])?.toLowerCase();
  const d = dims(v['Dimensions']);
  return {
    name: str(v['Name']) ?? '',
    ...(mode === 'input' || mode === 'output' ? { mode } : {}),
    ...(str(v['DataType']) !== undefined ? { dataType: str(v['DataType']) } : {}),
    ...(d ? { dimensions: d } : {}),
  };
}

/** One entry of trtexec's --exportProfile. */
export interface ProfileEntry {
  name: string;
  timeMs: number;
  averageMs?: number;
  medianMs?: number;
  percentage?: number;
}

/** Reads trtexec's `--exportProfile` JSON: [{"count"}, {"name", "timeMs", ...}, ...]. */
export function parseProfile(text: string, what = 'profile'): ProfileEntry[] {
  const json = parseJson(text, what);
  if (!Array.isArray(json))
    throw new LayerFileError(`${what}: expected trtexec's --exportProfile array ([{"count": N}, {"name", "timeMs", ...}]), got ${json === null ? 'null' : typeof json}`);
  const out: ProfileEntry[] = [];
  json.forEach((e, i) => {
    if (!isObject(e)) throw new LayerFileError(`${what}: entry ${i} is not an object`);
    if (e['name'] === undefined && e['count'] !== undefined) return; // the run's header
    const name = str(e['name']);
    const timeMs = num(e['timeMs']);
    if (name === undefined || timeMs === undefined) throw new LayerFileError(`${what}: entry ${i} has no "name" and "timeMs"`);
    out.push({
      name,
      timeMs,
      ...(num(e['averageMs']) !== undefined ? { averageMs: num(e['averageMs']) } : {}),
      ...(num(e['medianMs']) !== undefined ? { medianMs: num(e['medianMs']) } : {}),
      ...(num(e['percentage']) !== undefined ? { percentage: num(e['percentage']) } : {}),
    });
  });
  return out;
}

/**
 * Reads IEngineInspector's JSON (10.x or 11.x) and, when given, trtexec's profile of the same
 * engine: the layers with their times, the engine's I/O tensors and the summary.
 */
export function readEngineLayers(layerText: string, profileText?: string, names: { layers?: string; profile?: string } = {}): EngineLayers {
  const what = names.layers ?? 'layer information';
  const json = parseJson(layerText, what);
  if (!isObject(json) || !Array.isArray(json['Layers'])) {
    throw new LayerFileError(`${what}: expected IEngineInspector's JSON ({"Layers": [...], "Bindings" or "I/O Tensors": [...]}) as trtexec --exportLayerInfo writes it`);
  }
  const raw = json['Layers'] as unknown[];
  if (raw.length > LAYER_FILE_LIMITS.maxLayers) throw new LayerFileError(`${what}: ${raw.length} layers, more than ${LAYER_FILE_LIMITS.maxLayers}`);
  const layers = raw.map(layerOf);
  const ioRaw = Array.isArray(json['I/O Tensors']) ? json['I/O Tensors'] : Array.isArray(json['Bindings']) ? json['Bindings'] : [];
  const schema = Array.isArray(json['I/O Tensors']) ? '11.x' : Array.isArray(json['Bindings']) ? '10.x' : 'unknown';
  const io = (ioRaw as unknown[]).map(ioOf).filter((t): t is EngineIoTensor => t !== undefined);
  const profile = profileText !== undefined ? parseProfile(profileText, names.profile ?? 'profile') : undefined;
  const profileOnly = profile ? applyProfile(layers, profile) : undefined;
  return {
    schema,
    detailed: raw.some((l) => isObject(l)),
    layers,
    io,
    summary: summarize(layers, profile !== undefined, profileOnly),
  };
}

/**
 * Carries the profile's figures onto the layers of the same name, exactly as written (`percent` is
 * the profile's `percentage`; computed from the sum of times only where the file has none).
 * Returns the profile's names that no layer has.
 */
function applyProfile(layers: EngineLayer[], profile: ProfileEntry[]): string[] {
  const byName = new Map<string, ProfileEntry>();
  for (const e of profile) byName.set(e.name, e);
  const total = profile.reduce((s, e) => s + e.timeMs, 0);
  const used = new Set<string>();
  for (const l of layers) {
    const e = byName.get(l.name);
    if (!e) continue;
    used.add(l.name);
    l.timeMs = e.timeMs;
    if (e.averageMs !== undefined) l.averageMs = e.averageMs;
    if (e.medianMs !== undefined) l.medianMs = e.medianMs;
    if (e.percentage !== undefined) l.percent = e.percentage;
    else if (total > 0) l.percent = (e.timeMs / total) * 100;
  }
  return profile.filter((e) => !used.has(e.name)).map((e) => e.name);
}

function summarize(layers: EngineLayer[], timed: boolean, profileOnly: string[] | undefined): LayerSummary {
  const byPrecision: Record<string, number> = {};
  const byType: Record<string, number> = {};
  let totalMs = 0;
  for (const l of layers) {
    if (l.precision) byPrecision[l.precision] = (byPrecision[l.precision] ?? 0) + 1;
    if (l.type) byType[l.type] = (byType[l.type] ?? 0) + 1;
    if (l.timeMs !== undefined) totalMs += l.timeMs;
  }
  const slowest = layers
    .filter((l) => l.timeMs !== undefined)
    .sort((a, b) => b.timeMs! - a.timeMs!)
    .slice(0, 10)
    .map((l) => ({ name: l.name, timeMs: l.timeMs!, ...(l.percent !== undefined ? { percent: l.percent } : {}) }));
  return {
    count: layers.length,
    byPrecision,
    byType,
    ...(timed ? { totalMs } : {}),
    slowest,
    ...(profileOnly && profileOnly.length ? { profileOnly } : {}),
  };
}

// ───────────────────────────── the precision check ─────────────────────────────

/** Bits per value of each compute type: a layer "falls back" when it runs wider than asked. */
const WIDTH: Partial<Record<LayerPrecision, number>> = { fp4: 4, int4: 4, fp8: 8, int8: 8, fp16: 16, bf16: 16, fp32: 32 };

/**
 * Layer types that move or reshape data rather than compute it: their output type follows their
 * neighbours', so they are left out of the check (a reformat to FP32 at the output is expected).
 */
const NON_COMPUTE = /^(Reformat|NoOp|Shuffle|Constant|Slice|Concatenation|Gather|Shape|Identity|Cast|Quantize|Dequantize|Reshape|Squeeze|Unsqueeze|Copy)/i;

export interface PrecisionCheck {
  expected: LayerPrecision;
  /** Compute layers with a known floating or quantized precision. */
  checked: number;
  /** Those that run in `expected` or narrower. */
  asAsked: number;
  /** Those that run wider than asked, with what they run in. */
  wider: Array<{ name: string; type?: string; precision: LayerPrecision }>;
}

/** Whether a layer computes (is not a data-movement layer); unknown types count as compute. */
export function isComputeLayer(l: EngineLayer): boolean {
  return !(l.type !== undefined && NON_COMPUTE.test(l.type)) && !/^Reformatting CopyNode/.test(l.name);
}

/**
 * The layers that run in a wider precision than the build asked for (an fp16 build with fp32
 * layers). Layers without details (bare names) or with integer or boolean outputs are not judged.
 */
export function checkPrecision(layers: readonly EngineLayer[], expected: LayerPrecision): PrecisionCheck {
  const want = WIDTH[expected];
  if (want === undefined) throw new LayerFileError(`cannot check for ${expected}: not a floating or quantized compute type`);
  const check: PrecisionCheck = { expected, checked: 0, asAsked: 0, wider: [] };
  for (const l of layers) {
    const w = l.precision ? WIDTH[l.precision] : undefined;
    if (w === undefined || !isComputeLayer(l)) continue;
    check.checked++;
    if (w <= want) check.asAsked++;
    else check.wider.push({ name: l.name, ...(l.type !== undefined ? { type: l.type } : {}), precision: l.precision! });
  }
  return check;
}

/** "31 of 36 layers run FP16; 5 run FP32: a, b, c, …" */
export function precisionCheckText(c: PrecisionCheck, listAtMost = 5): string {
  const up = (p: string) => p.toUpperCase();
  if (c.checked === 0) return `no compute layer with a known precision to check for ${up(c.expected)} (layer information without details?)`;
  if (c.wider.length === 0) return `all ${c.checked} compute layers run ${up(c.expected)} or narrower`;
  const byP = new Map<string, string[]>();
  for (const w of c.wider) byP.set(w.precision, [...(byP.get(w.precision) ?? []), w.name]);
  const parts = [...byP].map(
    ([p, names]) => `${names.length} run ${up(p)}: ${names.slice(0, listAtMost).join(', ')}${names.length > listAtMost ? `, … (${names.length - listAtMost} more)` : ''}`,
  );
  return `${c.asAsked} of ${c.checked} compute layers run ${up(c.expected)}; ${parts.join('; ')}`;
}

// ───────────────────────────── two engines ─────────────────────────────

export interface LayerChange {
  name: string;
  /** "precision", "tactic", "format", "type", or "only in a" / "only in b". */
  what: string[];
  a?: Pick<EngineLayer, 'type' | 'precision' | 'tactic' | 'format' | 'timeMs'>;
  b?: Pick<EngineLayer, 'type' | 'precision' | 'tactic' | 'format' | 'timeMs'>;
  /** b's time over a's, where both were profiled and a's is above 0. */
  timeRatio?: number;
}

const pick = (l: EngineLayer) => ({
  ...(l.type !== undefined ? { type: l.type } : {}),
  ...(l.precision !== undefined ? { precision: l.precision } : {}),
  ...(l.tactic !== undefined ? { tactic: l.tactic } : {}),
  ...(l.format !== undefined ? { format: l.format } : {}),
  ...(l.timeMs !== undefined ? { timeMs: l.timeMs } : {}),
});

/**
 * Per-layer differences of two engines, matched by layer name: the fields that differ (only where
 * both files have them), layers only one has, and time ratios where both were profiled. Layers
 * that are the same and untimed are left out; timed ones stay for their ratio.
 */
export function compareEngineLayers(a: readonly EngineLayer[], b: readonly EngineLayer[]): LayerChange[] {
  const bByName = new Map(b.map((l) => [l.name, l]));
  const seen = new Set<string>();
  const out: LayerChange[] = [];
  for (const la of a) {
    const lb = bByName.get(la.name);
    if (!lb) {
      out.push({ name: la.name, what: ['only in a'], a: pick(la) });
      continue;
    }
    seen.add(la.name);
    const what = (['type', 'precision', 'tactic', 'format'] as const).filter((f) => la[f] !== undefined && lb[f] !== undefined && la[f] !== lb[f]);
    const timeRatio = la.timeMs !== undefined && lb.timeMs !== undefined && la.timeMs > 0 ? lb.timeMs / la.timeMs : undefined;
    if (what.length || timeRatio !== undefined) out.push({ name: la.name, what, a: pick(la), b: pick(lb), ...(timeRatio !== undefined ? { timeRatio } : {}) });
  }
  for (const lb of b) if (!seen.has(lb.name)) out.push({ name: lb.name, what: ['only in b'], b: pick(lb) });
  return out;
}
