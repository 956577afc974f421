import { describe, expect, it } from 'vitest';
import { BuildView } from '../build-view.js';
import { LiveBuild } from '../../renderer/store/live-build.js';
import { addSpan, MAX_SPANS_PER_ROW, PhaseRows, visibleRows, type PhaseRow, type Spans } from '../phase-rows.js';
import { mnistLikeBuild, StreamWriter } from '../../../test/support/synthetic-build.js';

function applyAll(events: ReturnType<typeof mnistLikeBuild>['events']): LiveBuild {
  const live = new LiveBuild('b1');
  live.applyEvents(events, 1_000_000);
  return live;
}

function row(live: LiveBuild, ...path: string[]): PhaseRow {
  let r = live.phases.root;
  for (const name of path) {
    const next = r.children.find((c) => c.name === name);
    if (!next) throw new Error(`no row ${path.join(' › ')} (stopped at ${r.name || 'root'}: ${r.children.map((c) => c.name).join(', ')})`);
    r = next;
  }
  return r;
}

const NODES_PATH = ['Building engine', 'Building engine from subgraph', 'Computing profile costs', 'Timing tactics', 'Timing graph nodes'];

describe('PhaseRows grouping', () => {
  it('folds repeated instances of a name under one parent path into one row with a count', () => {
    const live = applyAll(mnistLikeBuild(90).events);
    const measuring = row(live, ...NODES_PATH, 'Evaluating tactic times', 'Measuring tactic time');
    expect(measuring.count).toBe(12 * 90);
    expect(row(live, ...NODES_PATH, 'Evaluating tactic times').count).toBe(12);
    // One row per distinct path: the tree stays small however many phases ran.
    expect(live.phases.rowsCreated).toBe(11);
    // The last instance is shown; it had 4 steps when m was even (m = 89 is odd → 2 steps).
    expect(measuring.shown.nbSteps).toBe(2);
    expect(measuring.shown.stepsDone).toBe(2);
  });

  it('marks phases that finished before all their steps, and only those', () => {
    const live = applyAll(mnistLikeBuild(3).events);
    expect(row(live, 'Building engine').shown).toMatchObject({ early: true, stepsDone: 4, nbSteps: 6 });
    expect(row(live, 'Building engine', 'Building engine from subgraph', 'Optimizing graph').shown).toMatchObject({ early: true, stepsDone: 28 });
    expect(row(live, ...NODES_PATH.slice(0, 4)).shown.early).toBe(true);
    expect(row(live, ...NODES_PATH).shown.early).toBe(false);
    expect(row(live, 'Building engine', 'Cloning network graph').shown).toMatchObject({ early: false, stepsDone: 30, nbSteps: 30 });
  });

  it('shows the open instance of a row while one is running, with live steps', () => {
    const w = new StreamWriter();
    const root = w.start('Building engine', null, 6);
    const ev = w.start('Evaluating tactic times', root, 1);
    w.full('Measuring tactic time', ev, 4);
    const open = w.start('Measuring tactic time', ev, 4);
    w.step(open, 0);
    w.step(open, 1);
    const live = applyAll(w.events);
    const r = row(live, 'Building engine', 'Evaluating tactic times', 'Measuring tactic time');
    expect(r.count).toBe(2);
    expect(r.open).toHaveLength(1);
    expect(r.shown).toMatchObject({ id: open, stepsDone: 2, nbSteps: 4 });
    expect(r.shown.endT).toBeUndefined();
  });

  it('never moves a bar backwards on stale or replayed steps', () => {
    const p = new PhaseRows();
    p.start(1, null, 'A', 10, 0);
    p.step(1, 7, 1);
    p.step(1, 3, 2);
    expect(p.byKey.get('\u001fA')!.shown.stepsDone).toBe(7);
  });

  it('follows the active path: the newest open phase and its ancestors', () => {
    const w = new StreamWriter();
    const root = w.start('Building engine', null, 6);
    const sub = w.start('Building engine from subgraph', root, 1);
    const costs = w.start('Computing profile costs', sub, 10);
    w.full('Timing tactics', costs, 3);
    const refit = w.start('Determining refit engines', costs, 5);
    const live = applyAll(w.events);
    expect(live.phases.activePath().map((k) => k.split('\u001f').pop())).toEqual([
      'Building engine',
      'Building engine from subgraph',
      'Computing profile costs',
      'Determining refit engines',
    ]);
    live.applyEvents([{ v: 1, buildId: 'b1', seq: 999, t: 99, type: 'phase.finish', id: refit, stepsDone: 5, early: false }], 0);
    expect(live.phases.activePath().pop()!.split('\u001f').pop()).toBe('Computing profile costs');
  });

  it('attaches a child whose parent already finished (finish may arrive early) under that parent', () => {
    const p = new PhaseRows();
    p.start(1, null, 'P', 2, 0);
    p.finish(1, 1, true, 1);
    p.start(2, 1, 'C', 3, 2);
    expect(p.byKey.get('\u001fP')!.children.map((c) => c.name)).toEqual(['C']);
  });

  it('lists visible rows depth first, respecting collapsed rows', () => {
    const live = applyAll(mnistLikeBuild(2).events);
    const all = visibleRows(live.phases.root, () => true).map((r) => r.name);
    expect(all.slice(0, 4)).toEqual(['Building engine', 'Cloning network graph', 'Preparing graph for optimization', 'Building engine from subgraph']);
    expect(all).toHaveLength(11);
    const collapsed = visibleRows(live.phases.root, (r) => r.name !== 'Building engine from subgraph');
    expect(collapsed.map((r) => r.name)).toEqual(['Building engine', 'Cloning network graph', 'Preparing graph for optimization', 'Building engine from subgraph']);
  });

  it('rebuilds the same rows from a view snapshot as from the live stream', () => {
    const w = mnistLikeBuild(5);
    const cut = Math.floor(w.events.length * 0.6);
    const service = new BuildView('b1');
    for (const e of w.events.slice(0, cut)) service.apply(e);
    const fromSnapshot = new LiveBuild('b1');
    fromSnapshot.applySnapshot(
      {
        id: 'b1',
        state: 'running',
        modelPath: 'm.onnx',
        options: { backend: 'simulated' },
        queuedAt: new Date(0).toISOString(),
        lastSeq: w.events[cut - 1].seq,
        engineAvailable: false,
      },
      service.snapshot(),
      0,
    );
    fromSnapshot.applyEvents(w.events, 0); // the stream replays everything; the seq filter drops the old part
    const live = applyAll(w.events);
    const shape = (l: LiveBuild) => visibleRows(l.phases.root, () => true).map((r) => [r.key, r.count, r.earlyCount, r.shown.stepsDone, r.open.length]);
    expect(shape(fromSnapshot)).toEqual(shape(live));
  });

  it('keeps memory bounded over a million phases: rows and spans do not grow with the build', () => {
    const p = new PhaseRows();
    p.start(1, null, 'Timing graph nodes', 1, 0);
    let id = 2;
    let t = 0;
    for (let i = 0; i < 1_000_000; i++) {
      const m = id++;
      p.start(m, 1, 'Measuring tactic time', 4, (t += 1));
      p.step(m, 4, (t += 1));
      p.finish(m, 4, false, (t += 1)); // 1 ms gaps: spans never touch, so each would be its own span
    }
    const r = p.byKey.get('\u001fTiming graph nodes\u001fMeasuring tactic time')!;
    expect(r.count).toBe(1_000_000);
    expect(p.rowsCreated).toBe(2);
    expect(r.spans.start.length).toBeLessThanOrEqual(MAX_SPANS_PER_ROW);
    expect(r.spans.count.reduce((a, b) => a + b, 0)).toBe(1_000_000);
  });
});

