import { describe, expect, it } from 'vitest';
import { BuildView, type BuildViewSnapshot } from '../../shared/build-view.js';
import type { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { LiveBuild } from '../store/live-build.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';

function record(over: Partial<BuildRecord>): BuildRecord {
  return { id: 'b1', state: 'running', modelPath: 'm.onnx', options: { backend: 'simulated' }, queuedAt: new Date(0).toISOString(), lastSeq: -1, engineAvailable: false, ...over };
}

describe('LiveBuild status', () => {
  it('goes Building → Stopping → Cancelled and keeps the measured cancel latency', () => {
    const w = new StreamWriter();
    const live = new LiveBuild('b1');
    live.status = 'Building';
    w.started();
    const p = w.start('Building engine', null, 6);
    w.step(p, 0);
    live.applyEvents(w.events, 10_000);
    expect(live.status).toBe('Building');
    expect(live.simulated).toBe(true);
    live.markStopRequested(10_050);
    expect(live.status).toBe('Stopping');
    const from = w.events.length;
    w.emit({ type: 'build.cancelling', requestedAt: w.t, reason: 'user' });
    w.finish(p, 1, true);
    w.finished('cancelled', { cancelLatencyMs: 12.5, stopToFinishMs: 40 });
    live.applyEvents(w.events.slice(from), 10_100);
    expect(live.status).toBe('Cancelled');
    expect(live.outcome).toMatchObject({ cancelLatencyMs: 12.5, stopToFinishMs: 40 });
    expect(live.engineAvailable).toBe(false);
  });

  it('enters Stopping from build.cancelling alone (Stop pressed elsewhere, e.g. the CLI)', () => {
    const w = new StreamWriter();
    w.started();
    w.emit({ type: 'build.cancelling', requestedAt: 1, reason: 'timeout' });
    const live = new LiveBuild('b1');
    live.applyEvents(w.events, 0);
    expect(live.status).toBe('Stopping');
  });

  it.each([
    ['succeeded', 'Succeeded', true],
    ['failed', 'Failed', false],
    ['crashed', 'Crashed', false],
  ] as const)('maps build.finished %s to %s (engine offered: %s)', (status, word, engine) => {
    const w = new StreamWriter();
    w.started();
    const p = w.start('Building engine', null, 6);
    w.finished(status, status === 'succeeded' ? { engineBytes: 1234 } : { error: 'worker died' });
    const live = new LiveBuild('b1');
    live.applyEvents(w.events, 0);
    expect(live.status).toBe(word);
    expect(live.engineAvailable).toBe(engine);
    // Phases left open by a crash are closed, marked early since they did not complete.
    expect(live.phases.openCount).toBe(0);
    expect(live.phases.byKey.get('\u001fBuilding engine')!.shown.early).toBe(true);
    expect(p).toBe(1);
  });

  it('ignores replayed events (seq at or below what it has) after a reconnect', () => {
    const w = new StreamWriter();
    w.started();
    const p = w.start('A', null, 3);
    w.step(p, 0);
    const live = new LiveBuild('b1');
    live.applyEvents(w.events, 0);
    live.applyEvents(w.events, 0);
    expect(live.phases.byKey.get('\u001fA')!.count).toBe(1);
    expect(live.eventsApplied).toBe(3);
    // A second snapshot older than our state must not reset it.
    live.applySnapshot(record({ lastSeq: 1 }), undefined, 0);
    // Nor may an older view: it would move the build backwards.
    live.applySnapshot(record({ lastSeq: 1 }), viewOf(w.events.slice(0, 2)), 0);
    expect(live.phases.byKey.get('\u001fA')).toBeDefined();
  });

  it('takes the state, backend and cache of a finished build from its view snapshot', () => {
    const w = new StreamWriter();
    w.started();
    const p = w.start('Building engine', null, 2);
    w.finish(p, 2);
    w.t = 2000;
    w.finished('succeeded', { engineBytes: 10, cache: { entriesBefore: 5, entriesAfter: 5, added: 0, bytes: 100, hits: 5, misses: 0 } });
    const live = new LiveBuild('b1');
    live.applySnapshot(
      record({
        state: 'succeeded',
        lastSeq: w.events.length - 1,
        backend: 'simulated',
        simulated: true,
        engineAvailable: true,
        startedAt: new Date(1000).toISOString(),
        finishedAt: new Date(3000).toISOString(),
      }),
      viewOf(w.events),
      5000,
    );
    expect(live.status).toBe('Succeeded');
    expect(live.cache?.hits).toBe(5);
    expect(live.engineAvailable).toBe(true);
    expect(live.backend).toBe('simulated');
    // Elapsed is the native duration of the build, not the service's wall-clock span (which
    // includes the worker's start-up and made elapsed jump backwards at the end).
    expect(live.elapsedMs(99_999)).toBe(2000);
  });

  it('tells time since the last callback from phase events and from heartbeats', () => {
    const w = new StreamWriter();
    w.started();
    w.start('A', null, 3);
    const live = new LiveBuild('b1');
    live.applyEvents(w.events, 1000);
    expect(live.sinceLastCallbackMs(4000)).toBe(3000);
    // A heartbeat measured natively, 41 s of build time later: the builder has been silent all
    // along (the build clock, not the arrival time, says how long).
    w.t += 41_000;
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 41_000, cancelRequested: false }, 0);
    live.applyEvents(w.events.slice(-1), 50_000);
    expect(live.sinceLastCallbackMs(50_000)).toBe(41_000);
    expect(live.sinceLastCallbackMs(51_000)).toBe(42_000);
  });

  it('keeps cache.stats with hits, misses and the inferred flag', () => {
    const w = new StreamWriter();
    w.emit({ type: 'cache.stats', entriesBefore: 0, entriesAfter: 40, added: 40, bytes: 4096, misses: 40, missesInferred: true, path: '/tmp/c.cache' });
    const live = new LiveBuild('b1');
    live.applyEvents(w.events, 0);
    expect(live.cache).toEqual({ entriesBefore: 0, entriesAfter: 40, added: 40, bytes: 4096, misses: 40, missesInferred: true, path: '/tmp/c.cache' });
  });

  it('takes the log from the replay after a snapshot, once, without counting phases twice', () => {
    const w = new StreamWriter();
    w.started();
    w.emit({ type: 'log', severity: 'info', message: 'first' });
    const p = w.start('A', null, 3);
    w.step(p, 0);
    w.emit({ type: 'log', severity: 'warning', message: 'second' });
    const live = new LiveBuild('b1');
    const snapshotSeq = w.events[w.events.length - 1].seq;
    live.applySnapshot(record({ lastSeq: snapshotSeq }), viewOf(w.events), 0);
    w.emit({ type: 'log', severity: 'info', message: 'third' });
    live.applyEvents(w.events, 0); // the replay: everything retained, then live
    live.applyEvents(w.events, 0); // a reconnect replays again
    expect(live.logs.toArray().map((l) => l.message)).toEqual(['first', 'second', 'third']);
    expect(live.phases.byKey.get('\u001fA')!.count).toBe(1);
  });

  it('keeps its rows when a resume brings only the record; a reset view rebuilds them, open phases closed', () => {
    const w = new StreamWriter();
    w.started();
    const root = w.start('Timing graph nodes', null, 1);
    for (let i = 0; i < 50; i++) w.full('Measuring tactic time', root, 2);
    const live = new LiveBuild('b1');
    live.applyEvents(w.events.slice(0, 20), 0);
    // A resume inside the kept window: the record, then the replay.
    live.applySnapshot(record({ lastSeq: w.events.length - 1 }), undefined, 0);
    live.applyEvents(w.events, 0);
    expect(live.phases.byKey.get('\u001fTiming graph nodes\u001fMeasuring tactic time')!.count).toBe(50);
    // Events were lost (no longer kept): the reset's view replaces what we had, whatever it was.
    const seen = live.phases;
    w.step(root, 0);
    w.finish(root, 1);
    w.finished('succeeded', { engineBytes: 10 });
    live.applySnapshot(record({ state: 'succeeded', lastSeq: w.events.length - 1, engineAvailable: true }), viewOf(w.events), 0);
    expect(live.phases).not.toBe(seen);
    expect(live.status).toBe('Succeeded');
    expect(live.engineAvailable).toBe(true);
    expect(live.phases.openCount).toBe(0);
    expect(live.view.snapshot()).toEqual(viewOf(w.events));
  });
});

