// The TTY tree view over a bounded PhaseTree: old finished siblings are evicted, so "×N" must
// come from the phases' `instance` numbers, not from how many nodes the tree still holds.
import { describe, expect, it } from 'vitest';
import { PhaseTree } from '../../shared/phase-tree.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { treeLines } from '../render/tree-view.js';

let seq = 0;
const base = () => ({ v: 1 as const, buildId: 'b', seq: ++seq, t: seq * 10 });
const start = (id: number, parentId: number | null, name: string, instance = 0): BuildEvent => ({
  ...base(), type: 'phase.start', id, parentId, name, nbSteps: 4, instance,
});
const finish = (id: number): BuildEvent => ({ ...base(), type: 'phase.finish', id, stepsDone: 4, early: false });

describe('tree view over a bounded tree', () => {
  it('counts every instance of a repeated phase even after most were evicted', () => {
    const t = new PhaseTree({ retainFinished: 10 });
    t.apply(start(1, null, 'Timing graph nodes'));
    let id = 10;
    for (let i = 0; i < 500; i++) {
      t.apply(start(++id, 1, 'Measuring tactic time', i));
      t.apply(finish(id));
    }
    expect(t.children(1).length).toBe(10);
    expect(treeLines(t, 99_999)[1].text).toContain('Measuring tactic time ×500  (all done');
    t.apply(start(++id, 1, 'Measuring tactic time', 500));
    expect(treeLines(t, 99_999)[1].text).toContain('×501  (500 done; now 0/4');
  });

  it('shows a lone retained node as a group when its earlier siblings were evicted', () => {
    const t = new PhaseTree({ retainFinished: 1 });
    t.apply(start(1, null, 'root'));
    t.apply(start(2, 1, 'Layer', 0));
    t.apply(finish(2));
    t.apply(start(3, 1, 'Layer', 1));
    t.apply(finish(3));
    expect(t.children(1).map((n) => n.id)).toEqual([3]);
    expect(treeLines(t, 1000)[1].text).toMatch(/✓ Layer ×2 {2}\(all done/);
  });
});
