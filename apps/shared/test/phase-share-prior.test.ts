// A first build's percentage (no earlier build, so no learned phase shares): the built-in prior of
// the TensorRT 10/11 phase kinds (build-estimate.ts, PHASE_SHARE_PRIOR, withPrior) gives the slow
// phases the bar, learned shares win kind by kind, and a phase whose first steps alone have shares
// splits the rest evenly instead of holding the percentage (build-view.ts, stepSpan).
import { describe, expect, it } from 'vitest';
import { openTrtTree, StreamWriter } from '../../../test/support/synthetic-build.js';
import { PHASE_SHARE_PRIOR, PhaseShareRecorder, mergeShares, withPrior } from '../build-estimate.js';
import { BuildView } from '../build-view.js';
import { BuildEvent, type BuildEvent as Ev } from '../protocol.js';

const NODE_MS = 2000;
const REFORMAT_MS = 1000;

/**
 * The phase tree of docs/tensorrt.md, timed as builds spend their time: cloning, preparing and
 * optimizing in a blink, 12 graph nodes of 2 s each, 12 reformats of 1 s each, a refit, then a
 * silent serialization. `phaseShares` goes on build.started when given.
 */
function trtShapedBuild(phaseShares?: Record<string, number>): StreamWriter {
  const w = new StreamWriter();
  w.emit({ type: 'build.started', backend: 'tensorrt', backendVersion: '10.16.0', simulated: false, ...(phaseShares ? { phaseShares } : {}) });
  const { root, sub, costs, tactics, nodes } = openTrtTree(w);
  for (let n = 0; n < 12; n++) {
    const ev = w.start('Evaluating tactic times', nodes, 4);
    for (let k = 0; k < 4; k++) {
      const m = w.start('Measuring tactic time', ev, 2);
      w.t += NODE_MS / 8;
      w.step(m, 0);
      w.t += NODE_MS / 8;
      w.step(m, 1);
      w.finish(m, 2);
      w.step(ev, k);
    }
    w.finish(ev, 4);
    w.step(nodes, n);
  }
  w.finish(nodes, 12);
  w.step(tactics, 0);
  const reformats = w.start('Timing tensor reformats', tactics, 12);
  for (let r = 0; r < 12; r++) {
    const c = w.start('Computing reformatting costs', reformats, 1);
    const ev = w.start('Evaluating tactic times', c, 3);
    for (let k = 0; k < 3; k++) {
      const m = w.start('Measuring tactic time', ev, 4);
      for (let s = 0; s < 4; s++) {
        w.t += REFORMAT_MS / 12;
        w.step(m, s);
      }
      w.finish(m, 4);
      w.step(ev, k);
    }
    w.finish(ev, 3);
    w.step(c, 0);
    w.finish(c, 1);
    w.step(reformats, r);
  }
  w.finish(reformats, 12);
  w.step(tactics, 1);
  w.finish(tactics, 2, true);
  w.step(costs, 0);
  w.step(costs, 1);
  const refit = w.start('Determining refit engines', costs, 5);
  w.step(costs, 3);
  for (let s = 0; s < 5; s++) w.step(refit, s);
  w.finish(refit, 5);
  w.finish(costs, 4, true);
  w.step(sub, 0);
  w.finish(sub, 1);
  w.step(root, 2);
  w.t += 1500; // serialization: silent
  w.step(root, 3);
  w.finish(root, 4, true);
  w.finished('succeeded');
  return w;
}

/** The whole percent shown after each event, with the event's time. */
function shown(events: readonly Ev[]): Array<[number, number, Ev]> {
  const v = new BuildView('b1');
  return events.map((e) => {
    v.apply(e);
    return [e.t, Math.floor(v.fraction() * 100), e];
  });
}

/** Stretches of more than `ms` in which steps kept arriving but the percent shown did not move. */
function stalls(events: readonly Ev[], ms: number): string[] {
  const out: string[] = [];
  let pct = -1;
  let changedAt = 0;
  let prevStep = -Infinity;
  for (const [t, p, e] of shown(events)) {
    if (p !== pct) {
      pct = p;
      changedAt = t;
    }
    if (e.type !== 'phase.step') continue;
    if (t - changedAt > ms && t - prevStep < ms) out.push(`${p}% from ${changedAt} to ${t} ms`);
    prevStep = t;
  }
  return out;
}

