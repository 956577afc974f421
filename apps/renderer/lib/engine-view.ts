// The Engine view's logic, apart from React (issue 36 item 4): reading dropped or opened files in
// the page (the reader is pure, so no server round trip), the rows of one engine or of two side by
// side, sorting, filtering, the shares per precision, and which rows a scrolled window shows.
import { compareEngineLayers, LayerFileError, readEngineLayers, type EngineLayer, type EngineLayers, type LayerChange, type PrecisionCheck } from '../../shared/engine-layers.js';

/** One engine on screen: a build's saved layer information, or files read in the page. */
export interface EngineSource {
  label: string;
  read: EngineLayers;
  check?: PrecisionCheck;
}

export interface FileText {
  name: string;
  text: string;
}

/**
 * Layer information (and an optional profile) from files a user dropped or picked: a JSON array is
 * trtexec's --exportProfile, an object the layer JSON. One layer file is needed; errors name the
 * file and are one line.
 */
export function readLayerFiles(files: readonly FileText[]): EngineSource {
  if (files.length === 0) throw new LayerFileError('no file given: pick a layer JSON (trtexec --exportLayerInfo), optionally with its profile (--exportProfile)');
  if (files.length > 2) throw new LayerFileError(`${files.length} files given: pick one layer JSON and at most one profile`);
  const isArray = (t: string) => t.trimStart().startsWith('[');
  const layers = files.filter((f) => !isArray(f.text));
  const profiles = files.filter((f) => isArray(f.text));
  if (layers.length !== 1) {
    throw new LayerFileError(
      layers.length === 0
        ? `${files.map((f) => f.name).join(' and ')}: ${files.length === 1 ? 'is' : 'are'} a profile (a JSON array); the layer JSON ({"Layers": [...]}) is needed too`
        : `${layers.map((f) => f.name).join(' and ')}: two layer files; pick one layer JSON and at most one profile`,
    );
  }
  const l = layers[0]!;
  const p = profiles[0];
  return { label: p ? `${l.name} + ${p.name}` : l.name, read: readEngineLayers(l.text, p?.text, { layers: l.name, ...(p ? { profile: p.name } : {}) }) };
}

export type SortKey = 'order' | 'name' | 'type' | 'precision' | 'time' | 'tactic';
export type SortDir = 'asc' | 'desc';

/** A row of the table: a layer of engine a (or b only), and what changed in b. */
export interface EngineRow {
  /** Position in engine order (a's layers, then b's that a lacks). */
  order: number;
  layer: EngineLayer;
  /** b's layer of the same name, in side-by-side mode. */
  other?: EngineLayer;
  change?: LayerChange;
  /** Lower-cased name, for the text filter. */
  key: string;
}

/** The rows of one engine, or of two matched by name with the changes marked (compareEngineLayers). */
export function engineRows(a: EngineLayers, b?: EngineLayers): EngineRow[] {
  if (!b) return a.layers.map((layer, order) => ({ order, layer, key: layer.name.toLowerCase() }));
  const changes = new Map<string, LayerChange>();
  for (const c of compareEngineLayers(a.layers, b.layers)) if (c.what.length) changes.set(c.name, c);
  const bByName = new Map(b.layers.map((l) => [l.name, l]));
  const rows: EngineRow[] = a.layers.map((layer, order) => ({
    order,
    layer,
    ...(bByName.has(layer.name) ? { other: bByName.get(layer.name) } : {}),
    ...(changes.has(layer.name) ? { change: changes.get(layer.name) } : {}),
    key: layer.name.toLowerCase(),
  }));
  const inA = new Set(a.layers.map((l) => l.name));
  for (const l of b.layers) {
    if (inA.has(l.name)) continue;
    rows.push({ order: rows.length, layer: l, other: l, ...(changes.has(l.name) ? { change: changes.get(l.name) } : {}), key: l.name.toLowerCase() });
  }
  return rows;
}

export interface RowFilter {
  text: string;
  type: string;
  precision: string;
  changedOnly: boolean;
}

export const NO_FILTER: RowFilter = { text: '', type: '', precision: '', changedOnly: false };

const PRECISION_RANK: Record<string, number> = { fp4: 0, int4: 1, fp8: 2, int8: 3, bf16: 4, fp16: 5, fp32: 6, int32: 7, int64: 8, bool: 9, uint8: 10 };

/**
 * The rows shown, in the order shown: filtered (name text, type, precision, changed only), then
 * sorted. Missing values sort last either way; ties keep engine order, so a sort is stable.
 */