describe('addSpan', () => {
  it('merges touching spans and keeps a long idle gap visible after compaction', () => {
    const s: Spans = { start: [], end: [], count: [], gap: 0 };
    addSpan(s, 0, 10);
    addSpan(s, 5, 12);
    expect(s).toEqual({ start: [0], end: [12], count: [2], gap: 0 });
    for (let i = 0; i < 3000; i++) addSpan(s, 20 + i * 2, 21 + i * 2);
    addSpan(s, 1_000_000, 1_000_001); // after a long silence
    for (let i = 0; i < 3000; i++) addSpan(s, 1_000_010 + i * 2, 1_000_011 + i * 2);
    expect(s.start.length).toBeLessThanOrEqual(MAX_SPANS_PER_ROW);
    // No span bridges the silence.
    for (let i = 0; i < s.start.length; i++) expect(s.start[i] < 7000 && s.end[i] > 999_000).toBe(false);
    expect(s.count.reduce((a, b) => a + b, 0)).toBe(2 + 3000 + 1 + 3000);
  });
});

describe('callback count', () => {
  it('counts the TensorRT callbacks behind the events: start + steps + finish per phase', () => {
    const w = mnistLikeBuild(10);
    const live = applyAll(w.events);
    // Independently from the stream: 2 + the highest stepsDone reported, per phase. (The writer
    // skips some steps of the parents, as coalescing does; stepsDone still counts them.)
    const done = new Map<number, number>();
    for (const e of w.events) {
      if (e.type === 'phase.start') done.set(e.id, 0);
      if (e.type === 'phase.step' || e.type === 'phase.finish') done.set(e.id, Math.max(done.get(e.id)!, e.stepsDone));
    }
    expect(live.phases.callbacks).toBe([...done.values()].reduce((a, n) => a + 2 + n, 0));
    // Coalesced in transit: only the last step of a phase arrives; the count stays the same.
    const p = new PhaseRows();
    p.start(1, null, 'A', 40, 0);
    p.step(1, 40, 1);
    expect(p.callbacks).toBe(41);
    p.finish(1, 40, false, 2);
    expect(p.callbacks).toBe(42);
  });
});

