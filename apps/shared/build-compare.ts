// Two builds side by side, from their manifests (engine-manifest.ts): what differs in their inputs
// (options, versions, GPU, model, timing cache, plugins), how their phase times differ (per
// top-level phase, and per row where both saved the full tree) with the ratio, and, where both
// saved layer information, per-layer differences. Pure: the CLI, the HTTP API and the UI's Compare
// view all show this one answer.
import type { EngineManifest, ManifestPhase } from './engine-manifest.js';

export interface InputDifference {
  /** "option optLevel", "TensorRT version", "model", ... */
  what: string;
  a: string;
  b: string;
}

export interface PhaseComparison {
  /** The phase's name (top level) or its name path joined by " › " (rows). */
  name: string;
  aMs: number | null;
  bMs: number | null;
  /** bMs / aMs; null where either is missing or a is 0. */
  ratio: number | null;
}

/** One layer as saved beside an engine (the simulated backend's, or TensorRT's IEngineInspector). */
export interface LayerRecord {
  name: string;
  type?: string;
  precision?: string;
  tactic?: string;
  format?: string;
}

export interface LayerDifference {
  name: string;
  /** Which fields differ, or "only in a" / "only in b". */
  what: string[];
  a?: LayerRecord;
  b?: LayerRecord;
}

export interface BuildComparison {
  a: { buildId: string; engine: string; wallMs: number };
  b: { buildId: string; engine: string; wallMs: number };
  inputs: InputDifference[];
  wall: PhaseComparison;
  phases: PhaseComparison[];
  /** Present when both manifests carry the full phase tree. */
  rows?: PhaseComparison[];
  /** Present when layer information was saved for both. */
  layers?: LayerDifference[];
}

const text = (v: unknown): string => (v === null || v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v));

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && a > 0 ? Math.round((b / a) * 1000) / 1000 : null;
}

/** Aligns two lists of named durations: a's order first, then what only b has. */
function align(a: Array<{ name: string; ms: number }>, b: Array<{ name: string; ms: number }>): PhaseComparison[] {
  const bBy = new Map(b.map((p) => [p.name, p.ms]));
  const aNames = new Set(a.map((p) => p.name));
  const out: PhaseComparison[] = a.map((p) => {
    const bMs = bBy.get(p.name) ?? null;
    return { name: p.name, aMs: p.ms, bMs, ratio: ratio(p.ms, bMs) };
  });
  for (const p of b) if (!aNames.has(p.name)) out.push({ name: p.name, aMs: null, bMs: p.ms, ratio: null });
  return out;
}

function inputDifferences(a: EngineManifest, b: EngineManifest): InputDifference[] {
  const out: InputDifference[] = [];
  const diff = (what: string, x: unknown, y: unknown) => {
    if (JSON.stringify(x) !== JSON.stringify(y)) out.push({ what, a: text(x), b: text(y) });
  };
  diff('backend', a.backend, b.backend);
  diff('TensorRT version', a.tensorrt.version, b.tensorrt.version);
  diff('adapter header version', a.tensorrt.adapterHeaderVersion, b.tensorrt.adapterHeaderVersion);
  diff('GPU', a.gpu.name, b.gpu.name);
  diff('compute capability', a.gpu.computeCapability, b.gpu.computeCapability);
  diff('driver', a.driverVersion, b.driverVersion);
  diff('CUDA', a.cudaVersion, b.cudaVersion);
  diff('model', a.model.sha256, b.model.sha256);
  for (const k of Object.keys(a.options) as Array<keyof EngineManifest['options']>) diff(`option ${k}`, a.options[k], b.options[k]);
  diff('version compatible', a.compatibility.versionCompatible, b.compatibility.versionCompatible);
  diff('plugin libraries', a.pluginLibraries, b.pluginLibraries);
  diff('timing cache at the start', a.timingCache?.sha256Before ?? null, b.timingCache?.sha256Before ?? null);
  diff('timing cache pinned', a.pinnedCache ?? null, b.pinnedCache ?? null);
  return out;
}

function layerDifferences(a: LayerRecord[], b: LayerRecord[]): LayerDifference[] {
  const bBy = new Map(b.map((l) => [l.name, l]));
  const out: LayerDifference[] = [];
  for (const la of a) {
    const lb = bBy.get(la.name);
    if (!lb) {
      out.push({ name: la.name, what: ['only in a'], a: la });
      continue;
    }
    const fields = (['type', 'precision', 'tactic', 'format'] as const).filter((f) => la[f] !== lb[f]);
    if (fields.length) out.push({ name: la.name, what: [...fields], a: la, b: lb });
  }
  const aNames = new Set(a.map((l) => l.name));
  for (const lb of b) if (!aNames.has(lb.name)) out.push({ name: lb.name, what: ['only in b'], b: lb });
  return out;
}

export function compareBuilds(a: EngineManifest, b: EngineManifest, layers?: { a?: LayerRecord[]; b?: LayerRecord[] }): BuildComparison {
  const rowsOf = (m: EngineManifest) => m.build.rows?.map((r) => ({ name: r.path.join(' › '), ms: r.ms }));
  const ra = rowsOf(a);
  const rb = rowsOf(b);
  const top = (m: EngineManifest) => m.build.phases.map((p: ManifestPhase) => ({ name: p.name, ms: p.ms }));
  return {
    a: { buildId: a.buildId, engine: a.engine.file, wallMs: a.build.wallMs },
    b: { buildId: b.buildId, engine: b.engine.file, wallMs: b.build.wallMs },
    inputs: inputDifferences(a, b),
    wall: { name: 'whole build', aMs: a.build.wallMs, bMs: b.build.wallMs, ratio: ratio(a.build.wallMs, b.build.wallMs) },
    phases: align(top(a), top(b)),
    ...(ra && rb ? { rows: align(ra, rb) } : {}),
    ...(layers?.a && layers?.b ? { layers: layerDifferences(layers.a, layers.b) } : {}),
  };
}

/** A phase is marked slower when b took at least this much longer than a (ratio) and 1 ms more. */
export const SLOWER_RATIO = 1.1;

export function isSlower(p: PhaseComparison): boolean {
  return p.ratio !== null && p.ratio >= SLOWER_RATIO && p.aMs !== null && p.bMs !== null && p.bMs - p.aMs >= 1;
}
