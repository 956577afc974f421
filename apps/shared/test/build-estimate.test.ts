import { describe, expect, it } from 'vitest';
import { MAX_MARKS, MilestoneRecorder, estimateRemaining, type BuildProfile } from '../build-estimate.js';
import type { BuildEvent } from '../protocol.js';

/**
 * A build shaped like TensorRT's: a root, a long "Timing graph nodes" phase whose steps take
 * `stepMs` each (scaled by `pace`), with many short repeated children, then a tail.
 */
function buildEvents(pace: number, opts: { nodes?: number; tailMs?: number } = {}): { events: BuildEvent[]; durationMs: number } {
  const events: BuildEvent[] = [];
  let t = 0;
  let seq = 0;
  let id = 0;
  const base = () => ({ v: 1 as const, buildId: 'b', seq: seq++, t });
  const start = (name: string, parentId: number | null, nbSteps: number, instance = 0) => {
    const pid = id++;
    events.push({ ...base(), type: 'phase.start', id: pid, parentId, name, nbSteps, instance } as BuildEvent);
    return pid;
  };
  const step = (pid: number, s: number) => events.push({ ...base(), type: 'phase.step', id: pid, step: s, stepsDone: s + 1 } as BuildEvent);
  const finish = (pid: number, stepsDone: number) => events.push({ ...base(), type: 'phase.finish', id: pid, stepsDone, early: false } as BuildEvent);
  const root = start('Building engine', null, 3);
  t += 50 * pace;
  step(root, 0);
  const nodes = start('Timing graph nodes', root, opts.nodes ?? 40);
  for (let i = 0; i < (opts.nodes ?? 40); i++) {
    const ev = start('Evaluating tactic times', nodes, 2, i);
    t += 20 * pace;
    step(ev, 0);
    t += 20 * pace;
    step(ev, 1);
    finish(ev, 2);
    step(nodes, i);
  }
  finish(nodes, opts.nodes ?? 40);
  step(root, 1);
  t += (opts.tailMs ?? 400) * pace;
  step(root, 2);
  finish(root, 3);
  return { events, durationMs: t };
}

function profileOf(pace: number, tailMs?: number): BuildProfile {
  const { events, durationMs } = buildEvents(pace, { tailMs });
  const r = new MilestoneRecorder();
  for (const e of events) r.apply(e);
  return r.profile(durationMs);
}

/** Replays a build up to `fraction` of its duration and asks for the estimate there. */
function estimateAt(profiles: BuildProfile[], pace: number, fraction: number) {
  const { events, durationMs } = buildEvents(pace);
  const nowT = durationMs * fraction;
  const r = new MilestoneRecorder();
  for (const e of events) if (e.t <= nowT) r.apply(e);
  return { est: estimateRemaining(profiles, r.latest, r.latestT, nowT), actualRemaining: durationMs - nowT, durationMs };
}

describe('build estimate', () => {
  it('says nothing without a basis', () => {
    expect(estimateAt([], 1, 0.25).est).toBeUndefined();
    const r = new MilestoneRecorder();
    expect(estimateRemaining([profileOf(1)], r.latest, 0, 0)).toBeUndefined();
  });

  it('predicts an identical build from a quarter of the way in within 20%', () => {
    const profiles = [profileOf(1), profileOf(1)];
    const { est, actualRemaining, durationMs } = estimateAt(profiles, 1, 0.25);
    expect(est).toBeDefined();
    const predictedTotal = durationMs * 0.25 + est!.remainingMs;
    expect(Math.abs(predictedTotal - durationMs) / durationMs).toBeLessThan(0.2);
    expect(est!.basis).toBe(2);
    expect(Math.abs(est!.remainingMs - actualRemaining)).toBeLessThan(0.2 * durationMs);
  });

  it('scales by the pace of this build: a build running twice as slow predicts twice the time left', () => {
    const { est, actualRemaining } = estimateAt([profileOf(1)], 2, 0.5);
    expect(est!.remainingMs / actualRemaining).toBeGreaterThan(0.8);
    expect(est!.remainingMs / actualRemaining).toBeLessThan(1.25);
  });

  it('gives a range when the basis disagrees, with the median in it', () => {
    // Earlier builds that differ in shape, not just in pace (a uniform pace is scaled away).
    const { est } = estimateAt([profileOf(1, 200), profileOf(1, 400), profileOf(1, 900)], 1, 0.3);
    expect(est!.lowMs).toBeLessThanOrEqual(est!.remainingMs);
    expect(est!.remainingMs).toBeLessThanOrEqual(est!.highMs);
    expect(est!.highMs).toBeGreaterThan(est!.lowMs);
  });

  it('never gives a range narrower than the basis allows: ±25 % from one build, ±10 % from three identical ones', () => {
    const one = estimateAt([profileOf(1)], 1, 0.3).est!;
    expect(one.basis).toBe(1);
    expect(one.lowMs).toBeCloseTo(one.remainingMs * 0.75, 6);
    expect(one.highMs).toBeCloseTo(one.remainingMs * 1.25, 6);
    const three = estimateAt([profileOf(1), profileOf(1), profileOf(1)], 1, 0.3).est!;
    expect(three.basis).toBe(3);
    expect(three.lowMs).toBeCloseTo(three.remainingMs * 0.9, 6);
    expect(three.highMs).toBeCloseTo(three.remainingMs * 1.1, 6);
    // A basis that disagrees more than that keeps its own spread.
    const wide = estimateAt([profileOf(1, 200), profileOf(1, 400), profileOf(1, 900)], 1, 0.3).est!;
    expect(wide.highMs - wide.lowMs).toBeGreaterThan(0.2 * wide.remainingMs);
  });

  it('counts a silent stretch against what is left, never below zero', () => {
    const p = profileOf(1);
    const r = new MilestoneRecorder();
    const { events } = buildEvents(1);
    for (const e of events.slice(0, 10)) r.apply(e);
    const a = estimateRemaining([p], r.latest, r.latestT, r.latestT)!;
    const b = estimateRemaining([p], r.latest, r.latestT, r.latestT + 300)!;
    expect(a.remainingMs - b.remainingMs).toBeCloseTo(300, 0);
    expect(estimateRemaining([p], r.latest, r.latestT, r.latestT + 1e9)!.remainingMs).toBe(0);
  });

  it('bounds a profile however many phases the build starts', () => {
    const { events } = buildEvents(1, { nodes: 20000 });
    const r = new MilestoneRecorder();
    for (const e of events) r.apply(e);
    expect(r.marks.size).toBeLessThanOrEqual(MAX_MARKS);
    // Repeated children beyond the first instances are not milestones; the long parent's steps are.
    expect(Object.keys(r.profile(1).marks).filter((k) => k.includes('Evaluating')).length).toBeLessThan(40);
  });
});