describe('most recently active open child', () => {
  /** What mostActiveChild must answer: a scan of every open phase (the definition). */
  function scan(rows: PhaseRows, parentId: number | null) {
    let best: ReturnType<PhaseRows['mostActiveChild']>;
    for (const o of rows.openInstances()) if (o.parentId === parentId && (!best || o.activity > best.activity)) best = o;
    return best;
  }

  it('matches a scan of the open phases after every event of interleaved parallel subtrees, and after a snapshot', () => {
    // Four builder "threads" each open, step and finish their own subtrees under one shared
    // parent, interleaved pseudo-randomly; the index kept per event must equal the scan.
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    const rows = new PhaseRows();
    rows.start(0, null, 'Building engine', 3, 0);
    rows.start(1, 0, 'Timing graph nodes', 100, 1);
    const stacks: number[][] = [[], [], [], []];
    let nextId = 2;
    // Groups worth checking: the roots and every parent still open (the others are empty).
    const parents = () => [null, ...[...rows.openInstances()].map((o) => o.inst.id)];
    let mismatches = 0;
    for (let t = 2; t < 3000; t++) {
      const th = rnd(4);
      const stack = stacks[th];
      const top = stack[stack.length - 1];
      const action = rnd(10);
      if (stack.length < 3 && action < 4) {
        const parent = top ?? 1;
        rows.start(nextId, parent, stack.length === 0 ? 'Evaluating tactic times' : 'Measuring tactic time', 4, t);
        stack.push(nextId++);
      } else if (top !== undefined && action < 8) {
        rows.step(top, (rows.stepsOf(top) ?? 0) + 1, t);
      } else if (top !== undefined) {
        rows.finish(stack.pop()!, 2, true, t);
      }
      for (const p of parents()) if (rows.mostActiveChild(p) !== scan(rows, p)) mismatches++;
    }
    expect(mismatches).toBe(0);
    expect(rows.openCount).toBeGreaterThan(3);
    const copy = new PhaseRows();
    copy.loadRowsSnapshot(rows.toSnapshot());
    for (const p of parents()) expect(copy.mostActiveChild(p)?.inst.id).toBe(scan(rows, p)?.inst.id);
    const before = parents();
    rows.closeAll(5000);
    for (const p of before) expect(rows.mostActiveChild(p)).toBeUndefined();
  });
});

describe('structure revision', () => {
  it('moves when a row is made, reset or loaded, not on instances of known rows; earlyRows counts rows with an early end', () => {
    const rows = new PhaseRows();
    rows.start(1, null, 'A', 2, 0);
    const afterA = rows.structureRev;
    rows.start(2, 1, 'B', 4, 1);
    expect(rows.structureRev).toBe(afterA + 1);
    const afterB = rows.structureRev;
    rows.step(2, 1, 2);
    rows.finish(2, 1, true, 3);
    rows.start(3, 1, 'B', 4, 4); // another instance of the same row
    rows.finish(3, 2, true, 5);
    expect(rows.structureRev).toBe(afterB);
    expect(rows.earlyRows).toBe(1); // row B, counted once for its two early instances
    const copy = new PhaseRows();
    const before = copy.structureRev;
    copy.loadRowsSnapshot(rows.toSnapshot());
    expect(copy.structureRev).toBeGreaterThan(before);
    expect(copy.earlyRows).toBe(1);
  });
});
