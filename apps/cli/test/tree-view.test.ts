import { describe, expect, it } from 'vitest';
import { PhaseTree } from '../../shared/phase-tree.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { treeLines, trimLines } from '../render/tree-view.js';

let seq = 0;
const base = () => ({ v: 1 as const, buildId: 'b', seq: ++seq, t: seq * 10 });
const start = (id: number, parentId: number | null, name: string, nbSteps: number, instance = 0): BuildEvent => ({
  ...base(), type: 'phase.start', id, parentId, name, nbSteps, instance,
});
const step = (id: number, s: number): BuildEvent => ({ ...base(), type: 'phase.step', id, step: s, stepsDone: s + 1 });
const finish = (id: number, stepsDone: number, early = false): BuildEvent => ({ ...base(), type: 'phase.finish', id, stepsDone, early });

describe('PhaseTree', () => {
  it('tracks steps, early finishes and ignores stale or unknown events', () => {
    const t = new PhaseTree();
    t.apply(start(1, null, 'Building engine', 6));
    t.apply(start(2, 1, 'Optimizing graph', 33));
    expect(t.apply(step(2, 4))).toBe(true);
    expect(t.apply(step(2, 2))).toBe(false); // coalesced transport: never backwards
    expect(t.apply(step(99, 1))).toBe(false);
    t.apply(finish(2, 28, true));
    expect(t.get(2)).toMatchObject({ stepsDone: 28, early: true });
    expect(t.apply(step(2, 30))).toBe(false); // after finish
    expect(t.openCount).toBe(1);
    expect(t.children(1).map((n) => n.name)).toEqual(['Optimizing graph']);
    const snap = t.snapshot();
    t.apply(step(1, 3));
    expect(snap[0].stepsDone).toBe(0); // snapshots are copies
    expect(PhaseTree.from(snap).snapshot()).toEqual(snap);
  });
});

describe('tree view', () => {
  it('groups repeated sibling phases with a count and expands only the running one', () => {
    const t = new PhaseTree();
    t.apply(start(1, null, 'Timing graph nodes', 12));
    let id = 10;
    for (let i = 0; i < 50; i++) {
      t.apply(start(++id, 1, 'Measuring tactic time', 4, i));
      t.apply(finish(id, 4));
    }
    t.apply(start(++id, 1, 'Measuring tactic time', 4, 50));
    t.apply(step(id, 1));
    t.apply(start(++id, id - 1, 'Inner', 3));
    const lines = treeLines(t, 2000).map((l) => l.text);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('Measuring tactic time ×51');
    expect(lines[1]).toContain('50 done; now 2/4');
    expect(lines[2]).toMatch(/^ {4}▸ Inner .* 0\/3/);
  });

  it('trims finished lines first and keeps the running path', () => {
    const t = new PhaseTree();
    t.apply(start(1, null, 'root', 40));
    for (let i = 0; i < 30; i++) {
      t.apply(start(100 + i, 1, `done ${i}`, 1));
      t.apply(finish(100 + i, 1));
    }
    t.apply(start(200, 1, 'running', 5));
    const all = treeLines(t, 5000);
    expect(all).toHaveLength(32);
    const shown = trimLines(all, 10);
    expect(shown).toHaveLength(10);
    expect(shown[0]).toMatch(/lines hidden/);
    expect(shown.some((l) => l.includes('root'))).toBe(true);
    expect(shown[shown.length - 1]).toContain('running');
  });
});
