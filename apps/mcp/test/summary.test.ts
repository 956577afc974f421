import { describe, expect, it } from 'vitest';
import type { BuildRecord, PhaseNode } from '../../shared/protocol.js';
import { formatPhasePath, phaseNames, summarizePhases, unionLength } from '../phase-summary.js';
import { BuildProgressModel } from '../progress-model.js';
import { buildResult, buildState } from '../results.js';
import { BuildResultOut, BuildStateOut, parseBuildOptions, ToolInputError } from '../schemas.js';
import { parseMcpArgs } from '../server.js';
import { tensorrtLikeStream } from './synthetic-stream.js';

/** Folds a stream into PhaseNodes the way the service's snapshot does (start/steps/finish times). */
function treeOf(events: ReturnType<typeof tensorrtLikeStream>): PhaseNode[] {
  const nodes = new Map<number, PhaseNode>();
  for (const ev of events) {
    if (ev.type === 'phase.start') {
      nodes.set(ev.id, { id: ev.id, parentId: ev.parentId, name: ev.name, nbSteps: ev.nbSteps, instance: ev.instance, stepsDone: 0, startT: ev.t });
    } else if (ev.type === 'phase.step') nodes.get(ev.id)!.stepsDone = ev.stepsDone;
    else if (ev.type === 'phase.finish') Object.assign(nodes.get(ev.id)!, { endT: ev.t, stepsDone: ev.stepsDone, early: ev.early || undefined });
  }
  return [...nodes.values()];
}

describe('phase paths', () => {
  it('joins names from the root down', () => {
    const byId = new Map([
      [1, { name: 'Building engine', parentId: null }],
      [2, { name: 'Computing profile costs', parentId: 1 }],
      [3, { name: 'Timing graph nodes', parentId: 2 }],
    ]);
    expect(formatPhasePath(phaseNames(byId, 3))).toBe('Building engine › Computing profile costs › Timing graph nodes');
  });

  it('survives a missing parent and a cycle', () => {
    expect(phaseNames(new Map([[5, { name: 'Orphan', parentId: 99 }]]), 5)).toEqual(['Orphan']);
    const cyclic = new Map([
      [1, { name: 'A', parentId: 2 }],
      [2, { name: 'B', parentId: 1 }],
    ]);
    expect(phaseNames(cyclic, 1).length).toBeLessThanOrEqual(3);
  });
});

describe('summarizePhases', () => {
  const events = tensorrtLikeStream(5, 12);
  const nodes = treeOf(events);
  const end = events.at(-1)!.t;

  it('groups repeated phases by path and ranks by wall time', () => {
    const s = summarizePhases(nodes, end, 10);
    expect(s.phaseCount).toBe(nodes.length);
    expect(s.maxDepth).toBe(7);
    expect(s.slowest.length).toBe(10);
    expect(s.slowest[0].path).toBe('Building engine');
    for (let i = 1; i < s.slowest.length; i++) expect(s.slowest[i].wallMs).toBeLessThanOrEqual(s.slowest[i - 1].wallMs);
    const measuring = s.slowest.find((p) => p.path.endsWith('Measuring tactic time'));
    const expectedCount = nodes.filter((n) => n.name === 'Measuring tactic time').length;
    expect(measuring?.instances).toBe(expectedCount);
    expect(measuring?.steps).toBeUndefined();
    const expectedTotal = nodes.filter((n) => n.name === 'Measuring tactic time').reduce((a, n) => a + (n.endT! - n.startT), 0);
    expect(measuring?.totalMs).toBe(expectedTotal);
  });

  it('gives step counts and the early flag for phases that ran once', () => {
    const s = summarizePhases(nodes, end, 50);
    const opt = s.slowest.find((p) => p.path.endsWith('› Optimizing graph'));
    expect(opt).toMatchObject({ instances: 1, steps: '28/33', early: true, open: 0 });
  });

  it('counts open phases up to now', () => {
    const open = nodes.map((n) => (n.name === 'Building engine' ? { ...n, endT: undefined, early: undefined } : n));
    const s = summarizePhases(open, 10_000, 1);
    const ms = 10_000 - open[0].startT;
    expect(s.slowest).toEqual([{ path: 'Building engine', depth: 1, instances: 1, wallMs: ms, totalMs: ms, maxMs: ms, open: 1, steps: '4/6' }]);
  });

  it('does not let parallel instances outrank the phase that contains them', () => {
    const p = (id: number, parentId: number | null, name: string, startT: number, endT: number): PhaseNode => ({ id, parentId, name, nbSteps: 1, instance: 0, stepsDone: 1, startT, endT });
    // Four builder threads time nodes at once: 4 × 90 ms summed, 100 ms of wall time.
    const tree = [p(1, null, 'Building engine', 0, 100), ...[2, 3, 4, 5].map((id) => p(id, 1, 'Evaluating tactic times', 5, 95))];
    const s = summarizePhases(tree, 100);
    expect(s.slowest.map((g) => [g.path, g.wallMs, g.totalMs])).toEqual([
      ['Building engine', 100, 100],
      ['Building engine › Evaluating tactic times', 90, 360],
    ]);
    expect(unionLength([[0, 10], [20, 30], [5, 12], [30, 31]])).toBe(23);
  });

  it('handles an empty tree', () => {
    expect(summarizePhases([], 0)).toEqual({ phaseCount: 0, maxDepth: 0, slowest: [] });
  });
});

