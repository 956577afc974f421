// The phase tree, shrunk to what an agent can read in one tool result. Real TensorRT builds open
// thousands of phases ("Measuring tactic time" starts ~1,100 times for a tiny model), so phases are
// grouped by their name path and ranked by total time rather than listed one by one.
import type { PhaseNode } from '../shared/protocol.js';

export const PATH_SEPARATOR = ' › ';

export interface SlowPhase {
  /** Names from the root down, joined by " › ". */
  path: string;
  depth: number;
  /** How many phases had this path (a repeated child of a repeated parent counts every time). */
  instances: number;
  /** Sum of the instances' durations; open instances count up to `nowT`. */
  totalMs: number;
  maxMs: number;
  /** Instances still open (the build is running, or it ended without finishing them). */
  open: number;
  /** "stepsDone/nbSteps" of a phase that ran once; repeated phases have no single step count. */
  steps?: string;
  /** The single instance finished before all its steps were reported. */
  early?: boolean;
}

export interface PhaseTreeSummary {
  phaseCount: number;
  maxDepth: number;
  slowest: SlowPhase[];
}

/** Names from the root to `id`; tolerant of missing parents (a tree snapshot taken mid-flight). */
export function phaseNames(byId: ReadonlyMap<number, Pick<PhaseNode, 'name' | 'parentId'>>, id: number): string[] {
  const names: string[] = [];
  let cur = byId.get(id);
  // A corrupt parent chain must not hang the server: a tree cannot be deeper than it has nodes.
  for (let guard = byId.size; cur && guard >= 0; guard--) {
    names.push(cur.name);
    cur = cur.parentId === null ? undefined : byId.get(cur.parentId);
  }
  return names.reverse();
}

export function formatPhasePath(names: readonly string[]): string {
  return names.join(PATH_SEPARATOR);
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

/**
 * Groups phases by path and returns the `limit` groups with the largest total time.
 * `nowT` (ms since build start) closes phases that are still open; pass the build's duration for
 * a finished build.
 */
export function summarizePhases(phases: readonly PhaseNode[], nowT: number, limit = 10): PhaseTreeSummary {
  const byId = new Map(phases.map((p) => [p.id, p]));
  const groups = new Map<string, SlowPhase & { last: PhaseNode }>();
  let maxDepth = 0;
  for (const p of phases) {
    const names = phaseNames(byId, p.id);
    const path = formatPhasePath(names);
    const ms = Math.max(0, (p.endT ?? nowT) - p.startT);
    maxDepth = Math.max(maxDepth, names.length);
    const g = groups.get(path);
    if (g) {
      g.instances += 1;
      g.totalMs += ms;
      g.maxMs = Math.max(g.maxMs, ms);
      g.open += p.endT === undefined ? 1 : 0;
    } else {
      groups.set(path, {
        path,
        depth: names.length,
        instances: 1,
        totalMs: ms,
        maxMs: ms,
        open: p.endT === undefined ? 1 : 0,
        last: p,
      });
    }
  }
  const slowest = [...groups.values()]
    .sort((a, b) => b.totalMs - a.totalMs || a.depth - b.depth || a.path.localeCompare(b.path))
    .slice(0, Math.max(0, limit))
    .map(({ last, ...g }): SlowPhase => {
      const out: SlowPhase = { ...g, totalMs: round1(g.totalMs), maxMs: round1(g.maxMs) };
      if (g.instances === 1) {
        out.steps = `${last.stepsDone}/${last.nbSteps}`;
        if (last.early) out.early = true;
      }
      return out;
    });
  return { phaseCount: phases.length, maxDepth, slowest };
}
