// The one way to follow a build: a LiveView folds what its cursor passes (snapshot first, each
// event once), replaces its view on a reset, shows every status a build passes through, and
// followBuild subscribes it the way each in-process surface does (also when events come before
// subscribe() returns, and when a handler stops following from inside the first delivery).
import { describe, expect, it } from 'vitest';
import { BuildView, type BuildViewSnapshot } from '../build-view.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../protocol.js';
import { followBuild, LiveView, type FollowSource } from '../live-view.js';
import { StreamWriter, tensorrtLikeStream } from '../../../test/support/synthetic-build.js';

const record = (over: Partial<BuildRecord> = {}): BuildRecord => ({
  id: 'b1',
  state: 'running',
  modelPath: 'm.onnx',
  options: { backend: 'simulated' },
  queuedAt: new Date(0).toISOString(),
  lastSeq: -1,
  engineAvailable: false,
  ...over,
});

function fold(events: readonly BuildEvent[]): BuildView {
  const v = new BuildView(events[0]?.buildId ?? 'b1');
  for (const e of events) v.apply(e, 0);
  return v;
}

/** A follower that logs what it is told and checks the view it is given is the live one. */
function follower() {
  const calls: string[] = [];
  const seen: BuildEvent[] = [];
  const handlers = {
    onReset: (view: BuildView, rec: BuildRecord | undefined, live: LiveView) => {
      expect(view).toBe(live.view);
      calls.push(`reset ${view.seq}${rec ? '' : ' (no record)'}`);
    },
    onEvents: (events: BuildEvent[], view: BuildView, live: LiveView) => {
      expect(view).toBe(live.view);
      // Folded already: the view is at the batch's last seq.
      expect(view.seq).toBe(events[events.length - 1].seq);
      seen.push(...events);
      calls.push(`events ${events[0].seq}..${events[events.length - 1].seq} ${view.status}`);
    },
  };
  return { calls, seen, handlers };
}

describe('LiveView', () => {
  const events = tensorrtLikeStream(3, { nodes: 4, buildId: 'b1' });

  it('holds events that arrive before the snapshot, then folds only those newer than it', () => {
    const f = follower();
    const live = new LiveView('b1', f.handlers, { now: () => 0 });
    live.events(events.slice(5, 12));
    expect(f.calls).toEqual([]);
    live.snapshot(record({ lastSeq: 7 }), fold(events.slice(0, 8)).snapshot());
    live.events(events.slice(12));
    expect(f.seen.map((e) => e.seq)).toEqual(events.slice(8).map((e) => e.seq));
    expect(live.view.snapshot()).toEqual(fold(events).snapshot());
    expect(live.finished).toBe(true);
  });

  it('replaces its view on a reset (a new object), and ignores a reset older than what it has', () => {
    const f = follower();
    const live = new LiveView('b1', f.handlers, { now: () => 0 });
    live.startEmpty();
    live.events(events.slice(0, 10));
    const before = live.view;
    const later: BuildViewSnapshot = fold(events.slice(0, 20)).snapshot();
    live.reset(later);
    expect(live.view).not.toBe(before);
    expect(live.view.seq).toBe(later.seq);
    live.reset(fold(events.slice(0, 15)).snapshot());
    expect(live.view.seq).toBe(later.seq);
    live.events(events.slice(15));
    expect(live.view.snapshot()).toEqual(fold(events).snapshot());
    expect(f.calls.filter((c) => c.startsWith('reset'))).toEqual([`reset ${later.seq} (no record)`]);
  });

  it('hands a batch over in parts where the status changes, so "cancelling" is seen with the phases it stopped in', () => {
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 6);
    const f = follower();
    const paths: string[] = [];
    const live = new LiveView('b1', {
      ...f.handlers,
      onEvents: (evs, view, l) => {
        f.handlers.onEvents(evs, view, l);
        paths.push(
          view
            .currentPath()
            .map((p) => p.name)
            .join('/'),
        );
      },
    });
    live.startEmpty();
    live.events(w.events.splice(0));
    w.emit({ type: 'build.cancelling', requestedAt: w.t, reason: 'user' });
    w.finish(root, 0, true);
    w.emit({ type: 'build.finished', status: 'cancelled', durationMs: w.t });
    live.events(w.events.splice(0));
    expect(f.calls.slice(-2)).toEqual([expect.stringMatching(/ cancelling$/), expect.stringMatching(/ cancelled$/)]);
    expect(paths.at(-2)).toBe('Building engine');
  });

  it('starts from the record alone when the host gives no view; a record while empty only says the state', () => {
    const f = follower();
    const withRecord = new LiveView('b1', f.handlers);
    withRecord.snapshot(record({ state: 'cancelling', lastSeq: 4 }));
    expect(withRecord.view.status).toBe('cancelling');
    expect(withRecord.view.seq).toBe(4);

    const empty = new LiveView('b1');
    empty.startEmpty();
    empty.noteRecord(record({ state: 'queued', lastSeq: 9 }));
    empty.noteRecord(record({ state: 'cancelling', lastSeq: 9 }));
    // The replay that follows a record starts at the first event: the seq must not move.
    expect(empty.view.seq).toBe(-1);
    expect(empty.view.status).toBe('cancelling');
    empty.noteRecord(record({ state: 'succeeded', lastSeq: 9 }));
    expect(empty.view.status).toBe('cancelling');
  });

  it('end() ends the view with a result that came before its event, keeping where it was', () => {
    const live = new LiveView('b1');
    live.startEmpty();
    const cut = events.findIndex((e) => e.type === 'phase.step');
    live.events(events.slice(0, cut + 1));
    const where = live.view.currentPath();
    const outcome: BuildFinished = { v: 1, buildId: 'b1', seq: 3, t: 99, type: 'build.finished', status: 'crashed', durationMs: 99 };
    live.end(outcome);
    expect(live.view.outcome?.status).toBe('crashed');
    expect(live.pathAtEnd).toEqual(where);
    live.end({ ...outcome, status: 'failed' });
    expect(live.view.outcome?.status).toBe('crashed');
  });
});

