// The bounded PhaseTree (retainFinished): a long synthetic build must keep every open phase, at
// most N finished ones, never a child without its parent, and internal structures that stay
// O(retained) rather than O(phases ever started).
import { describe, expect, it } from 'vitest';
import { PhaseTree } from '../phase-tree.js';
import type { BuildEvent, PhaseNode } from '../protocol.js';

let seq = 0;
const base = () => ({ v: 1 as const, buildId: 'b', seq: ++seq, t: seq });
const start = (id: number, parentId: number | null, name: string, instance = 0): BuildEvent => ({
  ...base(), type: 'phase.start', id, parentId, name, nbSteps: 3, instance,
});
const step = (id: number, s: number): BuildEvent => ({ ...base(), type: 'phase.step', id, step: s, stepsDone: s + 1 });
const finish = (id: number): BuildEvent => ({ ...base(), type: 'phase.finish', id, stepsDone: 3, early: false });

/**
 * A builder-like stream: one root, `layers` layer phases, each with tactic phases that run on
 * `threads` interleaved "threads" (so several are open at once and finish out of start order),
 * and every tactic has a nested measurement. Roughly 1 + layers * (1 + 2 * tactics) phases.
 */
function* syntheticBuild(layers: number, tactics: number, threads: number): Generator<BuildEvent> {
  let id = 1;
  yield start(1, null, 'Building engine');
  for (let l = 0; l < layers; l++) {
    const layer = ++id;
    yield start(layer, 1, 'Layer', l);
    const pending: Array<[number, number]> = [];
    for (let k = 0; k < tactics; k++) {
      const tactic = ++id;
      const inner = ++id;
      yield start(tactic, layer, 'Tactic', k);
      yield start(inner, tactic, 'Measure', 0);
      yield step(inner, 0);
      pending.push([tactic, inner]);
      if (pending.length >= threads) {
        // Finish the middle one first: finishing order differs from start order.
        const [t, i] = pending.splice(Math.floor(pending.length / 2), 1)[0];
        yield finish(i);
        yield finish(t);
      }
    }
    for (const [t, i] of pending.reverse()) {
      yield finish(i);
      yield finish(t);
    }
    yield finish(layer);
  }
  yield finish(1);
}

function checkInvariants(tree: PhaseTree, limit: number, open: Set<number>): void {
  const snap = tree.snapshot();
  const ids = new Set(snap.map((n) => n.id));
  const finished = snap.filter((n) => n.endT !== undefined).length;
  expect(finished).toBeLessThanOrEqual(limit);
  expect(snap.length).toBeLessThanOrEqual(limit + open.size);
  expect(tree.openCount).toBe(open.size);
  for (const id of open) expect(ids.has(id)).toBe(true);
  for (const n of snap) if (n.parentId !== null) expect(ids.has(n.parentId)).toBe(true);
  // children() must agree with the snapshot (no stale child ids left in the index).
  let viaChildren = 0;
  const walk = (p: number | null) => {
    for (const c of tree.children(p)) {
      viaChildren++;
      walk(c.id);
    }
  };
  walk(null);
  expect(viaChildren).toBe(snap.length);
  const sizes = tree.internalSizes();
  expect(sizes.nodes).toBe(snap.length);
  expect(sizes.parents).toBeLessThanOrEqual(snap.length);
  expect(sizes.queue + sizes.blocked).toBeLessThanOrEqual(finished);
  // The queue's backing array is compacted lazily: at most twice its live part plus slack.
  expect(sizes.queueArray).toBeLessThanOrEqual(2 * (limit + open.size) + 1100);
}

describe('PhaseTree with retainFinished', () => {
  it('stays bounded over a 100k-phase stream, keeping open phases and never orphaning a child', () => {
    const limit = 2000;
    const tree = new PhaseTree({ retainFinished: limit });
    const open = new Set<number>();
    let phases = 0;
    let i = 0;
    let maxNodes = 0;
    let maxParents = 0;
    for (const ev of syntheticBuild(500, 100, 4)) {
      tree.apply(ev);
      if (ev.type === 'phase.start') {
        open.add(ev.id);
        phases++;
      } else if (ev.type === 'phase.finish') open.delete(ev.id);
      const s = tree.internalSizes();
      maxNodes = Math.max(maxNodes, s.nodes);
      maxParents = Math.max(maxParents, s.parents);
      if (++i % 25_000 === 0) checkInvariants(tree, limit, open);
    }
    expect(phases).toBeGreaterThanOrEqual(100_000);
    checkInvariants(tree, limit, open);
    expect(tree.evicted).toBe(phases - tree.size);
    // Never more than the limit plus what was open at the time (a handful here).
    expect(maxNodes).toBeLessThanOrEqual(limit + 16);
    expect(maxParents).toBeLessThanOrEqual(limit + 16);
  });

  it('keeps the most recently finished phases and evicts the oldest first', () => {
    const tree = new PhaseTree({ retainFinished: 3 });
    tree.apply(start(1, null, 'root'));
    for (let k = 0; k < 10; k++) {
      tree.apply(start(10 + k, 1, 'child', k));
      tree.apply(finish(10 + k));
    }
    expect(tree.children(1).map((n) => n.id)).toEqual([17, 18, 19]);
    expect(tree.get(1)?.endT).toBeUndefined();
    expect(tree.evicted).toBe(7);
  });

  it('does not evict a finished parent while a child is still open, and evicts it once the child goes', () => {
    const tree = new PhaseTree({ retainFinished: 1 });
    tree.apply(start(1, null, 'parent'));
    tree.apply(start(2, 1, 'child'));
    tree.apply(finish(1)); // out of order: parent ends while its child runs
    tree.apply(start(3, null, 'other'));
    tree.apply(finish(3)); // two finished, limit 1: the parent is the oldest but must stay
    expect(tree.get(1)).toBeDefined();
    expect(tree.get(2)).toBeDefined();
    expect(tree.get(3)).toBeUndefined();
    tree.apply(finish(2)); // child finishes: now child, then parent, can go
    const snap = tree.snapshot();
    expect(snap.filter((n) => n.endT !== undefined).length).toBeLessThanOrEqual(1);
    for (const n of snap) if (n.parentId !== null) expect(tree.get(n.parentId)).toBeDefined();
    expect(tree.internalSizes().blocked).toBe(0);
  });

  it('bounds a tree rebuilt from a snapshot, and leaves an unbounded tree alone', () => {
    const nodes: PhaseNode[] = [{ id: 1, parentId: null, name: 'root', nbSteps: 1, instance: 0, stepsDone: 0, startT: 0 }];
    for (let k = 0; k < 50; k++) {
      nodes.push({ id: 100 + k, parentId: 1, name: 'c', nbSteps: 1, instance: k, stepsDone: 1, startT: k, endT: k + 1 });
    }
    const bounded = PhaseTree.from(nodes, { retainFinished: 5 });
    expect(bounded.size).toBe(6);
    expect(bounded.children(1).map((n) => n.instance)).toEqual([45, 46, 47, 48, 49]);
    const full = PhaseTree.from(nodes);
    expect(full.size).toBe(51);
    expect(full.evicted).toBe(0);
  });

  it('rejects a retainFinished that is not a non-negative integer', () => {
    expect(() => new PhaseTree({ retainFinished: -1 })).toThrow(/non-negative integer/);
    expect(() => new PhaseTree({ retainFinished: 1.5 })).toThrow(/non-negative integer/);
  });
});