describe('tool results', () => {
  const events = tensorrtLikeStream(9);
  const finished = events.at(-1)!;
  if (finished.type !== 'build.finished') throw new Error('stream must end with build.finished');
  const phases = treeOf(events);
  const record: BuildRecord = {
    id: 'b-test',
    state: 'succeeded',
    modelPath: '/m.onnx',
    outputPath: '/tmp/x.engine',
    options: { backend: 'simulated' },
    queuedAt: new Date(0).toISOString(),
    backend: 'simulated',
    simulated: true,
    lastSeq: finished.seq,
    outcome: finished,
    engineAvailable: true,
  };

  it('build_engine result fits its output schema', () => {
    const out = buildResult(record, finished, undefined);
    expect(BuildResultOut.parse(out)).toEqual(out);
    expect(out).toMatchObject({ status: 'succeeded', engineBytes: 1234, outputPath: '/tmp/x.engine', simulated: true });
    expect(out.message).toMatch(/^Build b-test succeeded in .*: 1234 bytes written to \/tmp\/x\.engine$/);
  });

  it('says why a build was cancelled, naming the budget', () => {
    const cancelled = { ...finished, status: 'cancelled' as const, engineBytes: undefined, outputPath: undefined, cancelLatencyMs: 12.4 };
    const started = { ...record, state: 'cancelled' as const, startedAt: new Date(1000).toISOString(), finishedAt: new Date(4020).toISOString() };
    const out = buildResult(started, cancelled, 'timeout', 3);
    expect(out.cancelReason).toBe('timeout');
    expect(out.message).toMatch(/^Build b-test cancelled after 3\.0 s, [\d.]+ s of it in the builder \(time budget of 3s exhausted\), stopped 12 ms after the request; no engine was written$/);
    const user = buildResult(started, { ...cancelled, cancelLatencyMs: 0.31 }, 'user');
    expect(user.message).toMatch(/^Build b-test cancelled after [\d.]+ s \(cancelled at the caller's request\), stopped 0\.31 ms after the request;/);
    expect(out.outputPath).toBeUndefined();
  });

  it('get_build of a running build names the current phase', () => {
    const running: BuildRecord = { ...record, state: 'running', outcome: undefined, startedAt: new Date(1000).toISOString() };
    const runningPhases = phases.map((p) => (p.name === 'Building engine' || p.name === 'Building engine from subgraph' ? { ...p, endT: undefined } : p));
    const out = buildState(running, undefined, 6000, runningPhases);
    expect(BuildStateOut.parse(out)).toEqual(out);
    expect(out.currentPhase).toBe('Building engine 4/6 › Building engine from subgraph 1/1');
    expect(out.message).toBe('Build b-test is running (5.0 s so far, at Building engine 4/6 › Building engine from subgraph 1/1)');
    const model = new BuildProgressModel();
    model.applySnapshot(running, 6000, runningPhases);
    expect(model.state).toBe('running');
  });
});

describe('parseBuildOptions', () => {
  it('accepts trtexec shape strings and fills defaults', () => {
    const o = parseBuildOptions({ shapes: ['input:1x3x8x8/2x3x8x8/4x3x8x8'], simDuration: 0.5 });
    expect(o.backend).toBe('auto');
    expect(o.shapes).toEqual({ input: { min: [1, 3, 8, 8], opt: [2, 3, 8, 8], max: [4, 3, 8, 8] } });
  });

  it('names each bad field', () => {
    const msg = (raw: unknown) => {
      try {
        parseBuildOptions(raw);
      } catch (e) {
        expect(e).toBeInstanceOf(ToolInputError);
        return (e as Error).message;
      }
      throw new Error('expected a ToolInputError');
    };
    expect(msg({ optLevel: 9 })).toMatch(/^Invalid build options: options\.optLevel: .*<=5/);
    expect(msg({ optlevel: 3 })).toMatch(/options: Unrecognized key: "optlevel"/);
    expect(msg({ shapes: ['input:1x3/abc'] })).toMatch(/options\.shapes: invalid shape "input:1x3\/abc"/);
    expect(msg({ simFault: 'explode' })).toMatch(/options\.simFault: expected fail\|crash\|hang/);
    expect(msg('fast')).toMatch(/options: .*expected object/);
  });
});

describe('parseMcpArgs', () => {
  it('parses flags and rejects unknown ones', () => {
    expect(parseMcpArgs([])).toEqual({});
    expect(parseMcpArgs(['--heartbeat', '1'])).toEqual({ heartbeatMs: 1000 });
    expect(parseMcpArgs(['--heartbeat=0.5'])).toEqual({ heartbeatMs: 500 });
    expect(parseMcpArgs(['--help'])).toBe('help');
    expect(() => parseMcpArgs(['--heartbeat', '0'])).toThrow(/between 0.5 and 60/);
    expect(() => parseMcpArgs(['--port', '1'])).toThrow(/unknown argument "--port"/);
    expect(() => parseMcpArgs(['--output-dir'])).toThrow(/--output-dir needs a value/);
  });
});
