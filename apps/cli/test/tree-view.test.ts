import { describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { treeLines, trimLines } from '../render/tree-view.js';

let seq = 0;
const base = () => ({ v: 1 as const, buildId: 'b', seq: ++seq, t: seq * 10 });
const start = (id: number, parentId: number | null, name: string, nbSteps: number, instance = 0): BuildEvent => ({
  ...base(),
  type: 'phase.start',
  id,
  parentId,
  name,
  nbSteps,
  instance,
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

  it('marks phases a stop or a failure cut short as stopped, not finished; early finishes of a good build stay a detail', () => {
    const run = (end: () => BuildEvent[]) => {
      const t = new BuildView('b');
      t.apply(start(1, null, 'Building engine', 6));
      t.apply(start(2, 1, 'Optimizing graph', 27));
      t.apply(finish(2, 21, true));
      t.apply(start(3, 1, 'Timing', 3));
      // Time passes in Timing (10 ms an event) before the build ends.
      for (let i = 0; i < 10; i++) t.apply(step(3, 0));
      for (const e of end()) t.apply(e);
      return treeLines(t, 1e6).map((l) => l.text.trim());
    };
    const fin = (status: 'succeeded' | 'failed' | 'cancelled'): BuildEvent => ({ ...base(), type: 'build.finished', status, durationMs: seq * 10 }) as BuildEvent;
    const good = run(() => [finish(3, 3), finish(1, 4, true), fin('succeeded')]);
    expect(good[0]).toMatch(/^✓ Building engine {2}4\/6 early/);
    expect(good[1]).toMatch(/^✓ Optimizing graph {2}21\/27 early/);
    const failed = run(() => [finish(3, 1, true), finish(1, 2, true), fin('failed')]);
    expect(failed[0]).toMatch(/^■ Building engine {2}stopped at 2\/6/);
    expect(failed[2]).toMatch(/^■ Timing {2}stopped at 1\/3/);
    // The phase that finished early long before the failure is still the detail it was.
    expect(failed[1]).toMatch(/^✓ Optimizing graph {2}21\/27 early/);
    const cancelled = run(() => [
      { ...base(), type: 'build.cancelling', requestedAt: seq * 10, reason: 'user' } as BuildEvent,
      finish(3, 1, true),
      finish(1, 2, true),
      fin('cancelled'),
    ]);
    expect(cancelled[0]).toMatch(/^■ Building engine {2}stopped at 2\/6/);
    expect(cancelled[1]).toMatch(/^✓ Optimizing graph/);
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

describe('tree view of a crashed build', () => {
  it('shows the phase the worker died in, also when its start never arrived', () => {
    const t = new BuildView('b');
    t.apply(start(1, null, 'Building engine', 6));
    t.apply(start(2, 1, 'Cloning network graph', 1516));
    t.apply(step(2, 0));
    t.apply({
      ...base(),
      type: 'build.finished',
      status: 'crashed',
      durationMs: 500,
      error: 'the build worker crashed',
      lastPhasePath: ['Building engine', 'Preparing graph for optimization'],
    });
    const lines = treeLines(t, 600).map((l) => l.text);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('  ✕ Preparing graph for optimization  (the worker died here; its start never arrived)');

    const u = new BuildView('b');
    u.apply(start(1, null, 'Building engine', 6));
    u.apply({ ...base(), type: 'build.finished', status: 'crashed', durationMs: 500, lastPhasePath: ['Building engine'] });
    expect(treeLines(u, 600)[0].text).toMatch(/^■ Building engine .*✕ the worker died here$/);
  });
});