describe('the prior of phase shares (a first build)', () => {
  it('without it, the first build of the TensorRT tree freezes; with it, the percent moves at least every 3 s', () => {
    expect(stalls(trtShapedBuild().events, 3000).length).toBeGreaterThan(0);
    const { shares, source } = withPrior({});
    expect(source).toBe('prior');
    expect(stalls(trtShapedBuild(shares).events, 3000)).toEqual([]);
  });

  it('gives the bar to tactic timing: most of it passes while graph nodes and reformats are timed', () => {
    const trace = shown(trtShapedBuild(withPrior({}).shares).events);
    const startOf = (name: string) => trace.find(([, , e]) => e.type === 'phase.start' && e.name === name)!;
    const finishOf = (name: string) => {
      const start = startOf(name)[2] as Extract<Ev, { type: 'phase.start' }>;
      return trace.find(([, , e]) => e.type === 'phase.finish' && e.id === start.id)!;
    };
    const before = startOf('Timing graph nodes')[1];
    const after = finishOf('Timing tensor reformats')[1];
    expect(before).toBeLessThan(15);
    expect(after - before).toBeGreaterThan(60);
    expect(after).toBeLessThan(100);
  });

  it('a view from a snapshot mid-build continues with exactly the same fraction', () => {
    const events = trtShapedBuild(withPrior({}).shares).events;
    const cut = events.findIndex((e) => e.type === 'phase.start' && e.name === 'Timing graph nodes') + 7;
    const a = new BuildView('b1');
    for (const e of events.slice(0, cut)) a.apply(e);
    const b = BuildView.fromSnapshot(JSON.parse(JSON.stringify(a.snapshot())));
    for (const e of events.slice(cut)) {
      a.apply(e);
      b.apply(e);
      expect(b.fraction()).toBe(a.fraction());
    }
  });

  it('speaks the recorder’s language: every prior kind is one a finished build of that tree leaves', () => {
    const rec = new PhaseShareRecorder();
    for (const e of trtShapedBuild().events) rec.apply(e);
    const learned = rec.shares();
    expect(Object.keys(PHASE_SHARE_PRIOR).filter((k) => !(k in learned))).toEqual([]);
    for (const v of Object.values(PHASE_SHARE_PRIOR)) {
      expect(v).toBeGreaterThan(0);
      expect(v).toBeLessThan(1);
    }
    // build.started with the prior is a valid protocol event.
    const started = trtShapedBuild(withPrior({}).shares).events[0]!;
    expect(BuildEvent.safeParse(started).success).toBe(true);
  });

  it('learned shares win kind by kind; the source says what the shares rest on', () => {
    const learned = mergeShares([{ durationMs: 1, marks: {}, shares: { 'Building engine@2/6': 0.5, 'Other tree@0/3': 0.2 } }]);
    const mixed = withPrior(learned);
    expect(mixed.source).toBe('mixed');
    expect(mixed.shares['Building engine@2/6']).toBe(0.5);
    expect(mixed.shares['Other tree@0/3']).toBe(0.2);
    expect(mixed.shares['Building engine@3/6']).toBe(PHASE_SHARE_PRIOR['Building engine@3/6']);
    const rec = new PhaseShareRecorder();
    for (const e of trtShapedBuild().events) rec.apply(e);
    const all = withPrior(mergeShares([{ durationMs: 1, marks: {}, shares: rec.shares() }]));
    expect(all.source).toBe('history');
    expect(all.shares).toEqual(mergeShares([{ durationMs: 1, marks: {}, shares: rec.shares() }]));
  });
});

describe('steps without a share after steps with one', () => {
  function fractions(shares: Record<string, number> | undefined): number[] {
    const w = new StreamWriter();
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, ...(shares ? { phaseShares: shares } : {}) });
    const p = w.start('Phase', null, 4);
    const out: number[] = [];
    const v = new BuildView('b1');
    for (const e of w.events) v.apply(e);
    for (let s = 0; s < 3; s++) {
      w.step(p, s);
      v.apply(w.events.at(-1)!);
      out.push(v.fraction());
    }
    return out;
  }

  it('split what is left evenly (the percent keeps moving), and with no share at all stay even', () => {
    const known = fractions({ 'Phase@0/4': 0.7 });
    expect(known[0]).toBeCloseTo(0.7, 9);
    expect(known[1]).toBeCloseTo(0.8, 9);
    expect(known[2]).toBeCloseTo(0.9, 9);
    const none = fractions({ 'Another@0/4': 0.7 });
    for (const [i, f] of none.entries()) expect(f).toBeCloseTo((i + 1) / 4, 9);
    expect(fractions(undefined)).toEqual([0.25, 0.5, 0.75]);
  });

  it('a phase of thousands of steps spends its bar evenly past the steps shares reach', () => {
    const w = new StreamWriter();
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, phaseShares: { 'Long@0/2000': 0.5 } });
    const p = w.start('Long', null, 2000);
    const v = new BuildView('b1');
    for (const e of w.events) v.apply(e);
    for (let s = 0; s < 1000; s++) {
      w.step(p, s);
      v.apply(w.events.at(-1)!);
    }
    // Half after step 0, then the other half over 1,999 even steps: 999 of them done.
    expect(v.fraction()).toBeCloseTo(0.5 + (0.5 * 999) / 1999, 9);
  });
});
