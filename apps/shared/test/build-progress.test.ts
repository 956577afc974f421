// The percentage every surface shows (BuildView.fraction) and what it rests on: phase shares that
// earlier builds leave (PhaseShareRecorder, mergeShares), sequential children that do not take the
// bar back, steps weighted by where earlier builds spent their time, a snapshot that continues
// exactly, and a first build's predicted end from its own progress.
import { describe, expect, it } from 'vitest';
import { StreamWriter } from '../../../test/support/synthetic-build.js';
import { estimateFromProgress, mergeShares, PhaseShareRecorder } from '../build-estimate.js';
import { BuildView } from '../build-view.js';
import type { BuildEvent } from '../protocol.js';

/**
 * A build shaped like the simulated one that froze at 45 %: a root of 6 steps whose third holds
 * nearly all the time, two children run one after the other in that step (a short one that ends
 * early, then a long one whose deepest phase steps slowly).
 */
function shapedBuild(w: StreamWriter, slowSteps = 12, stepMs = 2000): void {
  const root = w.start('Building engine', null, 6);
  const clone = w.start('Cloning network graph', root, 10);
  for (let i = 0; i < 10; i++) w.step(clone, i);
  w.finish(clone, 10);
  w.step(root, 0);
  w.step(root, 1);
  const sub = w.start('Building engine from subgraph', root, 1);
  const opt = w.start('Optimizing graph', sub, 72);
  for (let i = 0; i < 57; i++) w.step(opt, i);
  w.finish(opt, 57, true);
  const costs = w.start('Computing profile costs', sub, 10);
  const timing = w.start('Timing graph nodes', costs, slowSteps);
  for (let i = 0; i < slowSteps; i++) {
    w.t += stepMs;
    w.step(timing, i);
  }
  w.finish(timing, slowSteps);
  w.step(costs, 0);
  w.finish(costs, 1, true);
  w.finish(sub, 1);
  w.step(root, 2);
  w.finish(root, 3, true);
}

/** [t, fraction] after each step of the slow phase ("Timing graph nodes"). */
function slowSteps(events: readonly BuildEvent[]): Array<[number, number]> {
  const v = new BuildView('b1');
  const out: Array<[number, number]> = [];
  let slowId = -1;
  for (const e of events) {
    v.apply(e);
    if (e.type === 'phase.start' && e.name === 'Timing graph nodes') slowId = e.id;
    if (e.type === 'phase.step' && e.id === slowId) out.push([e.t, v.fraction()]);
  }
  return out;
}
const pct = (f: number) => Math.floor(f * 100);

describe('the percentage', () => {
  it('a second child starting at 0 in the same step does not freeze the bar (no history)', () => {
    const w = new StreamWriter();
    w.started();
    shapedBuild(w);
    const slow = slowSteps(w.events);
    expect(slow).toHaveLength(12);
    // Every slow step moves the bar (the old even refinement sat at 45 % from the long child's
    // start to the end). Without history the slow phase's part of the bar is small: it creeps.
    for (let i = 1; i < slow.length; i++) expect(slow[i]![1], `at ${slow[i]![0]} ms`).toBeGreaterThan(slow[i - 1]![1]);
  });

  it('with the shares an earlier build left, the slow phase gets the bar: > 1 % per 2 s step', () => {
    const first = new StreamWriter();
    first.started();
    shapedBuild(first);
    const rec = new PhaseShareRecorder();
    for (const e of first.events) rec.apply(e);
    const shares = rec.shares();
    // The third step of the root held nearly all of what was left of it; the long child nearly all of its step.
    expect(shares['Building engine@2/6']).toBeGreaterThan(0.95);
    expect(shares['Building engine/Building engine from subgraph/Computing profile costs']).toBe(1);
    expect(shares['Building engine/Building engine from subgraph/Optimizing graph']).toBeLessThan(0.01);

    const w = new StreamWriter();
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, phaseShares: mergeShares([{ durationMs: 1, marks: {}, shares }]) });
    shapedBuild(w);
    const slow = slowSteps(w.events);
    for (let i = 1; i < slow.length; i++) expect(pct(slow[i]![1]) - pct(slow[i - 1]![1]), `at ${slow[i]![0]} ms`).toBeGreaterThanOrEqual(1);
    // It follows the time: half way through the slow phase, about half way through the bar.
    const mid = pct(slow[Math.floor(slow.length / 2)]![1]);
    expect(mid).toBeGreaterThan(35);
    expect(mid).toBeLessThan(70);
  });

  it('a view from a snapshot mid-build continues with exactly the same fraction', () => {
    const w = new StreamWriter();
    w.started();
    shapedBuild(w);
    const cut = w.events.findIndex((e) => e.type === 'phase.start' && e.name === 'Timing graph nodes') + 3;
    const a = new BuildView('b1');
    for (const e of w.events.slice(0, cut)) a.apply(e);
    const b = BuildView.fromSnapshot(JSON.parse(JSON.stringify(a.snapshot())));
    for (const e of w.events.slice(cut)) {
      a.apply(e);
      b.apply(e);
      expect(b.fraction()).toBe(a.fraction());
    }
  });

  it('a first build predicts its end from its own progress, a range that narrows', () => {
    expect(estimateFromProgress(0.01, 10_000)).toBeUndefined();
    expect(estimateFromProgress(0.5, 1000)).toBeUndefined();
    const early = estimateFromProgress(0.2, 10_000)!;
    const late = estimateFromProgress(0.8, 40_000)!;
    expect(early).toMatchObject({ remainingMs: 40_000, basis: 0, source: 'progress' });
    expect(late.remainingMs).toBeCloseTo(10_000, 6);
    const width = (e: { lowMs: number; highMs: number; remainingMs: number }) => (e.highMs - e.lowMs) / e.remainingMs;
    expect(width(late)).toBeLessThan(width(early));
    expect(early.lowMs).toBeLessThan(early.remainingMs);
    expect(early.highMs).toBeGreaterThan(early.remainingMs);
  });
});
