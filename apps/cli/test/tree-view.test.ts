import { describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { treeLines, trimLines } from '../render/tree-view.js';

let seq = 0;
const base = () => ({ v: 1 as const, buildId: 'b', seq: ++seq, t: seq * 10 });
const start = (id: number, parentId: number | null, name: string, nbSteps: number, instance = 0): BuildEvent => ({
  ...base(), type: 'phase.start', id, parentId, name, nbSteps, instance,
});
const step = (id: number, s: number): BuildEvent => ({ ...base(), type: 'phase.step', id, step: s, stepsDone: s + 1 });
const finish = (id: number, stepsDone: number, early = false): BuildEvent => ({ ...base(), type: 'phase.finish', id, stepsDone, early });

describe('tree view', () => {
  it('groups repeated sibling phases with a count and expands only the running one', () => {
    const t = new BuildView('b');
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
    const t = new BuildView('b');
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
