// The phase tree, shrunk to what an agent can read in one tool result. Real TensorRT builds open
// thousands of phases ("Measuring tactic time" starts ~1,100 times for a tiny model), so phases are
// grouped by their name path. Groups are ranked by wall time (the union of their instances' spans),
// not by summed time: builder threads run instances in parallel, and summed time would rank a busy
// leaf above the whole build.
import type { PhaseNode } from '../shared/protocol.js';

export const PATH_SEPARATOR = ' › ';

export interface SlowPhase {
  /** Names from the root down, joined by " › ". */
  path: string;
  depth: number;
  /** How many phases had this path (a repeated child of a repeated parent counts every time). */
  instances: number;
  /** Wall time during which at least one instance was open; open instances count up to `nowT`. */
  wallMs: number;
  /** Sum of the instances' durations (exceeds wallMs when instances ran in parallel). */
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
  const groups = new Map<string, Omit<SlowPhase, 'wallMs'> & { last: PhaseNode; spans: Array<[number, number]> }>();
  let maxDepth = 0;
  for (const p of phases) {
    const names = phaseNames(byId, p.id);
    const path = formatPhasePath(names);
    const end = Math.max(p.startT, p.endT ?? nowT);
    const ms = end - p.startT;
    maxDepth = Math.max(maxDepth, names.length);
    const g = groups.get(path);
    if (g) {
      g.instances += 1;
      g.totalMs += ms;
      g.maxMs = Math.max(g.maxMs, ms);
      g.open += p.endT === undefined ? 1 : 0;
      g.spans.push([p.startT, end]);
    } else {
      groups.set(path, {
        path,
        depth: names.length,
        instances: 1,
        totalMs: ms,
        maxMs: ms,
        open: p.endT === undefined ? 1 : 0,
        last: p,
        spans: [[p.startT, end]],
      });
    }
  }
  const slowest = [...groups.values()]
    .map(({ spans, ...g }) => ({ ...g, wallMs: unionLength(spans) }))
    .sort((a, b) => b.wallMs - a.wallMs || a.depth - b.depth || a.path.localeCompare(b.path))
    .slice(0, Math.max(0, limit))
    .map(({ last, ...g }): SlowPhase => {
      const out: SlowPhase = { ...g, wallMs: round1(g.wallMs), totalMs: round1(g.totalMs), maxMs: round1(g.maxMs) };
      if (g.instances === 1) {
        out.steps = `${last.stepsDone}/${last.nbSteps}`;
        if (last.early) out.early = true;
      }
      return out;
    });
  return { phaseCount: phases.length, maxDepth, slowest };
}

/** Length of the union of [start, end] spans. */
export function unionLength(spans: Array<[number, number]>): number {
  spans.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const [s, e] of spans) {
    if (s > curEnd) {
      if (curEnd > curStart) total += curEnd - curStart;
      curStart = s;
      curEnd = e;
    } else if (e > curEnd) {
      curEnd = e;
    }
  }
  if (curEnd > curStart) total += curEnd - curStart;
  return total;
}
