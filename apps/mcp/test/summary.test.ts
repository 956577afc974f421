import { describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { formatPath } from '../../shared/view-format.js';
import { tensorrtLikeStream } from '../../../test/support/synthetic-build.js';
import { summarizePhases } from '../../surface/phase-summary.js';
import { buildResult, buildState } from '../../surface/build-result.js';
import { BuildResultOut, BuildStateOut, parseBuildOptions } from '../../surface/schemas.js';
import { UsageError } from '../../shared/usage-error.js';
import { parseMcpArgs } from '../server.js';

function viewOf(events: readonly BuildEvent[]): BuildView {
  const v = new BuildView('b-test');
  for (const ev of events) v.apply(ev, 0);
  return v;
}

describe('phase paths', () => {
  it('joins names from the root down, showing control characters instead of obeying them', () => {
    expect(formatPath(['Building engine', 'Computing profile costs', 'Timing graph nodes'])).toBe('Building engine › Computing profile costs › Timing graph nodes');
    expect(formatPath(['a\x1b[31m', 'b\u202ec'])).toBe('a\\x1b[31m › b\\u202ec');
  });
});

describe('summarizePhases over the build view', () => {
  const events = tensorrtLikeStream(5, 12);
  const end = events.at(-1)!.t;
  const starts = events.filter((e) => e.type === 'phase.start');
  /** Start and finish time of every instance of a name. */
  const spansOf = (name: string) => starts.filter((e) => e.name === name).map((e) => [e.t, events.find((f) => f.type === 'phase.finish' && f.id === (e as { id: number }).id)!.t]);

  it('groups repeated phases by path and ranks by wall time', () => {
    const s = summarizePhases(viewOf(events), end, 10);
    expect(s.phaseCount).toBe(starts.length);
    expect(s.maxDepth).toBe(7);
    expect(s.slowest.length).toBe(10);
    expect(s.slowest[0].path).toBe('Building engine');
    for (let i = 1; i < s.slowest.length; i++) expect(s.slowest[i].wallMs).toBeLessThanOrEqual(s.slowest[i - 1].wallMs);
    const measuring = s.slowest.find((p) => p.path.endsWith('Measuring tactic time'));
    const spans = spansOf('Measuring tactic time');
    expect(measuring?.instances).toBe(spans.length);
    expect(measuring?.steps).toBeUndefined();
    // The instances ran one after another here: their wall time is the sum of their durations.
    expect(measuring?.wallMs).toBe(spans.reduce((a, [s0, e0]) => a + (e0 - s0), 0));
  });

  it('gives step counts and the early flag for phases that ran once', () => {
    const s = summarizePhases(viewOf(events), end, 50);
    const opt = s.slowest.find((p) => p.path.endsWith('› Optimizing graph'));
    expect(opt).toMatchObject({ instances: 1, steps: '28/33', early: true, open: 0, earlyCount: 1 });
  });

  it('counts open phases up to now', () => {
    // Up to the root's last step: it is still open.
    const v = viewOf(events.slice(0, -2));
    const s = summarizePhases(v, 10_000, 1);
    const ms = 10_000 - starts[0].t;
    expect(s.slowest).toEqual([{ path: 'Building engine', depth: 1, instances: 1, wallMs: ms, open: 1, earlyCount: 0, steps: '4/6' }]);
  });

  it('does not let parallel instances outrank the phase that contains them', () => {
    let seq = 0;
    const ev = (t: number, body: Record<string, unknown>) => ({ v: 1, buildId: 'p', seq: seq++, t, ...body }) as BuildEvent;
    // Four builder threads time nodes at once: 4 × 90 ms summed, 90 ms of wall time.
    const stream = [
      ev(0, { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 1, instance: 0 }),
      ...[2, 3, 4, 5].map((id) => ev(5, { type: 'phase.start', id, parentId: 1, name: 'Evaluating tactic times', nbSteps: 1, instance: id - 2 })),
      ...[2, 3, 4, 5].map((id) => ev(95, { type: 'phase.finish', id, stepsDone: 1, early: false })),
      ev(100, { type: 'phase.finish', id: 1, stepsDone: 1, early: false }),
    ];
    const s = summarizePhases(viewOf(stream), 100);
    expect(s.slowest.map((g) => [g.path, g.wallMs, g.instances])).toEqual([
      ['Building engine', 100, 1],
      ['Building engine › Evaluating tactic times', 90, 4],
    ]);
  });

  it('handles an empty build', () => {
    expect(summarizePhases(new BuildView('x'), 0)).toEqual({ phaseCount: 0, maxDepth: 0, slowest: [] });
  });
});

describe('tool results', () => {
  const events = tensorrtLikeStream(9);
  const finished = events.at(-1)!;
  if (finished.type !== 'build.finished') throw new Error('stream must end with build.finished');
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
    expect(out.message).toMatch(
      /^Build b-test cancelled after 3\.0 s, [\d.]+ m?s of it in the builder \(time budget of 3s exhausted\), stopped 12 ms after the request; no engine was written$/,
    );
    const user = buildResult(started, { ...cancelled, cancelLatencyMs: 0.31 }, 'user');
    expect(user.message).toMatch(/^Build b-test cancelled after [\d.]+ m?s \(cancelled at the caller's request\), stopped 0\.31 ms after the request;/);
    expect(out.outputPath).toBeUndefined();
  });

  it('carries memory, and a memory stop or an OOM kill in the same words as every surface', () => {
    const GiB = 2 ** 30;
    const memory = { peakHostBytes: 21.5 * GiB, peakGpuBytes: null, byPhase: [{ path: ['Building engine'], peakHostBytes: 21.5 * GiB, peakGpuBytes: null }] };
    const memoryStop = { kind: 'host' as const, usedBytes: 21.5 * GiB, limitBytes: 20 * GiB, phasePath: ['Building engine', 'Timing tactics'] };
    const error = 'stopped: host memory 21.5 GiB passed the 20 GiB limit during Building engine › Timing tactics';
    const stopped = { ...finished, status: 'cancelled' as const, engineBytes: undefined, outputPath: undefined, memory, memoryStop, error };
    const out = buildResult({ ...record, state: 'cancelled' }, stopped, 'memory');
    expect(BuildResultOut.parse(out)).toEqual(out);
    expect(out).toMatchObject({ status: 'cancelled', cancelReason: 'memory', memory, memoryStop, error });
    expect(out.message).toContain(`(it passed its memory limit): ${error}`);
    const oom = {
      ...finished,
      status: 'crashed' as const,
      error: 'killed by the out-of-memory killer at Building engine, peak 3.9 GiB of 4 GiB',
      oomKill: { limitBytes: 4 * GiB },
      memory,
    };
    const state = buildState({ ...record, state: 'crashed', outcome: oom }, undefined, Date.now());
    expect(BuildStateOut.parse(state)).toEqual(state);
    expect(state.outcome).toMatchObject({ oomKill: { limitBytes: 4 * GiB }, memory });
    expect(state.message).toContain('killed by the out-of-memory killer at Building engine');
  });

  it('get_build of a running build names the current phase', () => {
    // The stream up to just before "Building engine from subgraph" ends: it and the root are open.
    const sub = events.find((e) => e.type === 'phase.start' && e.name === 'Building engine from subgraph')!;
    const cut = events.findIndex((e) => e.type === 'phase.finish' && sub.type === 'phase.start' && e.id === sub.id);
    const running: BuildRecord = { ...record, state: 'running', outcome: undefined, startedAt: new Date(1000).toISOString(), lastSeq: events[cut - 1].seq };
    const view = viewOf(events.slice(0, cut));
    const out = buildState(running, undefined, 6000, view);
    expect(BuildStateOut.parse(out)).toEqual(out);
    expect(out.currentPhase).toMatch(/^Building engine \d\/6 › Building engine from subgraph 1\/1$/);
    // Elapsed is the later of the build clock (the events' t) and the wall time since start.
    expect(out.message).toBe(`Build b-test is running (${(Math.max(view.elapsedMs(6000), 5000) / 1000).toFixed(1)} s so far, at ${out.currentPhase})`);
    expect(view.status).toBe('running');
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
        expect(e).toBeInstanceOf(UsageError);
        return (e as Error).message;
      }
      throw new Error('expected a UsageError');
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
