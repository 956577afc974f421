import { afterEach, describe, expect, it, vi } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { viewFromRecord } from '../../shared/view-format.js';
import { StreamWriter, tensorrtLikeStream } from '../../../test/support/synthetic-build.js';
import { progressMessage } from '../progress-message.js';
import { ProgressNotifier, type ProgressUpdate } from '../progress-notifier.js';
import { MonotonicProgress } from '../progress-value.js';

describe('MonotonicProgress', () => {
  it('rises strictly on every call, even when the work stands still', () => {
    const p = new MonotonicProgress();
    const values = [0, 5, 5, 5, 9, 9, 40].map((w) => p.next(w));
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1]);
    expect(values).toEqual([0, 5, 5.001, 5.002, 9, 9.001, 40]);
  });

  it('keeps rising over a day of heartbeats without drifting far', () => {
    const p = new MonotonicProgress();
    let prev = p.next(1000);
    for (let i = 0; i < 35_000; i++) {
      const v = p.next(1000);
      expect(v).toBeGreaterThan(prev);
      prev = v;
    }
    expect(prev).toBeCloseTo(1035, 6);
  });

  it('treats a NaN count as no new work instead of poisoning the value', () => {
    const p = new MonotonicProgress();
    const a = p.next(7);
    expect(p.next(Number.NaN)).toBe(a + 0.001);
  });
});

/** Phases started plus steps completed, counted straight from a stream. */
function workIn(events: BuildEvent[]): number {
  const steps = new Map<number, number>();
  let starts = 0;
  for (const ev of events) {
    if (ev.type === 'phase.start') starts += 1;
    if (ev.type === 'phase.step' || ev.type === 'phase.finish') steps.set(ev.id, Math.max(steps.get(ev.id) ?? 0, ev.stepsDone));
  }
  return starts + [...steps.values()].reduce((a, b) => a + b, 0);
}