describe('LiveBuild log from a snapshot', () => {
  const logLine = (w: StreamWriter, message: string) => w.emit({ type: 'log', severity: 'info', message } as never);

  it('shows the log of a build joined late (a past build picked from the history), then continues it', () => {
    const w = new StreamWriter();
    w.started();
    logLine(w, 'Loaded timing cache');
    logLine(w, 'Simulated engine written');
    const live = new LiveBuild('b1');
    live.applySnapshot(record({ lastSeq: w.events.length - 1 }), viewOf(w.events), 0);
    expect(live.logs.toArray().map((l) => l.message)).toEqual(['Loaded timing cache', 'Simulated engine written']);
    const from = w.events.length;
    logLine(w, 'after the snapshot');
    live.applyEvents(w.events.slice(from), 0);
    // A replay of lines the snapshot already brought adds nothing.
    live.applyEvents(w.events, 0);
    expect(live.logs.toArray().map((l) => l.message)).toEqual(['Loaded timing cache', 'Simulated engine written', 'after the snapshot']);
  });

  it('takes only the lines it missed from a reset, and says when older ones were not kept', () => {
    const w = new StreamWriter();
    w.started();
    for (let i = 0; i < 600; i++) logLine(w, `line ${i}`);
    const late = new LiveBuild('b1');
    late.applySnapshot(record({ lastSeq: w.events.length - 1 }), viewOf(w.events), 0);
    const got = late.logs.toArray().map((l) => l.message);
    expect(got[0]).toBe('… 100 earlier lines are not kept for a late viewer');
    expect(got.slice(1)).toEqual(Array.from({ length: 500 }, (_, i) => `line ${i + 100}`));

    const live = new LiveBuild('b1');
    live.applyEvents(w.events.slice(0, 551), 0);
    live.applySnapshot(record({ lastSeq: w.events.length - 1 }), viewOf(w.events), 0);
    const msgs = live.logs.toArray().map((l) => l.message);
    expect(msgs.filter((m) => m.startsWith('line '))).toEqual(Array.from({ length: 600 }, (_, i) => `line ${i}`));
    expect(msgs).toContain('… earlier lines may be missing here (the stream was reset)');
  });
});

function viewOf(events: readonly BuildEvent[]): BuildViewSnapshot {
  const v = new BuildView('b1');
  for (const e of events) v.apply(e);
  return v.snapshot();
}
