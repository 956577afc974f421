// The `trtBuildStudio/buildView` notification: a snapshot of a build for clients that draw a phase
// tree (the VS Code extension's "TensorRT Build" view). Its rows are the shared build view's rows
// (apps/shared/build-view.ts: one per name path, with instance counts), so the size follows the
// number of distinct paths, not the hundreds of thousands of phases a real build opens; siblings
// keep their first start order.
import type { BuildView as View } from '../shared/build-view.js';
import type { BuildState, CacheStats, Estimate } from '../shared/protocol.js';

export interface PhaseRow {
  /** Names from the root down; unique per row. */
  path: string[];
  /** How many phases had this path. */
  instances: number;
  /** Instances still open. */
  open: number;
  /** Steps of the instance the row shows (the latest-started open one, else the latest finished). */
  stepsDone: number;
  nbSteps: number;
  /** Build time from the first instance's start to the last one's end (or now, while open). */
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
  /** CPU cores the build worker used lately (working vs stalled in a silent stretch), once measured. */
  workerCores?: number;
  /** The GPU's utilisation at the latest heartbeat, percent (TensorRT builds where NVML is present). */
  gpuUtilPercent?: number;
  /** The predicted end, when earlier builds of the same model and options give one. */
  remaining?: Estimate;
  elapsedMs: number;
  rows: PhaseRow[];
  /** Timing-cache figures, once the backend has reported them. */
  cache?: CacheStats;
  /** Set once the build has ended. */
  outcome?: { status: string; message: string; outputPath?: string; engineBytes?: number; lastPhasePath?: string[] };
}

export interface BuildLogLine {
  buildId: string;
  lines: Array<{ severity: string; message: string; t: number }>;
}

/** The view's rows as the notification carries them (depth first, siblings in first-start order). */
export function phaseRows(view: View, nowT: number): PhaseRow[] {
  const rows: PhaseRow[] = [];
  const walk = (r: View['rows']['root'], path: string[]) => {
    for (const c of r.children) {
      const p = [...path, c.name];
      const ends = c.spans.end;
      const end = c.open.length > 0 ? nowT : ends.length > 0 ? ends[ends.length - 1] : (c.shown.endT ?? nowT);
      rows.push({
        path: p,
        instances: c.count,
        open: c.open.length,
        stepsDone: c.shown.stepsDone,
        nbSteps: c.shown.nbSteps,
        spanMs: Math.max(0, Math.round(end - c.firstStartT)),
      });
      walk(c, p);
    }
  };
  walk(view.rows.root, []);
  return rows;
}
