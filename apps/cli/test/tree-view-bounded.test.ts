// The TTY tree view over the build view: a repeated phase is one row with its instance count,
// however many instances ran, and memory does not grow with them.
import { describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { treeLines } from '../render/tree-view.js';

let seq = 0;
const base = () => ({ v: 1 as const, buildId: 'b', seq: ++seq, t: seq * 10 });
const start = (id: number, parentId: number | null, name: string, instance = 0): BuildEvent => ({
  ...base(),
  type: 'phase.start',
  id,
  parentId,
  name,
  nbSteps: 4,
  instance,
});
const finish = (id: number): BuildEvent => ({ ...base(), type: 'phase.finish', id, stepsDone: 4, early: false });

describe('tree view over the build view', () => {
  it('counts every instance of a repeated phase and keeps one row for them', () => {
    const v = new BuildView('b');
    v.apply(start(1, null, 'Timing graph nodes'));
    let id = 10;
    for (let i = 0; i < 500; i++) {
      v.apply(start(++id, 1, 'Measuring tactic time', i));
      v.apply(finish(id));
    }
    expect(v.rows.byKey.size).toBe(2);
    expect(treeLines(v, 99_999)[1].text).toContain('Measuring tactic time ×500  (all done');
    v.apply(start(id + 1, 1, 'Measuring tactic time', 500));
    expect(treeLines(v, 99_999)[1].text).toContain('×501  (500 done; now 0/4');
  });

  it('groups the children of every instance of a repeated parent under one line', () => {
    const v = new BuildView('b');
    v.apply(start(1, null, 'root'));
    for (const [layer, inner] of [
      [2, 3],
      [4, 5],
    ]) {
      v.apply(start(layer, 1, 'Layer'));
      v.apply(start(inner, layer, 'Tactic'));
      v.apply(finish(inner));
      v.apply(finish(layer));
    }
    const lines = treeLines(v, 1000).map((l) => l.text);
    expect(lines[1]).toMatch(/✓ Layer ×2 {2}\(all done in /);
    expect(lines[2]).toMatch(/^ {4}✓ Tactic ×2 {2}\(all done in /);
  });

  it('shows control characters in a phase name instead of sending them to the terminal', () => {
    const v = new BuildView('b');
    v.apply(start(1, null, 'evil\x1b[2Jname'));
    const text = treeLines(v, 100)[0].text;
    expect(text).not.toContain('\x1b');
    expect(text).toContain('evil\\x1b[2Jname');
  });
});
