// The client side of the stream contract: snapshot first, each event once and in order, resets
// replace the state, and a client that follows the cursor ends with the service's view.
import { describe, expect, it } from 'vitest';
import { BuildView, type BuildViewSnapshot } from '../build-view.js';
import type { BuildEvent, BuildRecord } from '../protocol.js';
import { StreamCursor } from '../stream-cursor.js';
import { mnistLikeBuild } from '../../../test/support/synthetic-build.js';

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

function viewAfter(events: readonly BuildEvent[], n: number): BuildViewSnapshot {
  const v = new BuildView('b1');
  for (const e of events.slice(0, n)) v.apply(e);
  return v.snapshot();
}

/** A client: its view, rebuilt from snapshots, continued by events; and a log of the calls. */
function client() {
  const calls: string[] = [];
  const c = {
    view: new BuildView('b1'),
    calls,
    cursor: undefined as unknown as StreamCursor,
  };
  c.cursor = new StreamCursor({
    applySnapshot: (rec, view) => {
      calls.push(`snapshot ${view ? view.seq : 'record'}`);
      if (view) c.view = BuildView.fromSnapshot(view);
    },
    applyEvents: (events) => {
      calls.push(`events ${events[0].seq}..${events[events.length - 1].seq}`);
      for (const e of events) expect(c.view.apply(e)).toBe(true);
    },
    applyRecord: (rec) => calls.push(`record ${rec.lastSeq}`),
  });
  return c;
}

describe('StreamCursor', () => {
  const w = mnistLikeBuild(6);
  w.finished('succeeded');
  const all = w.events;
  const final = viewAfter(all, all.length);

  it('holds events that arrive before the snapshot, then applies only those newer than it', () => {
    const c = client();
    c.cursor.events(all.slice(5, 20)); // delivered while subscribe() was still returning
    expect(c.calls).toEqual([]);
    expect(c.cursor.resumeAfter).toBeUndefined();
    c.cursor.snapshot(record({ lastSeq: all[9].seq }), viewAfter(all, 10));
    expect(c.calls).toEqual([`snapshot ${all[9].seq}`, `events ${all[10].seq}..${all[19].seq}`]);
    c.cursor.events(all.slice(20));
    expect(c.view.snapshot()).toEqual(final);
    expect(c.cursor.finished).toBe(true);
  });

  it('drops events it already has (a replay overlapping live delivery) and keeps seq order', () => {
    const c = client();
    c.cursor.startEmpty();
    c.cursor.events(all.slice(0, 30));
    c.cursor.events(all.slice(10, 40));
    c.cursor.events(all.slice(0, 5));
    c.cursor.events(all.slice(40));
    expect(c.view.snapshot()).toEqual(final);
    expect(c.cursor.lastSeq).toBe(all[all.length - 1].seq);
  });

  it('starts over from a reset, and events continue after its seq', () => {
    const c = client();
    c.cursor.startEmpty();
    c.cursor.events(all.slice(0, 12));
    // Events 12..59 were lost (no longer kept by the service): the stream resets instead.
    c.cursor.reset(viewAfter(all, 60));
    c.cursor.events(all.slice(55)); // overlap with the reset's seq is dropped
    expect(c.calls[1]).toBe(`snapshot ${all[59].seq}`);
    expect(c.calls[2]).toBe(`events ${all[60].seq}..${all[all.length - 1].seq}`);
    expect(c.view.snapshot()).toEqual(final);
    expect(c.view.rows.openCount).toBe(0);
  });

  it('ignores a reset older than what it has, and says where to resume', () => {
    const c = client();
    c.cursor.reset(viewAfter(all, 30), record());
    expect(c.cursor.resumeAfter).toBe(all[29].seq);
    c.cursor.reset(viewAfter(all, 10));
    expect(c.calls).toEqual([`snapshot ${all[29].seq}`]);
    expect(c.cursor.resumeAfter).toBe(all[29].seq);
  });

  it('hands a newer record to a standing state as facts only; a host without views starts from the record', () => {
    const c = client();
    c.cursor.noteRecord(record({ lastSeq: 3 }));
    expect(c.calls).toEqual([]); // a record alone does not start a state
    c.cursor.startEmpty();
    c.cursor.noteRecord(record({ lastSeq: 4 }));
    expect(c.calls).toEqual(['record 4']);

    const old = client();
    old.cursor.snapshot(record({ lastSeq: 7, state: 'succeeded', outcome: all[all.length - 1] as BuildRecord['outcome'] }));
    expect(old.calls).toEqual(['snapshot record']);
    expect(old.cursor.finished).toBe(true);
    expect(old.cursor.resumeAfter).toBe(7);
  });
});
