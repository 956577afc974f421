// The pure parts of the language server's progress: the rising percentage, the work-done pacing,
// the buildView rows and the diagnostics made from parser errors.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BuildProgressModel } from '../../mcp/progress-model.js';
import type { PhaseNode } from '../../shared/protocol.js';
import { StreamWriter, tensorrtLikeStream } from '../../mcp/test/synthetic-stream.js';
import { phaseRows } from '../build-view.js';
import { parserDiagnostics, problemDiagnostics } from '../diagnostics.js';
import { pathFraction, RisingPercentage, RUNNING_CAP } from '../percentage.js';
import { WorkDoneBuildProgress, type WorkDoneValue } from '../work-done.js';

describe('RisingPercentage', () => {
  it('never falls over a TensorRT-like stream, although the raw estimate does', () => {
    const model = new BuildProgressModel();
    const pct = new RisingPercentage();
    const raw: number[] = [];
    const shown: number[] = [];
    for (const ev of tensorrtLikeStream(7, 16)) {
      model.apply(ev, ev.t);
      const cur = model.current();
      raw.push(cur ? pathFraction(cur.levels) : 0);
      shown.push(pct.next(model));
    }
    // The reason for the ratchet: nested phases restart and the path estimate jumps back.
    expect(raw.some((v, i) => i > 0 && v < raw[i - 1])).toBe(true);
    for (let i = 1; i < shown.length; i++) expect(shown[i]).toBeGreaterThanOrEqual(shown[i - 1]);
    expect(Math.max(...shown)).toBeGreaterThan(0);
    expect(Math.max(...shown)).toBeLessThanOrEqual(RUNNING_CAP);
    expect(shown.every(Number.isInteger)).toBe(true);
    expect(pct.final(false)).toBe(shown.at(-1));
    expect(pct.final(true)).toBe(100);
  });

  it('refines the outer step count by the open child, recursively', () => {
    // 2 of 4 outer steps done, the open child half way: (2 + 0.5) / 4.
    expect(pathFraction([{ name: 'a', stepsDone: 2, nbSteps: 4 }, { name: 'b', stepsDone: 1, nbSteps: 2 }])).toBeCloseTo(0.625);
    // Bad counts from a backend do not push it outside 0..1.
    expect(pathFraction([{ name: 'a', stepsDone: 9, nbSteps: 4 }])).toBe(1);
    expect(pathFraction([{ name: 'a', stepsDone: -3, nbSteps: 0 }])).toBe(0);
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
    w.push({ type: 'build.started', backend: 'simulated', backendVersion: 'x', simulated: true });
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
  const node = (id: number, parentId: number | null, name: string, startT: number, endT?: number, stepsDone = 0, nbSteps = 1): PhaseNode => ({
    id,
    parentId,
    name,
    nbSteps,
    instance: 0,
    stepsDone,
    startT,
    ...(endT === undefined ? {} : { endT }),
  });

  it('groups by name path, depth first, siblings in start order, with counts', () => {
    const rows = phaseRows(
      [
        node(1, null, 'Building engine', 0, undefined, 2, 6),
        node(2, 1, 'Timing', 1, 5),
        node(3, 2, 'Measure', 2, 3),
        node(4, 2, 'Measure', 3, undefined, 1, 4),
        node(5, 1, 'Fusing', 0.5, 0.8),
        node(7, 99, 'Orphan', 4), // its parent is no longer kept
      ],
      10,
    );
    expect(rows.map((r) => r.path.join('/'))).toEqual(['Building engine', 'Building engine/Fusing', 'Building engine/Timing', 'Building engine/Timing/Measure', 'Orphan']);
    const measure = rows[3];
    expect(measure).toMatchObject({ instances: 2, open: 1, stepsDone: 1, nbSteps: 4, spanMs: 8 });
    expect(rows[0]).toMatchObject({ instances: 1, open: 1, stepsDone: 2, nbSteps: 6, spanMs: 10 });
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
