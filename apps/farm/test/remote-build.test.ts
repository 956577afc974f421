// serve's mirror of a farm build, without Redis: it delivers through the same BuildFeed as a local
// build, so late subscribers get the local stream contract (replay, reset, backlog), also when
// the mirror started from a record snapshot rather than from the build's first event.
import { describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import { BuildOptions, type BuildEvent } from '../../shared/protocol.js';
import { mnistLikeBuild } from '../../../test/support/synthetic-build.js';
import type { FarmRecord } from '../farm-store.js';
import { RemoteBuild } from '../remote-build.js';

const tick = () => new Promise((r) => setImmediate(r));

const w = mnistLikeBuild(6);
w.finished('succeeded');
const all = w.events;

function record(over: Partial<FarmRecord> = {}): FarmRecord {
  return {
    id: 'b1',
    state: 'queued',
    modelPath: '/m.onnx',
    options: BuildOptions.parse({}),
    queuedAt: new Date(0).toISOString(),
    lastSeq: -1,
    engineAvailable: false,
    farm: { target: {}, attempt: 1, retries: 0 },
    ...over,
  };
}

/** A record as a worker writes it mid-build: the view of the first `n` events. */
function midBuild(n: number): FarmRecord {
  const v = new BuildView('b1');
  for (const e of all.slice(0, n)) v.apply(e);
  return record({ state: 'running', lastSeq: all[n - 1].seq, view: v.snapshot() });
}

describe('RemoteBuild', () => {
  it('replays the events it read to a late subscriber, then streams the rest', async () => {
    const b = new RemoteBuild(record(), { retainEvents: 10_000 });
    b.ingest(all.slice(0, 40));
    const got: BuildEvent[] = [];
    const sub = b.subscribe((evs) => void got.push(...evs), { afterSeq: 9 });
    expect(sub.reset).toBe(false);
    expect(sub.snapshot.state).toBe('running');
    await tick();
    b.ingest(all.slice(40));
    expect(got.filter((e) => e.type !== 'phase.step')).toEqual(all.filter((e) => e.seq > 9 && e.type !== 'phase.step'));
    expect(b.record().state).toBe('succeeded');
    expect((await b.waitForResult()).status).toBe('succeeded');
  });

  it('resets a subscriber resuming from before the snapshot it started from (no silent gap)', async () => {
    // serve restarted: the mirror starts from the record in Redis, whose events it never read.
    const n = 50;
    const b = new RemoteBuild(midBuild(n), { retainEvents: 10_000 });
    const got: BuildEvent[] = [];
    const sub = b.subscribe((evs) => void got.push(...evs), { afterSeq: 5 });
    expect(sub.reset).toBe(true);
    expect(sub.view.seq).toBe(all[n - 1].seq);
    // Resuming exactly at the snapshot needs no reset.
    expect(b.subscribe(() => undefined, { afterSeq: all[n - 1].seq }).reset).toBe(false);
    await tick();
    b.ingest(all.slice(n));
    expect(got[0].seq).toBe(all[n].seq);
    const rebuilt = BuildView.fromSnapshot(sub.view);
    for (const e of got) rebuilt.apply(e);
    expect(rebuilt.snapshot().rows).toEqual(b.viewSnapshot().rows);
  });

  it('after a jump to a newer record, resets subscribers resuming from before it', async () => {
    const b = new RemoteBuild(record(), { retainEvents: 10_000 });
    b.ingest(all.slice(0, 20));
    b.reset(midBuild(60));
    expect(b.lastSeq).toBe(all[59].seq);
    expect(b.subscribe(() => undefined, { afterSeq: 30 }).reset).toBe(true);
    expect(b.subscribe(() => undefined, { afterSeq: all[59].seq }).reset).toBe(false);
  });

  it("holds a busy subscriber's events and drops it past its backlog, like a local build", async () => {
    const b = new RemoteBuild(record(), { retainEvents: 10_000 });
    b.ingest(all.slice(0, 5));
    let overflowAt: number | undefined;
    const got: BuildEvent[] = [];
    b.subscribe(
      (evs) => {
        got.push(...evs);
        return new Promise(() => undefined); // a client that never drains
      },
      { afterSeq: -1, maxBacklog: 3, onOverflow: (seq) => (overflowAt = seq) },
    );
    await tick();
    for (let i = 5; i < all.length && overflowAt === undefined; i++) b.ingest([all[i]]);
    expect(overflowAt).toBe(got[got.length - 1].seq);
  });

  it('a mirror of a finished build keeps nobody subscribed and answers its result', async () => {
    const fin = all[all.length - 1];
    const b = new RemoteBuild(record({ state: 'succeeded', lastSeq: fin.seq, outcome: fin as never, finishedAt: new Date().toISOString() }), { retainEvents: 100 });
    const got: BuildEvent[] = [];
    const sub = b.subscribe((evs) => void got.push(...evs));
    expect(sub.snapshot.state).toBe('succeeded');
    b.ingest([{ ...fin, seq: fin.seq + 1 }]);
    await tick();
    expect(got).toEqual([]);
    expect((await b.waitForResult()).status).toBe('succeeded');
  });
});
