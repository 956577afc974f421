// The build worker's memory as the build view keeps it (issue 21): the peak host (RSS) and GPU
// (this process's device memory, NVML) per phase row, the peaks overall, and a small timeline.
// Fed by the heartbeats (hostMemoryBytes, gpuMemoryBytes): a sample counts for every phase that
// is open when it arrives, so a row's peak is "the most the worker held while this phase ran"
// (inclusive of its children), at the heartbeat's cadence (1 s). A phase shorter than that may
// see no sample and has no row entry; the overall peak also takes the kernel's own high-water
// mark (VmHWM) when the worker reports it at the end (build.finished `memory`).
import type { BuildMemory, PhaseMemory } from './protocol.js';
import type { OpenInstance, PhaseRow } from './phase-rows.js';

export interface RowMemory {
  host: number;
  /** null until a sample carried a GPU figure. */
  gpu: number | null;
}

/** One timeline point: [build time ms, host bytes, GPU bytes or null]. */
export type MemoryPoint = [number, number, number | null];

/** The wire form, inside the build view's snapshot. */
export interface MemorySnapshot {
  peakHostBytes: number;
  peakGpuBytes: number | null;
  byPhase: PhaseMemory[];
  timeline: MemoryPoint[];
}

/** Timeline points kept; when full, every other point goes (the line keeps its shape). */
export const MEMORY_TIMELINE_POINTS = 240;
const SEP = '\u001f';

const maxOrNull = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));

export class MemoryTrack {
  peakHostBytes = 0;
  peakGpuBytes: number | null = null;
  /** Samples seen; 0 means nothing is known (no heartbeat carried memory). */
  samples = 0;
  /** By phase-row key (phase-rows.ts: SEP + names joined by SEP). */
  readonly byRow = new Map<string, RowMemory>();
  timeline: MemoryPoint[] = [];

  sample(t: number, host: number, gpu: number | undefined, open: Iterable<OpenInstance>): void {
    this.samples++;
    const g = gpu ?? null;
    if (host > this.peakHostBytes) this.peakHostBytes = host;
    this.peakGpuBytes = maxOrNull(this.peakGpuBytes, g);
    for (const o of open) {
      const cur = this.byRow.get(o.row.key);
      if (!cur) this.byRow.set(o.row.key, { host, gpu: g });
      else {
        if (host > cur.host) cur.host = host;
        cur.gpu = maxOrNull(cur.gpu, g);
      }
    }
    this.timeline.push([t, host, g]);
    if (this.timeline.length > MEMORY_TIMELINE_POINTS) this.timeline = this.timeline.filter((_, i) => i % 2 === 1);
  }

  /** The row's peak, when a sample fell in it. */
  of(row: PhaseRow): RowMemory | undefined {
    return this.byRow.get(row.key);
  }

  /**
   * build.finished's `memory`; undefined when nothing was sampled. Rows in the order the tree
   * shows them (`rowsInOrder`: parents before children, as started).
   */
  summary(rowsInOrder: Iterable<PhaseRow>): BuildMemory | undefined {
    if (this.samples === 0) return undefined;
    const byPhase: PhaseMemory[] = [];
    for (const row of rowsInOrder) {
      const m = this.byRow.get(row.key);
      if (m) byPhase.push({ path: pathOf(row), peakHostBytes: m.host, peakGpuBytes: m.gpu });
    }
    return { peakHostBytes: this.peakHostBytes, peakGpuBytes: this.peakGpuBytes, byPhase };
  }

  toSnapshot(rowsInOrder: Iterable<PhaseRow>): MemorySnapshot | undefined {
    const s = this.summary(rowsInOrder);
    return s ? { ...s, timeline: this.timeline.map((p) => [...p] as MemoryPoint) } : undefined;
  }

  static fromSnapshot(s: MemorySnapshot | undefined): MemoryTrack {
    const m = new MemoryTrack();
    if (!s) return m;
    m.samples = Math.max(1, s.timeline.length);
    m.peakHostBytes = s.peakHostBytes;
    m.peakGpuBytes = s.peakGpuBytes;
    for (const p of s.byPhase) m.byRow.set(SEP + p.path.join(SEP), { host: p.peakHostBytes, gpu: p.peakGpuBytes });
    m.timeline = s.timeline.map((p) => [...p] as MemoryPoint);
    return m;
  }
}

/** Names from the root down. */
export function pathOf(row: PhaseRow): string[] {
  const out: string[] = [];
  for (let r: PhaseRow | null = row; r && r.depth >= 0; r = r.parent) out.unshift(r.name);
  return out;
}

/** Every row under `root`, parents first, children in the order they started. */
export function* rowsInOrder(root: PhaseRow): Generator<PhaseRow> {
  for (const c of root.children) {
    yield c;
    yield* rowsInOrder(c);
  }
}

/**
 * The same summary, with the overall peaks raised by figures measured outside the samples (the
 * worker's VmHWM at the end, which catches a peak between two heartbeats).
 */
export function mergeMemory(view: BuildMemory | undefined, measured: BuildMemory | undefined): BuildMemory | undefined {
  if (!view) return measured;
  if (!measured) return view;
  return {
    peakHostBytes: Math.max(view.peakHostBytes, measured.peakHostBytes),
    peakGpuBytes: maxOrNull(view.peakGpuBytes, measured.peakGpuBytes),
    byPhase: view.byPhase.length > 0 ? view.byPhase : measured.byPhase,
    ...((measured.peakGpuSource ?? view.peakGpuSource) ? { peakGpuSource: measured.peakGpuSource ?? view.peakGpuSource } : {}),
  };
}
