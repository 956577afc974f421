import { describe, expect, it } from 'vitest';
import { mnistLikeBuild, StreamWriter } from '../../../test/support/synthetic-build.js';
import { BuildView, stateOf } from '../build-view.js';
import { BuildViewSnapshot } from '../build-view-schema.js';
import type { BuildEvent } from '../protocol.js';
import { VIEW_LOG_LINE_CHARS, VIEW_LOG_LINES } from '../recent-logs.js';

function fold(events: readonly BuildEvent[]): BuildView {
  const v = new BuildView('b1');
  for (const e of events) v.apply(e);
  return v;
}

/** What a surface would show, as plain data (rows in display order with their figures). */
function shown(v: BuildView) {
  const rows: string[] = [];
  const walk = (r: typeof v.rows.root, depth: number) => {
    for (const c of r.children) {
      rows.push(
        `${'  '.repeat(depth)}${c.name} x${c.count} ${c.shown.stepsDone}/${c.shown.nbSteps}${c.open.length ? ' open' : ''}${c.earlyCount ? ` early${c.earlyCount}` : ''} spans${c.spans.start.length}`,
      );
      walk(c, depth + 1);
    }
  };
  walk(v.rows.root, 0);
  return {
    status: v.status,
    seq: v.seq,
    work: v.work,
    fraction: v.fraction(),
    lastCallbackT: v.lastCallbackT,
    path: v.currentPath().map((l) => `${l.name} ${l.stepsDone}/${l.nbSteps}`),
    callbacks: v.rows.callbacks,
    outcome: v.outcome?.status,
    rows,
  };
}

