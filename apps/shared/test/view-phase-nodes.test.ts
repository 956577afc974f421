// The bridge for surfaces that still read a flat phase list: paths survive, open phases keep the
// ids later events name, finished work is there as spans.
import { describe, expect, it } from 'vitest';
import { BuildView } from '../build-view.js';
import type { PhaseNode } from '../protocol.js';
import { phaseNodesOfView } from '../view-phase-nodes.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';

function pathOf(nodes: PhaseNode[], n: PhaseNode): string {
  const byId = new Map(nodes.map((x) => [x.id, x]));
  const names: string[] = [];
  for (let p: PhaseNode | undefined = n; p; p = p.parentId === null ? undefined : byId.get(p.parentId)) names.unshift(p.name);
  return names.join(' › ');
}

describe('phaseNodesOfView', () => {
  it('keeps every path, the open phases with their real ids, and finished ones as spans', () => {
    const w = new StreamWriter();
    w.started();
    const root = w.start('Building engine', null, 6);
    const nodes = w.start('Timing graph nodes', root, 3);
    for (let i = 0; i < 5; i++) w.full('Measuring tactic time', nodes, 2);
    const v = new BuildView('b1');
    for (const e of w.events) v.apply(e);
    const out = phaseNodesOfView(v.snapshot());
    const open = out.filter((n) => n.endT === undefined);
    expect(open.map((n) => n.id).sort()).toEqual([root, nodes].sort());
    expect(open.find((n) => n.id === nodes)!.parentId).toBe(root);
    const measured = out.filter((n) => n.name === 'Measuring tactic time');
    expect(measured.length).toBeGreaterThan(0);
    expect(measured.every((n) => n.id < 0 && n.endT !== undefined)).toBe(true);
    expect(new Set(measured.map((n) => pathOf(out, n)))).toEqual(new Set(['Building engine › Timing graph nodes › Measuring tactic time']));
    expect(phaseNodesOfView(undefined)).toEqual([]);
  });
});
