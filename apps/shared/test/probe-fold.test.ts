import { describe, expect, it } from 'vitest';
import { BuildView } from '../build-view.js';
import { parseProbeLine, ProbeBuildFold, probeSeverity, type ProbeLine } from '../probe-fold.js';
import { BuildEvent } from '../protocol.js';

const hello = { type: 'hello', v: 1, probe: 'python-hook', pid: 4242, ppid: 1, argv: ['python3', 'build.py', '--fp16'], trtVersion: '10.16.1' } as const;
const begin = { type: 'build.begin', build: 1, api: 'Builder.build_serialized_network', network: { name: 'resnet', layers: 120 }, chained: false } as const;

function line(o: object): ProbeLine {
  const p = parseProbeLine(JSON.stringify(o));
  if ('error' in p) throw new Error(p.error);
  return p.line;
}

function fold(): { f: ProbeBuildFold; events: BuildEvent[]; feed: (o: object) => BuildEvent[] } {
  const f = new ProbeBuildFold('w1', line(hello) as never, line(begin) as never);
  const events: BuildEvent[] = [f.started()];
  return {
    f,
    events,
    feed: (o) => {
      const out = f.apply(line(o));
      events.push(...out);
      return out;
    },
  };
}

describe('probe lines → build events', () => {
  it('build.started is a TensorRT build of the probe version, labelled watched, with nothing invented', () => {
    const { events } = fold();
    const s = BuildEvent.parse(events[0]);
    expect(s).toMatchObject({ type: 'build.started', seq: 0, t: 0, backend: 'tensorrt', backendVersion: '10.16.1', simulated: false });
    if (s.type !== 'build.started') throw new Error('type');
    expect(s.model).toBeUndefined();
    expect(s.options).toBeUndefined();
    expect(s.watched).toEqual({
      program: 'python3',
      pid: 4242,
      argv: ['python3', 'build.py', '--fp16'],
      probe: 'python-hook',
      api: 'Builder.build_serialized_network',
      network: { name: 'resnet', layers: 120 },
      chained: false,
    });
  });

  it('gives ids, parents and instances as the native recorder does; steps rise; early finish; every event valid', () => {
    const { events, feed } = fold();
    feed({ type: 'phase.start', build: 1, t: 1, name: 'Building engine', parent: null, steps: 3 });
    feed({ type: 'phase.start', build: 1, t: 2, name: 'Tactics', parent: 'Building engine', steps: 2 });
    // A parent stepping while its child is open (another builder thread).
    feed({ type: 'phase.step', build: 1, t: 3, name: 'Building engine', step: 0 });
    feed({ type: 'phase.step', build: 1, t: 4, name: 'Tactics', step: 0 });
    expect(feed({ type: 'phase.step', build: 1, t: 4.5, name: 'Tactics', step: 0 })).toEqual([]); // not rising
    expect(feed({ type: 'phase.step', build: 1, t: 4.6, name: 'Tactics', step: 7 })).toEqual([]); // out of range
    expect(feed({ type: 'phase.step', build: 1, t: 4.7, name: 'Nowhere', step: 0 })).toEqual([]); // not open
    feed({ type: 'phase.finish', build: 1, t: 5, name: 'Tactics' }); // before its last step: early
    feed({ type: 'phase.start', build: 1, t: 6, name: 'Tactics', parent: 'Building engine', steps: 1 });
    feed({ type: 'phase.start', build: 1, t: 6.5, name: 'Orphan', parent: 'not open', steps: 0 });
    feed({ type: 'phase.finish', build: 1, t: 7, name: 'Orphan' });
    feed({ type: 'phase.step', build: 1, t: 7, name: 'Tactics', step: 0 });
    feed({ type: 'phase.finish', build: 1, t: 8, name: 'Tactics' });
    feed({ type: 'log', build: 1, t: 8, severity: 'kWARNING', message: 'careful' });
    feed({ type: 'build.end', build: 1, t: 9, result: 'engine', bytes: 1234, cancelled: false });
    for (const e of events) BuildEvent.parse(e);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    const starts = events.filter((e) => e.type === 'phase.start');
    expect(starts.map((e) => [e.id, e.parentId, e.name, e.instance])).toEqual([
      [0, null, 'Building engine', 0],
      [1, 0, 'Tactics', 0],
      [2, 0, 'Tactics', 1],
      [3, null, 'Orphan', 0],
    ]);
    const finishes = events.filter((e) => e.type === 'phase.finish');
    expect(finishes.map((e) => [e.id, e.stepsDone, e.early])).toEqual([
      [1, 1, true],
      [3, 0, false],
      [2, 1, false],
    ]);
    expect(events.find((e) => e.type === 'log')).toMatchObject({ severity: 'warning', message: 'careful' });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded', engineBytes: 1234, durationMs: 9 });
    // The shared build view folds them like a worker's: the tree and the ending.
    const view = new BuildView('w1');
    for (const e of events) view.apply(e);
    expect(view.outcome?.status).toBe('succeeded');
    expect(JSON.stringify(view.snapshot())).toContain('Tactics');
    // Nothing after the end.
    expect(feed({ type: 'phase.start', build: 1, t: 10, name: 'late', parent: null, steps: 1 })).toEqual([]);
  });

  it("the clock never runs backwards (two threads' lines out of order)", () => {
    const { feed } = fold();
    feed({ type: 'phase.start', build: 1, t: 5, name: 'A', parent: null, steps: 2 });
    const [e] = feed({ type: 'phase.step', build: 1, t: 3, name: 'A', step: 0 });
    expect(e.t).toBe(5);
  });

  it('build.end: cancelled, no engine, exception', () => {
    const a = fold();
    a.f.cancelling('user', 2);
    expect(a.feed({ type: 'build.end', build: 1, t: 3, result: 'null', cancelled: true })[0]).toMatchObject({ status: 'cancelled', stopToFinishMs: 1 });
    const b = fold();
    expect(b.feed({ type: 'build.end', build: 1, t: 3, result: 'null', cancelled: false })[0]).toMatchObject({ status: 'failed', error: 'TensorRT returned no engine' });
    // JSON null: the drop-in saw the callbacks but not the call's result: succeeded, said to be unknown, no size.
    const u = fold();
    const [note, end] = u.feed({ type: 'build.end', build: 1, t: 3, result: null, cancelled: false });
    expect(note).toMatchObject({ type: 'log', severity: 'warning', message: expect.stringContaining('whether an engine came back is unknown') });
    expect(end).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(end).not.toHaveProperty('engineBytes');
    const c = fold();
    expect(c.feed({ type: 'build.end', build: 1, t: 3, result: 'exception', cancelled: false, error: 'RuntimeError: out of memory' })[0]).toMatchObject({
      status: 'failed',
      error: 'RuntimeError: out of memory',
    });
  });

  it('a closed connection mid-build is a crash with the last open phase path', () => {
    const { f, feed } = fold();
    feed({ type: 'phase.start', build: 1, t: 1, name: 'Building engine', parent: null, steps: 3 });
    feed({ type: 'phase.start', build: 1, t: 2, name: 'Tactics', parent: 'Building engine', steps: 2 });
    const [c] = f.crash('killed', 10);
    expect(c).toMatchObject({ type: 'build.finished', status: 'crashed', lastPhasePath: ['Building engine', 'Tactics'], durationMs: 10 });
    expect(c.error).toContain('Building engine › Tactics');
    expect(f.crash('again', 11)).toEqual([]);
  });

  it('bad lines are refused with a reason; severities map onto the protocol', () => {
    expect(parseProbeLine('{oops')).toEqual({ error: expect.stringContaining('not JSON') });
    expect(parseProbeLine(JSON.stringify({ type: 'phase.start', build: 1 }))).toEqual({ error: expect.stringContaining('bad probe line (phase.start)') });
    expect(probeSeverity('ERROR')).toBe('error');
    expect(probeSeverity('kINTERNAL_ERROR')).toBe('internal_error');
    expect(probeSeverity('kVERBOSE')).toBe('verbose');
    expect(probeSeverity('whatever')).toBe('info');
  });
});