describe('followBuild', () => {
  /** A source like the service: the snapshot now, and (optionally) events delivered inside subscribe(). */
  function source(deliverFirst: BuildEvent[], snapAt: number) {
    let cb: ((e: BuildEvent[]) => unknown) | undefined;
    const log: string[] = [];
    const events = tensorrtLikeStream(2, { nodes: 3, buildId: 'b1' });
    const src: FollowSource = {
      subscribe: (id, onEvents, opts) => {
        if (id !== 'b1') throw new Error(`unknown build ${id}`);
        log.push(`subscribe ${JSON.stringify(opts ?? {})}`);
        cb = onEvents;
        if (deliverFirst.length) onEvents(deliverFirst);
        return { snapshot: record({ lastSeq: snapAt }), view: fold(events.slice(0, snapAt + 1)).snapshot(), reset: false, unsubscribe: () => void log.push('unsubscribe') };
      },
    };
    return { src, log, events, push: (e: BuildEvent[]) => cb?.(e) };
  }

  it('follows from the snapshot, with events delivered before subscribe() returned', () => {
    const events = tensorrtLikeStream(2, { nodes: 3, buildId: 'b1' });
    const s = source(events.slice(3, 8), 4);
    const f = follower();
    const live = followBuild(s.src, 'b1', f.handlers);
    expect(f.calls[0]).toBe('reset 4');
    s.push(s.events.slice(8));
    expect(live.view.snapshot()).toEqual(fold(s.events).snapshot());
    live.unsubscribe();
    live.unsubscribe();
    expect(s.log).toEqual(['subscribe {}', 'unsubscribe']);
  });

  it('lets a handler stop following from inside the first delivery (a build that had ended)', () => {
    const events = tensorrtLikeStream(2, { nodes: 3, buildId: 'b1' });
    const s = source(events.slice(2), 1);
    const live = followBuild(s.src, 'b1', { onEvents: (evs, _v, l) => evs.some((e) => e.type === 'build.finished') && l.unsubscribe() });
    expect(live.finished).toBe(true);
    expect(s.log).toEqual(['subscribe {}', 'unsubscribe']);
  });

  it("fromStart: every event from the first into an empty view, with the follower's back-pressure", async () => {
    const s = source([], -1);
    let room: Promise<void> | undefined = Promise.resolve();
    const live = followBuild(s.src, 'b1', {}, { fromStart: true, pacesBuild: true, backpressure: () => room });
    expect(s.log[0]).toBe('subscribe {"afterSeq":-1,"pacesBuild":true}');
    expect(live.hasState).toBe(true);
    expect(s.push(s.events.slice(0, 4))).toBe(room);
    room = undefined;
    expect(s.push(s.events.slice(4))).toBeUndefined();
    expect(live.view.snapshot()).toEqual(fold(s.events).snapshot());
  });

  it('fold: false hands every event on once, in order, unfolded: the view keeps only their seq (and end() its outcome)', () => {
    const s = source([], -1);
    const seen: BuildEvent[] = [];
    const each: number[] = [];
    const live = followBuild(
      s.src,
      'b1',
      {
        onEvent: (ev, view) => each.push(ev.seq - view.seq),
        onEvents: (evs, view) => {
          expect(view.seq).toBe(evs[evs.length - 1].seq);
          seen.push(...evs);
        },
      },
      { fromStart: true, fold: false },
    );
    const all = s.events;
    s.push(all.slice(0, 6));
    s.push(all.slice(3, 9)); // a replay overlapping what came: only the new ones go on
    s.push(all.slice(9));
    expect(seen.map((e) => e.seq)).toEqual(all.map((e) => e.seq));
    expect(each.every((d) => d <= 0)).toBe(true);
    expect(live.view.rows.phaseEvents).toBe(0); // nothing folded
    expect(live.view.seq).toBe(all[all.length - 1].seq);
    expect(live.finished).toBe(true);
    const outcome = all[all.length - 1] as BuildFinished;
    live.end(outcome);
    expect(live.view.outcome?.status).toBe(outcome.status);
  });

  it('throws what subscribe throws, with nothing subscribed', () => {
    const s = source([], -1);
    expect(() => followBuild(s.src, 'nope', {})).toThrow('unknown build nope');
    expect(s.log).toEqual([]);
  });
});