describe('progress over the build view, on a TensorRT-like stream', () => {
  it('counts every start and step, also when steps were coalesced in transit', () => {
    for (const seed of [1, 2, 3, 42, 1234]) {
      const events = tensorrtLikeStream(seed);
      // Drop two of every three step events, as the pipeline's coalescing may.
      const coalesced = events.filter((e, i) => e.type !== 'phase.step' || i % 3 === 0);
      for (const stream of [events, coalesced]) {
        const view = new BuildView('b-test');
        const mono = new MonotonicProgress();
        const sent: number[] = [];
        for (const ev of stream) {
          view.apply(ev, 0);
          sent.push(mono.next(view.work));
        }
        for (let i = 1; i < sent.length; i++) expect(sent[i]).toBeGreaterThan(sent[i - 1]);
        expect(view.work).toBe(workIn(events));
        expect(view.work).toBeGreaterThan(100);
      }
    }
  });

  it('names the deepest active phase with its step count', () => {
    const events = tensorrtLikeStream(7);
    const view = new BuildView('b-test');
    const idx = events.findIndex((e) => e.type === 'phase.start' && e.name === 'Measuring tactic time');
    // The events arrive at wall time 1000; 400 ms later nothing new came.
    for (const ev of events.slice(0, idx + 3)) view.apply(ev, 1000);
    expect(view.currentPath().map((l) => l.name)).toEqual([
      'Building engine',
      'Building engine from subgraph',
      'Computing profile costs',
      'Timing tactics',
      'Timing graph nodes',
      'Evaluating tactic times',
      'Measuring tactic time',
    ]);
    const msg = progressMessage(view, 1400);
    // Counts on every level with more than one step; "subgraph" has one step and shows none.
    expect(msg).toMatch(
      /^Building engine 2\/6 › Building engine from subgraph › Computing profile costs 0\/10 › Timing tactics 0\/3 › Timing graph nodes 0\/12 › Evaluating tactic times( 0\/\d+)? › Measuring tactic time 2\/4 · last TensorRT callback 400 ms ago$/,
    );
  });

  it('returns to the parent when a child finishes', () => {
    const w = new StreamWriter();
    const root = w.start('Building engine', null, 3);
    const child = w.start('Cloning network graph', root, 2);
    w.step(child, 0);
    w.finish(child, 2, true);
    const view = new BuildView('b1');
    for (const ev of w.events) view.apply(ev, 0);
    expect(view.currentPath()).toEqual([{ name: 'Building engine', stepsDone: 0, nbSteps: 3 }]);
    expect(progressMessage(view, 0)).toBe('Building engine 0/3 · last TensorRT callback 0 ms ago');
  });

  it("calls out silence on the build clock, with the native heartbeat's last callback and the worker's CPU", () => {
    const w = new StreamWriter();
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true }, 0);
    w.start('Building engine', null, 6);
    // Both events arrive at wall time 10 s (build time 2 ms).
    const view = new BuildView('b1');
    for (const ev of w.events) view.apply(ev, 10_000);
    expect(progressMessage(view, 10_500)).toBe('Building engine 0/6 · last TensorRT callback 500 ms ago');
    expect(progressMessage(view, 22_000)).toBe('still building: Building engine 0/6 · last TensorRT callback 12.0 s ago');
    // Heartbeats at build time 20 s and 21 s: a callback the stream coalesced away 1 s before the
    // second, and the worker burning 1.5 cores in between.
    view.apply(w.emit({ type: 'heartbeat', sinceLastCallbackMs: 15_000, cancelRequested: false, workerCpuMs: 10_000 }, 20_000 - w.t), 30_000);
    view.apply(w.emit({ type: 'heartbeat', sinceLastCallbackMs: 1000, cancelRequested: false, workerCpuMs: 11_500 }, 1000), 31_000);
    expect(progressMessage(view, 31_000)).toBe('Building engine 0/6 · last TensorRT callback 1.0 s ago');
    expect(progressMessage(view, 35_000)).toBe('still building: Building engine 0/6 · last TensorRT callback 5.0 s ago (builder busy, 1.5 cores)');
    view.apply(w.emit({ type: 'build.cancelling', requestedAt: w.t, reason: 'timeout' }, 0), 35_000);
    expect(progressMessage(view, 35_000)).toMatch(/^stopping \(time budget exhausted\).*Building engine 0\/6/);
  });

  it('mentions the predicted end when earlier builds give one', () => {
    const w = new StreamWriter();
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true }, 0);
    w.start('Building engine', null, 6);
    const view = new BuildView('b1');
    for (const ev of w.events) view.apply(ev, 0);
    view.apply(w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false, estimate: { remainingMs: 12_000, lowMs: 9000, highMs: 15_000, basis: 2 } }, 0), 0);
    // 2 s later the prediction has run down by 2 s.
    expect(progressMessage(view, 2000, { silentAfterMs: 10_000 })).toBe('Building engine 0/6 · last TensorRT callback 2.0 s ago · about 10.0 s left (7.0 s–13.0 s)');
  });

  it("says a first build's percentage rests on typical phase weights, and not once history gives shares", () => {
    const message = (phaseSharesSource: 'prior' | 'history') => {
      const w = new StreamWriter();
      w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, phaseShares: { 'Building engine@0/6': 0.5 }, phaseSharesSource }, 0);
      w.start('Building engine', null, 6);
      const view = new BuildView('b1');
      for (const ev of w.events) view.apply(ev, 0);
      const estimate = { remainingMs: 12_000, lowMs: 9000, highMs: 15_000, basis: 0, source: 'progress' as const };
      view.apply(w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false, estimate }, 0), 0);
      return progressMessage(view, 0, { silentAfterMs: 10_000 });
    };
    expect(message('prior')).toMatch(/\(estimate from progress so far, typical phase weights\)$/);
    expect(message('history')).toMatch(/\(estimate from progress so far\)$/);
  });

  it('says where a crashed build died', () => {
    const events = tensorrtLikeStream(3, { end: 'crashed' });
    const view = new BuildView('b-test');
    for (const ev of events) view.apply(ev, 0);
    expect(progressMessage(view, 0)).toBe(
      'build crashed, crashed in Building engine › Building engine from subgraph › Computing profile costs › Timing tactics › Timing graph nodes',
    );
  });

  it('says how long a build has waited in the queue', () => {
    const view = viewFromRecord({
      id: 'b2',
      state: 'queued',
      modelPath: '/m.onnx',
      options: { backend: 'auto' },
      queuedAt: new Date(5000).toISOString(),
      lastSeq: -1,
      engineAvailable: false,
    });
    expect(progressMessage(view, 17_500, { queuedAtWall: 5000, waitingBehind: true })).toBe('queued for 12.5 s: waiting for an earlier build to finish');
    // No build ahead (nor any GPU claim): a queued build is one whose worker is starting.
    expect(progressMessage(view, 5_020, { queuedAtWall: 5000 })).toBe('starting the build worker');
  });

  it('ignores replayed events and starts from a snapshot', () => {
    // The service's view after seq 5: a root at step 2, a finished child, an open one at step 5.
    const first = new BuildView('b1');
    const ev = (seq: number, t: number, body: Record<string, unknown>) => ({ v: 1, buildId: 'b1', seq, t, ...body }) as BuildEvent;
    for (const e of [
      ev(0, 0, { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 6, instance: 0 }),
      ev(1, 1, { type: 'phase.start', id: 2, parentId: 1, name: 'Cloning network graph', nbSteps: 30, instance: 0 }),
      ev(2, 5, { type: 'phase.finish', id: 2, stepsDone: 30, early: false }),
      ev(3, 5, { type: 'phase.step', id: 1, step: 1, stepsDone: 2 }),
      ev(4, 6, { type: 'phase.start', id: 3, parentId: 1, name: 'Optimizing graph', nbSteps: 10, instance: 0 }),
      ev(5, 6, { type: 'phase.step', id: 3, step: 4, stepsDone: 5 }),
    ])
      first.apply(e);
    const view = BuildView.fromSnapshot(first.snapshot());
    expect(view.currentPath().map((l) => l.name)).toEqual(['Building engine', 'Optimizing graph']);
    expect(view.work).toBe(3 + 2 + 30 + 5);
    expect(view.apply({ v: 1, buildId: 'b1', seq: 5, t: 7, type: 'phase.step', id: 3, step: 8, stepsDone: 9 }, 1000)).toBe(false);
    expect(view.currentPath().at(-1)?.stepsDone).toBe(5);
    expect(view.work).toBe(40);
    view.apply({ v: 1, buildId: 'b1', seq: 6, t: 7, type: 'phase.step', id: 3, step: 8, stepsDone: 9 }, 1000);
    expect(view.currentPath().at(-1)?.stepsDone).toBe(9);
    expect(view.work).toBe(44);
  });
});