describe('BuildView', () => {
  it('walks the status machine: queued, running, cancelling, then a final status that never changes', () => {
    const w = new StreamWriter();
    const v = new BuildView('b1');
    expect(v.status).toBe('queued');
    w.started();
    v.apply(w.events.at(-1)!);
    expect(v.status).toBe('running');
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: true });
    v.apply(w.events.at(-1)!);
    expect(v.status).toBe('cancelling');
    w.emit({ type: 'build.cancelling', requestedAt: 0, reason: 'user' });
    v.apply(w.events.at(-1)!);
    expect(v.cancelling).toMatchObject({ reason: 'user' });
    w.finished('cancelled', { cancelLatencyMs: 1 });
    v.apply(w.events.at(-1)!);
    expect(v.status).toBe('cancelled');
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: true });
    v.apply(w.events.at(-1)!);
    expect(v.status).toBe('cancelled');
  });

  it('speaks the record\'s vocabulary, and its snapshot keeps the wire word "stopping" both ways', () => {
    const w = new StreamWriter();
    const v = new BuildView('b1');
    w.started();
    w.emit({ type: 'build.cancelling', requestedAt: 0, reason: 'timeout' } as never);
    for (const e of w.events) v.apply(e);
    expect(v.status).toBe('cancelling');
    const wire = BuildViewSnapshot.parse(JSON.parse(JSON.stringify(v.snapshot())));
    expect(wire.status).toBe('stopping');
    expect(BuildView.fromSnapshot(wire).status).toBe('cancelling');
  });

  it('stateOf moves a status ahead only by what the host knows, never past a final one', () => {
    expect(stateOf({ status: 'queued' })).toBe('queued');
    expect(stateOf({ status: 'queued' }, { launched: true })).toBe('running');
    expect(stateOf({ status: 'queued' }, { stopRequested: true })).toBe('cancelling');
    expect(stateOf({ status: 'running' }, { launched: true, stopRequested: true })).toBe('cancelling');
    expect(stateOf({ status: 'succeeded' }, { launched: true, stopRequested: true })).toBe('succeeded');
    expect(stateOf({ status: 'cancelled' }, { stopRequested: true })).toBe('cancelled');
  });

  it('ignores replays by seq, so a snapshot followed by overlapping events counts nothing twice', () => {
    const { events } = mnistLikeBuild(5);
    const once = fold(events);
    const twice = fold([...events, ...events.slice(10)]);
    expect(shown(twice)).toEqual(shown(once));
  });

  it('counts work as phases started plus steps done, including steps coalesced in transit', () => {
    const w = new StreamWriter();
    w.started();
    const root = w.start('Building engine', null, 10);
    w.step(root, 6); // steps 0..5 coalesced away: stepsDone jumps to 7
    w.finish(root, 9, true);
    expect(fold(w.events).work).toBe(1 + 9);
  });

  it('takes the last TensorRT callback from phase events and from heartbeats, whichever is later', () => {
    const w = new StreamWriter();
    w.started();
    const root = w.start('Building engine', null, 3);
    const tStart = w.t;
    const v = fold(w.events);
    expect(v.lastCallbackT).toBe(tStart);
    w.t += 5000;
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 1000, cancelRequested: false }, 0);
    v.apply(w.events.at(-1)!);
    expect(v.lastCallbackT).toBe(w.t - 1000);
    // An older heartbeat report never moves it back.
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 4500, cancelRequested: false }, 1);
    v.apply(w.events.at(-1)!);
    expect(v.lastCallbackT).toBe(w.t - 1 - 1000);
    w.step(root, 0);
    v.apply(w.events.at(-1)!);
    expect(v.lastCallbackT).toBe(w.t);
  });

  it('runs the build clock from the newest event and ends at the native duration, never going back', () => {
    const w = new StreamWriter();
    const v = new BuildView('b1');
    w.started();
    v.apply(w.events.at(-1)!, 10_000);
    const root = w.start('Building engine', null, 3);
    v.apply(w.events.at(-1)!, 10_002);
    const atEvent = v.elapsedMs(10_002);
    expect(v.elapsedMs(11_002)).toBe(atEvent + 1000);
    expect(v.sinceLastCallbackMs(11_002)).toBe(1000);
    w.t += 1000;
    w.finish(root, 3);
    w.finished('succeeded', { engineBytes: 1 });
    v.apply(w.events.at(-2)!, 11_003);
    v.apply(w.events.at(-1)!, 11_004);
    expect(v.elapsedMs(99_999)).toBe(v.outcome!.durationMs);
    expect(v.elapsedMs(99_999)).toBeGreaterThanOrEqual(atEvent + 1000);
  });

  it('names the current phase by latest activity: a parent that advances, or regains control when its child ends', () => {
    const w = new StreamWriter();
    w.started();
    const root = w.start('Building engine', null, 6);
    const costs = w.start('Computing profile costs', root, 10);
    const refit = w.start('Determining refit engines', costs, 5);
    const v = fold(w.events);
    expect(v.currentPath().map((l) => l.name)).toEqual(['Building engine', 'Computing profile costs', 'Determining refit engines']);
    w.step(costs, 3); // the parent advances while its child is open
    v.apply(w.events.at(-1)!);
    expect(v.currentPath().map((l) => `${l.name} ${l.stepsDone}`)).toEqual(['Building engine 0', 'Computing profile costs 4']);
    w.step(refit, 0);
    w.finish(refit, 5);
    for (const e of w.events.slice(-2)) v.apply(e);
    expect(v.currentPath().at(-1)?.name).toBe('Computing profile costs');
  });

  it('gives a progress fraction that only rises, refined by open children, and is 1 only on success', () => {
    const build = mnistLikeBuild(8);
    build.finished('succeeded', { engineBytes: 1 });
    const { events } = build;
    const v = new BuildView('b1');
    let last = 0;
    for (const e of events) {
      v.apply(e);
      const f = v.fraction();
      expect(f).toBeGreaterThanOrEqual(last);
      expect(f).toBeLessThanOrEqual(1);
      last = f;
    }
    expect(v.status).toBe('succeeded');
    expect(v.fraction()).toBe(1);
    const w = new StreamWriter();
    w.started();
    const root = w.start('Building engine', null, 4);
    w.step(root, 0);
    const child = w.start('Timing', root, 2);
    w.step(child, 0);
    const cut = fold(w.events);
    // Step 1 of 4 is running; its child, a kind no earlier build timed, gets half of that step,
    // and has done 1 of its 2 steps.
    expect(cut.fraction()).toBeCloseTo((1 + 0.5 * 0.5) / 4, 5);
    w.finished('cancelled');
    cut.apply(w.events.at(-1)!);
    expect(cut.fraction()).toBeLessThan(1);
  });

  it('keeps the predicted end from heartbeats, counting down between them, the worker CPU in cores and the GPU figure', () => {
    const w = new StreamWriter();
    const v = new BuildView('b1');
    w.started();
    v.apply(w.events.at(-1)!, 0);
    expect(v.remaining(0)).toBeUndefined();
    w.t = 1000;
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false, workerCpuMs: 100, estimate: { remainingMs: 9000, lowMs: 8000, highMs: 12000, basis: 2 } }, 0);
    v.apply(w.events.at(-1)!, 1000);
    expect(v.remaining(1000)).toEqual({ remainingMs: 9000, lowMs: 8000, highMs: 12000, basis: 2 });
    expect(v.remaining(3000)).toEqual({ remainingMs: 7000, lowMs: 6000, highMs: 10000, basis: 2 });
    expect(v.workerCores()).toBeUndefined();
    w.t = 2000;
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 1000, cancelRequested: false, workerCpuMs: 1600, gpuUtilPercent: 87 }, 0);
    v.apply(w.events.at(-1)!, 2000);
    expect(v.workerCores()).toBeCloseTo(1.5, 5);
    expect(v.gpu).toEqual({ t: 2000, percent: 87 });
    const again = BuildView.fromSnapshot(BuildViewSnapshot.parse(JSON.parse(JSON.stringify(v.snapshot()))));
    expect(again.workerCores()).toBeCloseTo(1.5, 5);
    expect(again.gpu).toEqual({ t: 2000, percent: 87 });
    expect(again.estimate).toEqual(v.estimate);
    w.finished('succeeded');
    v.apply(w.events.at(-1)!, 2500);
    expect(v.remaining(2500)).toBeUndefined();
  });

  it('keeps the last lines of the log, bounded, through a snapshot', () => {
    const w = new StreamWriter();
    const v = new BuildView('b1');
    w.started();
    for (let i = 0; i < VIEW_LOG_LINES + 20; i++) w.emit({ type: 'log', severity: i % 2 ? 'warning' : 'info', message: `line ${i}` }, 1);
    w.emit({ type: 'log', severity: 'verbose', message: 'x'.repeat(VIEW_LOG_LINE_CHARS + 10) }, 1);
    for (const e of w.events) v.apply(e, 0);
    const lines = v.logs.lines();
    expect(lines).toHaveLength(VIEW_LOG_LINES);
    expect(v.logs.dropped).toBe(21);
    expect(lines[0].message).toBe('line 21');
    expect(lines.at(-1)!.message).toHaveLength(VIEW_LOG_LINE_CHARS);
    expect(lines.at(-1)!.message.endsWith('…')).toBe(true);
    const again = BuildView.fromSnapshot(BuildViewSnapshot.parse(JSON.parse(JSON.stringify(v.snapshot()))));
    expect(again.logs.lines()).toEqual(lines);
    expect(again.logs.dropped).toBe(21);
    // The restored view goes on keeping the newest lines.
    w.emit({ type: 'log', severity: 'info', message: 'newest' }, 1);
    again.apply(w.events.at(-1)!, 0);
    expect(again.logs.lines().at(-1)!.message).toBe('newest');
    expect(again.logs.lines()[0].message).toBe('line 22');
  });

  it('keeps why there is no GPU figure, through a snapshot', () => {
    const w = new StreamWriter();
    const v = new BuildView('b1');
    w.started();
    w.t = 1000;
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false, workerCpuMs: 10, gpuNote: 'no GPU utilisation: NVML was not found' }, 0);
    for (const e of w.events) v.apply(e, 1000);
    expect(v.gpu).toBeUndefined();
    expect(v.gpuNote).toBe('no GPU utilisation: NVML was not found');
    const again = BuildView.fromSnapshot(BuildViewSnapshot.parse(JSON.parse(JSON.stringify(v.snapshot()))));
    expect(again.gpuNote).toBe(v.gpuNote);
  });

  it('rebuilds from a snapshot at any point (through JSON and the schema) and continues to the same result', () => {
    const { events } = mnistLikeBuild(12);
    const full = shown(fold(events));
    for (const cutAt of [0, 1, 7, Math.floor(events.length / 3), Math.floor(events.length / 2), events.length - 2, events.length - 1]) {
      const first = fold(events.slice(0, cutAt + 1));
      const wire = BuildViewSnapshot.parse(JSON.parse(JSON.stringify(first.snapshot())));
      const resumed = BuildView.fromSnapshot(wire);
      expect(shown(resumed)).toEqual(shown(first));
      for (const e of events.slice(cutAt + 1)) resumed.apply(e);
      expect(shown(resumed)).toEqual(full);
    }
  });

  it("a crashed build's tree holds the phase it died in: rows of lastPhasePath it never received are added and marked, through a snapshot", () => {
    const w = new StreamWriter();
    w.started();
    const engine = w.start('Building engine', null, 6);
    const clone = w.start('Cloning network graph', engine, 1516);
    w.step(clone, 0);
    // The worker dies in a phase whose start never reached the view (lost with the worker).
    w.finished('crashed', { error: 'the build worker crashed', lastPhasePath: ['Building engine', 'Preparing graph for optimization', 'Fusing layers'] });
    const v = fold(w.events);
    const engineRow = v.rows.root.childByName.get('Building engine')!;
    expect(engineRow.children.map((c) => c.name)).toEqual(['Cloning network graph', 'Preparing graph for optimization']);
    const prep = engineRow.childByName.get('Preparing graph for optimization')!;
    const fusing = prep.childByName.get('Fusing layers')!;
    expect([engineRow.crashSite, prep.crashSite, fusing.crashSite]).toEqual(['path', 'path', 'last']);
    // Never received: no instance counted.
    expect([prep.count, fusing.count]).toEqual([0, 0]);
    expect(engineRow.count).toBe(1);
    expect(engineRow.childByName.get('Cloning network graph')!.crashSite).toBeUndefined();
    expect(v.rows.crashPath()).toEqual([engineRow.key, prep.key, fusing.key]);
    // Through JSON and the schema: the same rows, marked again, not added twice.
    const again = BuildView.fromSnapshot(BuildViewSnapshot.parse(JSON.parse(JSON.stringify(v.snapshot()))));
    expect(shown(again)).toEqual(shown(v));
    expect(again.rows.crashPath().length).toBe(3);
    expect(again.rows.root.childByName.get('Building engine')!.children.length).toBe(2);
    expect(again.rows.byKey.get(fusing.key)!.crashSite).toBe('last');
  });

  it('a crash inside a received phase marks it without adding rows; other endings mark nothing', () => {
    const w = new StreamWriter();
    w.started();
    const engine = w.start('Building engine', null, 6);
    w.start('Timing tactics', engine, 3);
    w.finished('crashed', { lastPhasePath: ['Building engine', 'Timing tactics'] });
    const v = fold(w.events);
    expect(v.rows.rowsCreated).toBe(2);
    expect(v.rows.byKey.get(v.rows.crashPath()[1])!.name).toBe('Timing tactics');
    expect(v.rows.byKey.get(v.rows.crashPath()[1])!.count).toBe(1);

    const f = new StreamWriter();
    f.started();
    f.start('Building engine', null, 6);
    f.finished('failed', { error: 'x', lastPhasePath: ['Building engine', 'Other'] });
    const fv = fold(f.events);
    expect(fv.rows.crashPath()).toEqual([]);
    expect(fv.rows.rowsCreated).toBe(1);
  });

  it('keeps its snapshot bounded by distinct paths, not by the number of phases', () => {
    // Each row keeps at most MAX_SPANS_PER_ROW time spans (merged beyond that), so once the
    // rows' span lists are full, 4x the phases cost the snapshot almost nothing.
    const big = JSON.stringify(fold(mnistLikeBuild(1000).events).snapshot()).length;
    const bigger = JSON.stringify(fold(mnistLikeBuild(4000).events).snapshot()).length;
    expect(bigger).toBeLessThan(big * 1.3);
  });
});
