// The pure parts of the language server's progress: the rising percentage, the work-done pacing,
// the buildView rows and the diagnostics made from parser errors.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { StreamWriter, tensorrtLikeStream } from '../../../test/support/synthetic-build.js';
import { phaseRows } from '../build-view-notification.js';
import { parserDiagnostics, problemDiagnostics } from '../diagnostics.js';
import { RisingPercentage, RUNNING_CAP } from '../percentage.js';
import { WorkDoneBuildProgress, type WorkDoneValue } from '../work-done.js';

describe('RisingPercentage', () => {
  it("is the build view's fraction in whole percent, never falling, below 100 until the engine is written", () => {
    const view = new BuildView('b-test');
    const pct = new RisingPercentage();
    const shown: number[] = [];
    for (const ev of tensorrtLikeStream(7, 16).slice(0, -1)) {
      view.apply(ev, ev.t);
      shown.push(pct.next(view));
      expect(shown.at(-1)).toBe(Math.min(RUNNING_CAP, Math.floor(view.fraction() * 100)));
    }
    for (let i = 1; i < shown.length; i++) expect(shown[i]).toBeGreaterThanOrEqual(shown[i - 1]);
    expect(Math.max(...shown)).toBeGreaterThan(0);
    expect(Math.max(...shown)).toBeLessThanOrEqual(RUNNING_CAP);
    expect(shown.every(Number.isInteger)).toBe(true);
    expect(pct.final(false)).toBe(shown.at(-1));
    expect(pct.final(true)).toBe(100);
  });

  it('does not fall when the view is rebuilt from a snapshot that holds less', () => {
    const full = new BuildView('b');
    const events = tensorrtLikeStream(2, 8);
    for (const ev of events.slice(0, events.length / 2)) full.apply(ev);
    const pct = new RisingPercentage();
    const before = pct.next(full);
    expect(before).toBeGreaterThan(0);
    expect(pct.next(new BuildView('b'))).toBe(before);
  });
});

describe('WorkDoneBuildProgress', () => {
  afterEach(() => vi.useRealTimers());

  it('throttles reports, sends heartbeats in silence, and ends with the message', () => {
    vi.useFakeTimers();
    const sent: WorkDoneValue[] = [];
    const p = new WorkDoneBuildProgress({ token: 't', send: (_t, v) => sent.push(v), pacing: { minIntervalMs: 250, heartbeatMs: 1000, silentAfterMs: 800 } });
    p.begin('TensorRT build: m.onnx', true);
    expect(sent[0]).toMatchObject({ kind: 'begin', title: 'TensorRT build: m.onnx', cancellable: true, message: 'queued behind an earlier build' });
    expect(sent[1]).toMatchObject({ kind: 'report', message: expect.stringMatching(/^queued/) });
    const w = new StreamWriter('b1');
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'x', simulated: true });
    const root = w.start('Building engine', null, 6);
    p.onEvents(w.events.splice(0));
    // A storm of callbacks within one throttle window: one report, not hundreds.
    for (let i = 0; i < 300; i++) {
      w.step(root, 0);
      p.onEvents(w.events.splice(0));
    }
    const beforeWindow = sent.length;
    vi.advanceTimersByTime(250);
    expect(sent.length - beforeWindow).toBeLessThanOrEqual(1);
    const afterBurst = sent.length;
    // Silence: heartbeats keep coming, and say so.
    vi.advanceTimersByTime(3100);
    const beats = sent.slice(afterBurst);
    expect(beats.length).toBe(3);
    expect(beats.every((b) => b.kind === 'report' && /still building/.test(b.message ?? ''))).toBe(true);
    p.end('Build b1 succeeded', true);
    expect(sent.at(-2)).toMatchObject({ kind: 'report', percentage: 100 });
    expect(sent.at(-1)).toEqual({ kind: 'end', message: 'Build b1 succeeded' });
    vi.advanceTimersByTime(10_000);
    expect(sent.at(-1)!.kind).toBe('end');
  });
});

describe('phaseRows', () => {
  let seq = 0;
  const ev = (t: number, body: Record<string, unknown>) => ({ v: 1, buildId: 'b', seq: seq++, t, ...body }) as BuildEvent;
  const start = (t: number, id: number, parentId: number | null, name: string, nbSteps = 1) => ev(t, { type: 'phase.start', id, parentId, name, nbSteps, instance: 0 });
  const finish = (t: number, id: number, stepsDone = 1) => ev(t, { type: 'phase.finish', id, stepsDone, early: false });
  const step = (t: number, id: number, stepsDone: number) => ev(t, { type: 'phase.step', id, step: stepsDone - 1, stepsDone });

  it("are the build view's rows: by name path, depth first, siblings in start order, with counts", () => {
    const view = new BuildView('b');
    for (const e of [
      start(0, 1, null, 'Building engine', 6),
      step(0.2, 1, 2),
      start(0.5, 5, 1, 'Fusing'),
      finish(0.8, 5),
      start(1, 2, 1, 'Timing'),
      start(2, 3, 2, 'Measure', 4),
      finish(3, 3, 4),
      start(3, 4, 2, 'Measure', 4),
      step(3.5, 4, 1),
      finish(5, 2),
    ])
      view.apply(e);
    const rows = phaseRows(view, 10);
    expect(rows.map((r) => r.path.join('/'))).toEqual(['Building engine', 'Building engine/Fusing', 'Building engine/Timing', 'Building engine/Timing/Measure']);
    // "Timing" finished at 5 while its child was still open (TensorRT does that): the child stays open.
    expect(rows[3]).toMatchObject({ instances: 2, open: 1, stepsDone: 1, nbSteps: 4, spanMs: 8 });
    expect(rows[0]).toMatchObject({ instances: 1, open: 1, stepsDone: 2, nbSteps: 6, spanMs: 10 });
    expect(rows[2]).toMatchObject({ instances: 1, open: 0, spanMs: 4 });
  });
});

describe('diagnostics', () => {
  it('one per parser error, each naming its node', () => {
    // The exact layout the TensorRT backend writes (see its formatParserError).
    const error = [
      'cannot parse /m/model.onnx',
      'ONNX parse error at node 3 "conv_3" (Conv): UNSUPPORTED_NODE (8): no importer for this op',
      'ONNX parse error at node 7 "gather_7" (Gather): INVALID_NODE (4): indices out of range',
      '(2 more parser errors not shown)',
    ].join('\n');
    const d = parserDiagnostics(error)!;
    expect(d.map((x) => x.message)).toEqual([
      'ONNX parse error at node 3 "conv_3" (Conv): UNSUPPORTED_NODE (8): no importer for this op',
      'ONNX parse error at node 7 "gather_7" (Gather): INVALID_NODE (4): indices out of range',
      '(2 more parser errors not shown)',
    ]);
    expect(d.every((x) => x.code === 'parse-error' && x.source === 'trt-build-studio')).toBe(true);
  });

  it('leaves failures that are not about the model alone', () => {
    expect(parserDiagnostics('out of GPU memory while timing tactics')).toBeUndefined();
    expect(parserDiagnostics(undefined)).toBeUndefined();
  });

  it('splits a multi-problem message into one diagnostic per line', () => {
    const d = problemDiagnostics('shapes', 'problem one\n\n  problem two  ');
    expect(d.map((x) => x.message)).toEqual(['problem one', 'problem two']);
  });
});