describe('ProgressNotifier', () => {
  afterEach(() => vi.useRealTimers());

  function setup(heartbeatMs = 2500) {
    vi.useFakeTimers({ now: 0 });
    const sent: Array<ProgressUpdate & { at: number }> = [];
    const n = new ProgressNotifier({ send: (u) => sent.push({ ...u, at: Date.now() }), heartbeatMs, minIntervalMs: 250 });
    return { n, sent };
  }

  it('sends at most one notification per 250 ms, with the latest state', () => {
    const { n, sent } = setup();
    n.start();
    const events = tensorrtLikeStream(3, 40);
    // 2,000 events delivered one per ms: the notifier must coalesce them.
    for (const ev of events.slice(0, -1)) {
      n.onEvents([ev]);
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(300);
    for (let i = 1; i < sent.length; i++) {
      expect(sent[i].at - sent[i - 1].at).toBeGreaterThanOrEqual(250);
      expect(sent[i].progress).toBeGreaterThan(sent[i - 1].progress);
    }
    expect(sent.length).toBeLessThanOrEqual(Math.ceil((events.length + 300) / 250) + 1);
    // The final flush reflects the last event applied (root finished early, 4/6: nothing open).
    expect(sent.at(-1)!.message).not.toMatch(/Measuring tactic time/);
    expect(sent.every((u) => u.total === undefined)).toBe(true);
    void n.finish('done', true);
    const last = sent.at(-1)!;
    expect(last).toMatchObject({ message: 'done', total: last.progress });
    // Nothing new since the last flush, so the final value is that work plus one nudge.
    expect(last.progress).toBeGreaterThan(workIn(events));
    expect(last.progress).toBeLessThan(workIn(events) + 0.01);
  });

  it('sends heartbeats during silence, each one higher, and stops after finish', () => {
    const { n, sent } = setup(2000);
    const w = new StreamWriter();
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true });
    const root = w.start('Building engine', null, 6);
    w.start('Timing graph nodes', root, 12);
    n.start();
    n.onEvents(w.events);
    vi.advanceTimersByTime(300);
    const before = sent.length;
    vi.advanceTimersByTime(10_000);
    const beats = sent.slice(before);
    expect(beats.length).toBe(5);
    expect(beats.at(-1)!.message).toBe('still building: Building engine 0/6 › Timing graph nodes 0/12 · last TensorRT callback 10.3 s ago');
    for (let i = 1; i < sent.length; i++) expect(sent[i].progress).toBeGreaterThan(sent[i - 1].progress);
    void n.finish('cancelled', false);
    const count = sent.length;
    vi.advanceTimersByTime(10_000);
    expect(sent.length).toBe(count);
    expect(sent.at(-1)!.message).toBe('cancelled');
    expect(sent.at(-1)!.total).toBeUndefined();
  });

  it('says "stopping" even when the cancel and the unwinding arrive in one batch', () => {
    const { n, sent } = setup();
    const w = new StreamWriter();
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true });
    const root = w.start('Building engine', null, 6);
    const child = w.start('Timing graph nodes', root, 12);
    n.start();
    n.onEvents(w.events.splice(0));
    vi.advanceTimersByTime(100); // inside the throttle window of the first notification
    w.emit({ type: 'build.cancelling', requestedAt: w.t, reason: 'timeout' });
    w.finish(child, 0, true);
    w.finish(root, 0, true);
    n.onEvents(w.events.splice(0));
    expect(sent.at(-1)!.message).toMatch(/^stopping \(time budget exhausted\), waiting for the next step boundary: Building engine 0\/6 › Timing graph nodes 0\/12/);
  });

  it('sends nothing after stop()', () => {
    const { n, sent } = setup();
    n.start();
    n.stop();
    n.onEvents(tensorrtLikeStream(1));
    vi.advanceTimersByTime(10_000);
    expect(sent.length).toBe(1);
  });

  it('does not treat native heartbeats and logs as progress', () => {
    const { n, sent } = setup(60_000);
    n.start();
    vi.advanceTimersByTime(1000);
    const w = new StreamWriter();
    n.onEvents([w.emit({ type: 'heartbeat', sinceLastCallbackMs: 900, cancelRequested: false }), w.emit({ type: 'log', severity: 'info', message: 'hello' })]);
    vi.advanceTimersByTime(1000);
    expect(sent.length).toBe(1);
  });
});