export function visibleRows(rows: readonly EngineRow[], filter: RowFilter, key: SortKey, dir: SortDir): EngineRow[] {
  const text = filter.text.trim().toLowerCase();
  const out = rows.filter(
    (r) =>
      (!text || r.key.includes(text)) &&
      (!filter.type || (r.layer.type ?? '') === filter.type) &&
      (!filter.precision || r.layer.precision === filter.precision || r.other?.precision === filter.precision) &&
      (!filter.changedOnly || r.change !== undefined),
  );
  if (key === 'order') return dir === 'asc' ? out : out.reverse();
  const sign = dir === 'asc' ? 1 : -1;
  const value = (r: EngineRow): string | number | undefined => {
    const l = r.layer;
    switch (key) {
      case 'name':
        return r.key;
      case 'type':
        return l.type;
      case 'precision':
        return l.precision === undefined ? undefined : (PRECISION_RANK[l.precision] ?? 99);
      case 'time':
        return l.timeMs;
      case 'tactic':
        return l.tactic;
    }
  };
  const decorated = out.map((r) => ({ r, v: value(r) }));
  decorated.sort((x, y) => {
    if (x.v === undefined || y.v === undefined) return x.v === y.v ? x.r.order - y.r.order : x.v === undefined ? 1 : -1;
    const c = typeof x.v === 'number' && typeof y.v === 'number' ? x.v - y.v : String(x.v).localeCompare(String(y.v));
    return c !== 0 ? sign * c : x.r.order - y.r.order;
  });
  return decorated.map((d) => d.r);
}

/** Each precision's share of the layers, widest first, for the precision bar. */
export function precisionShares(summary: EngineLayers['summary']): Array<{ precision: string; count: number; share: number }> {
  const total = Object.values(summary.byPrecision).reduce((a, b) => a + b, 0);
  const unknown = summary.count - total;
  const rows = Object.entries(summary.byPrecision).map(([precision, count]) => ({ precision, count, share: summary.count ? count / summary.count : 0 }));
  rows.sort((a, b) => (PRECISION_RANK[b.precision] ?? 99) - (PRECISION_RANK[a.precision] ?? 99));
  if (unknown > 0) rows.push({ precision: 'unknown', count: unknown, share: unknown / summary.count });
  return rows;
}

/** The distinct layer types, most common first (the type filter's choices). */
export function typeChoices(rows: readonly EngineRow[]): string[] {
  const n = new Map<string, number>();
  for (const r of rows) if (r.layer.type) n.set(r.layer.type, (n.get(r.layer.type) ?? 0) + 1);
  return [...n].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([t]) => t);
}

/**
 * Rows of fixed height, a few of them expanded by a fixed detail height: where each shown row
 * starts, and which rows a viewport at `scrollTop` shows (with `overscan` rows either side), found
 * by binary search so a 10,000-layer table costs the same per scroll as a 10-layer one.
 */
export class RowLayout {
  /** Shown indexes of expanded rows, ascending. */
  private readonly expanded: number[];
  constructor(
    readonly count: number,
    readonly rowHeight: number,
    readonly detailHeight: number,
    expandedIndexes: Iterable<number>,
  ) {
    this.expanded = [...expandedIndexes].filter((i) => i >= 0 && i < count).sort((a, b) => a - b);
  }
  /** Expanded rows before shown index i. */
  private before(i: number): number {
    let lo = 0;
    let hi = this.expanded.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.expanded[mid]! < i) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  top(i: number): number {
    return i * this.rowHeight + this.before(i) * this.detailHeight;
  }
  get height(): number {
    return this.top(this.count);
  }
  /** The shown row at pixel y. */
  indexAt(y: number): number {
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.top(mid) <= y) lo = mid;
      else hi = mid - 1;
    }
    return Math.max(0, lo);
  }
  window(scrollTop: number, viewport: number, overscan = 8): { start: number; end: number } {
    if (this.count === 0) return { start: 0, end: 0 };
    const start = Math.max(0, this.indexAt(scrollTop) - overscan);
    const end = Math.min(this.count, this.indexAt(scrollTop + viewport) + 1 + overscan);
    return { start, end };
  }
}

/** "0.0123 ms" / "—". */
export function fmtMs(v: number | undefined): string {
  return v === undefined ? '—' : v >= 100 ? v.toFixed(1) : v >= 1 ? v.toFixed(3) : v.toFixed(4);
}
