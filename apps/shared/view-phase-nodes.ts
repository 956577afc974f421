// A bridge for surfaces that still read a flat phase list (the MCP summaries and progress, the
// LSP's rows) while they move onto the build view itself: the view's rows as PhaseNodes. Open
// phases keep their real ids (later events name them); finished work is one node per time span
// of a row, with negative ids that no event uses. The build's record no longer carries phases.
import type { BuildViewSnapshot } from './build-view.js';
import type { PhaseNode } from './protocol.js';

export function phaseNodesOfView(view: BuildViewSnapshot | undefined): PhaseNode[] {
  if (!view) return [];
  const { rows, open } = view.rows;
  const out: PhaseNode[] = [];
  /** A node id standing for each row (its first open instance, else its first span), for children. */
  const rep: (number | undefined)[] = rows.map(() => undefined);
  for (const o of open) rep[o.row] ??= o.id;
  let synthetic = -1;
  const spanNodes: { row: number; node: PhaseNode }[] = [];
  rows.forEach((r, i) => {
    const { start, end, count } = r.spans;
    let instance = 0;
    for (let k = 0; k < start.length; k++) {
      const node: PhaseNode = { id: synthetic--, parentId: null, name: r.name, nbSteps: r.shown.nbSteps, instance, stepsDone: r.shown.stepsDone, startT: start[k], endT: end[k] };
      instance += count[k];
      rep[i] ??= node.id;
      spanNodes.push({ row: i, node });
    }
  });
  for (const { row, node } of spanNodes) {
    const p = rows[row].parent;
    node.parentId = p >= 0 ? (rep[p] ?? null) : null;
    out.push(node);
  }
  const ids = new Set(out.map((n) => n.id));
  for (const o of open) ids.add(o.id);
  for (const o of open) {
    const r = rows[o.row];
    const parentRow = r?.parent ?? -1;
    const parentId = o.parentId !== null && ids.has(o.parentId) ? o.parentId : parentRow >= 0 ? (rep[parentRow] ?? null) : null;
    out.push({ id: o.id, parentId, name: r?.name ?? '?', nbSteps: o.nbSteps, instance: Math.max(0, (r?.count ?? 1) - 1), stepsDone: o.stepsDone, startT: o.startT });
  }
  return out;
}
