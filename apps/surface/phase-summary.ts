// The build view's rows, shrunk to what an agent can read in one tool result. Real TensorRT
// builds open thousands of phases ("Measuring tactic time" starts ~1,100 times for a tiny model);
// the view already keeps one row per name path with its instance count and time spans, so the
// summary ranks those rows by wall time (the union of their instances' spans), not by summed
// time: builder threads run instances in parallel, and summed time would rank a busy leaf above
// the whole build.
import type { BuildView } from '../shared/build-view.js';
import { formatPath, rowLines } from '../shared/view-format.js';

export interface SlowPhase {
  /** Names from the root down, joined by " › ". */
  path: string;
  depth: number;
  /** How many phases had this path (a repeated child of a repeated parent counts every time). */
  instances: number;
  /** Build time during which at least one instance was open; open instances count up to `nowT`. */
  wallMs: number;
  /** Instances still open (the build is running). */
  open: number;
  /** Instances that finished before all their steps were reported. */
  earlyCount: number;
  /** "stepsDone/nbSteps" of a phase that ran once; repeated phases have no single step count. */
  steps?: string;
  /** The single instance finished before all its steps were reported. */
  early?: boolean;
}

export interface PhaseTreeSummary {
  /** Phases started over the whole build. */
  phaseCount: number;
  maxDepth: number;
  slowest: SlowPhase[];
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

/** The `limit` rows with the most wall time; `nowT` (build time) counts open instances up to now. */
export function summarizePhases(view: BuildView, nowT: number, limit = 10): PhaseTreeSummary {
  const rows = rowLines(view, nowT);
  let phaseCount = 0;
  let maxDepth = 0;
  for (const r of rows) {
    phaseCount += r.count;
    maxDepth = Math.max(maxDepth, r.depth);
  }
  const slowest = [...rows]
    .sort((a, b) => b.wallMs - a.wallMs || a.depth - b.depth || a.firstStartT - b.firstStartT)
    .slice(0, Math.max(0, limit))
    .map((r): SlowPhase => {
      const out: SlowPhase = { path: formatPath(r.path), depth: r.depth, instances: r.count, wallMs: round1(r.wallMs), open: r.open, earlyCount: r.earlyCount };
      if (r.count === 1) {
        out.steps = `${r.stepsDone}/${r.nbSteps}`;
        if (r.early) out.early = true;
      }
      return out;
    });
  return { phaseCount, maxDepth, slowest };
}
