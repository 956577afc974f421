// The `trtBuildStudio/buildView` notification: a snapshot of a build for clients that draw a phase
// tree (the VS Code extension's "TensorRT Build" view). Phases are grouped by their name path, so
// the size follows the number of distinct paths, not the hundreds of thousands of phases a real
// build opens; siblings keep their first start order.
import type { BuildState, CacheStats, PhaseNode } from '../shared/protocol.js';
import { phaseNames } from '../mcp/phase-summary.js';


export interface PhaseRow {
  /** Names from the root down; unique per row. */
  path: string[];
  /** How many phases had this path. */
  instances: number;
  /** Instances still open. */
  open: number;
  /** Steps of the most recently started instance. */
  stepsDone: number;
  nbSteps: number;
  /** Wall time from the first instance's start to the last one's end (or now, while open). */
  spanMs: number;
}

export interface BuildView {
  buildId: string;
  modelPath: string;
  state: BuildState;
  backend?: string;
  simulated?: boolean;
  /** Where the builder is now, root first. */
  currentPath: string[];
  /** The same sentence as the progress report. */
  message: string;
  /** The rising figure of the progress report. */
  percentage: number;
  /** Undefined before the first TensorRT callback. */
  sinceLastCallbackMs?: number;
  elapsedMs: number;
  rows: PhaseRow[];
  /** Timing-cache figures, once the backend has reported them. */
  cache?: CacheStats;
  /** Set once the build has ended. */
  outcome?: { status: string; message: string; outputPath?: string; engineBytes?: number };
}

export interface BuildLogLine {
  buildId: string;
  lines: Array<{ severity: string; message: string; t: number }>;
}

/** Groups the phase tree by name path (depth-first, siblings in start order). */
export function phaseRows(phases: readonly PhaseNode[], nowT: number): PhaseRow[] {
  const byId = new Map(phases.map((p) => [p.id, p]));
  const sorted = [...phases].sort((a, b) => a.startT - b.startT || a.id - b.id);
  const rows = new Map<string, PhaseRow & { first: number; last: number; latestStart: number }>();
  for (const p of sorted) {
    const path = phaseNames(byId, p.id);
    const key = path.join('\u0000');
    const end = p.endT ?? nowT;
    let row = rows.get(key);
    if (!row) {
      row = { path, instances: 0, open: 0, stepsDone: 0, nbSteps: 0, spanMs: 0, first: p.startT, last: end, latestStart: -Infinity };
      rows.set(key, row);
    }
    row.instances += 1;
    if (p.endT === undefined) row.open += 1;
    row.last = Math.max(row.last, end);
    if (p.startT >= row.latestStart) {
      row.latestStart = p.startT;
      row.stepsDone = p.stepsDone;
      row.nbSteps = p.nbSteps;
    }
  }
  // Depth-first order: a child path sorts right after its parent, siblings by first start.
  const children = new Map<string, string[]>();
  for (const [key, row] of rows) {
    const parent = row.path.slice(0, -1).join('\u0000');
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent)!.push(key);
  }
  const out: PhaseRow[] = [];
  const emitted = new Set<string>();
  const visit = (key: string) => {
    for (const k of children.get(key) ?? []) {
      if (emitted.has(k)) continue;
      emitted.add(k);
      const r = rows.get(k)!;
      out.push({ path: r.path, instances: r.instances, open: r.open, stepsDone: r.stepsDone, nbSteps: r.nbSteps, spanMs: Math.max(0, Math.round(r.last - r.first)) });
      visit(k);
    }
  };
  visit('');
  // A phase whose parent the service no longer keeps has a path that starts below the root: it
  // still gets its row (with its own subtree), after the rooted ones.
  for (const [key, row] of rows) {
    if (emitted.has(key)) continue;
    const parent = row.path.slice(0, -1).join('\u0000');
    if (!rows.has(parent)) {
      children.set('\u0001', [key]);
      visit('\u0001');
    }
  }
  return out;
}
