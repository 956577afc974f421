// The service side of the stream contract, without processes: views, replay from the kept
// events, a reset when they are gone, and the drop of a subscriber that falls too far behind.
import { describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { BuildFeed } from '../build-feed.js';
import { mnistLikeBuild } from '../../../test/support/synthetic-build.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('BuildFeed', () => {
  const w = mnistLikeBuild(12);
  w.finished('succeeded');
  const all = w.events;

  it('pacingReady: undefined while pacing subscribers have room, a promise while one is busy, settled when it resumes', async () => {
    const feed = new BuildFeed('b-pace', 1000);
    const got: BuildEvent[] = [];
    let release!: () => void;
    let busy = true;
    feed.subscribe(
      (evs) => {
        got.push(...evs);
        return busy ? new Promise<void>((r) => (release = r)) : undefined;
      },
      { afterSeq: -1, pacesBuild: true },
    );
    // A subscriber that does not pace, and is busy for good, never holds the build.
    feed.subscribe(() => new Promise(() => {}), { afterSeq: -1 });
    await tick();
    expect(feed.pacingReady()).toBeUndefined();
    feed.push(all.slice(0, 5));
    const waiting = feed.pacingReady();
    expect(waiting).toBeInstanceOf(Promise);
    let settled = false;
    void waiting!.then(() => (settled = true));
    feed.push(all.slice(5, 10)); // waits in the backlog meanwhile
    await tick();
    expect(settled).toBe(false);
    busy = false;
    release();
    await waiting;
    expect(got.map((e) => e.seq)).toEqual(
      all
        .slice(0, 10)
        .filter((e) => e.type !== 'phase.step' || got.includes(e))
        .map((e) => e.seq),
    );
    expect(got.filter((e) => e.type !== 'phase.step').length).toBe(all.slice(0, 10).filter((e) => e.type !== 'phase.step').length);
    expect(feed.pacingReady()).toBeUndefined();
  });

  it('pacingReady settles when the busy pacing subscriber unsubscribes', async () => {
    const feed = new BuildFeed('b-pace2', 1000);
    const sub = feed.subscribe(() => new Promise(() => {}), { afterSeq: -1, pacesBuild: true });
    await tick();
    feed.push(all.slice(0, 3));
    const waiting = feed.pacingReady()!;
    sub.unsubscribe();
    await waiting;
  });

  it('resets a subscriber resuming from before the kept events; replays one inside them', async () => {
    const feed = new BuildFeed('b1', 100);
    const cut = all.length - 20;
    feed.push(all.slice(0, cut));

    const early: BuildEvent[] = [];
    const old = feed.subscribe((evs) => early.push(...evs), { afterSeq: 3 });
    expect(old.reset).toBe(true);
    expect(old.view.seq).toBe(all[cut - 1].seq);

    const recentSeq = all[cut - 10].seq;
    const late: BuildEvent[] = [];
    const recent = feed.subscribe((evs) => late.push(...evs), { afterSeq: recentSeq });
    expect(recent.reset).toBe(false);

    await tick();
    feed.push(all.slice(cut));
    // The reset one gets nothing older than its view; the other the kept events after its seq.
    expect(early[0].seq).toBe(all[cut].seq);
    // Replayed steps may be coalesced (the protocol allows it); nothing else is left out.
    expect(late.filter((e) => e.type !== 'phase.step')).toEqual(all.filter((e) => e.seq > recentSeq && e.type !== 'phase.step'));
    const rebuilt = BuildView.fromSnapshot(old.view);
    for (const e of early) rebuilt.apply(e);
    expect(rebuilt.snapshot()).toEqual(feed.snapshot());
    expect(rebuilt.rows.openCount).toBe(0);
  });

  it('drops a subscriber that stays busy past its backlog, saying the last seq it got', async () => {
    const feed = new BuildFeed('b1', 20_000);
    feed.push(all.slice(0, 10));
    const got: BuildEvent[] = [];
    let overflowAt: number | undefined;
    const sub = feed.subscribe(
      (evs) => {
        got.push(...evs);
        return new Promise(() => undefined); // never done: a stuck client
      },
      { maxBacklog: 5, onOverflow: (seq) => (overflowAt = seq) },
    );
    await tick();
    for (let i = 10; i < 60 && overflowAt === undefined; i++) feed.push([all[i]]);
    expect(overflowAt).toBe(got[got.length - 1].seq);
    expect(feed.subscriberCount).toBe(0);
    sub.unsubscribe();
    // Resuming after it: replayed (all kept) or reset, never a gap.
    const again = feed.subscribe(() => undefined, { afterSeq: overflowAt });
    expect(again.reset).toBe(false);
  });

  it('drops a stuck subscriber at its byte bound (long log lines), while a subscriber that keeps up gets everything', async () => {
    const feed = new BuildFeed('b-bytes', 20_000);
    const keepsUp: BuildEvent[] = [];
    feed.subscribe((evs) => void keepsUp.push(...evs), { afterSeq: -1 });
    let overflowAt: number | undefined;
    let stuckGot = 0;
    feed.subscribe(
      (evs) => {
        stuckGot += evs.length;
        return new Promise(() => undefined); // a client that never reads again
      },
      // The event bound far away: only the bytes can drop it.
      { afterSeq: -1, maxBacklog: 1_000_000, maxBacklogBytes: 64 * 1024, onOverflow: (seq) => (overflowAt = seq) },
    );
    await tick();
    const line = (seq: number): BuildEvent => ({ v: 1, buildId: 'b-bytes', seq, t: seq, type: 'log', severity: 'verbose', message: 'x'.repeat(1000) });
    let seq = 0;
    feed.push([line(seq++)]); // delivered: the stuck client is busy from here on
    // Each waiting line costs its object and 2 bytes a character (event-bytes.ts): ~2.2 KiB, so
    // 64 KiB is passed within 30 lines, long before 1,000,000 events.
    for (let i = 0; i < 100 && overflowAt === undefined; i++) feed.push([line(seq++)]);
    expect(overflowAt).toBe(0);
    expect(stuckGot).toBe(1);
    expect(seq).toBeLessThan(40);
    expect(seq).toBeGreaterThan(25);
    // The other subscriber was never held back: every line, in order.
    for (let i = 0; i < 20; i++) feed.push([line(seq++)]);
    expect(keepsUp.map((e) => e.seq)).toEqual([...Array(seq).keys()]);
    expect(feed.subscriberCount).toBe(1);
  });

  it('drops stale, repeated and post-final events', () => {
    const feed = new BuildFeed('b1', 1000);
    expect(feed.push(all.slice(0, 5))).toHaveLength(5);
    expect(feed.push(all.slice(0, 5))).toHaveLength(0);
    feed.push(all.slice(5));
    const after = { ...all[all.length - 1], seq: all[all.length - 1].seq + 1 };
    expect(feed.push([after])).toHaveLength(0);
    expect(feed.snapshot().status).toBe('succeeded');
  });

  it('started from a snapshot taken elsewhere: resets resumes from before it, streams on from it', async () => {
    const src = new BuildFeed('b1', 1000);
    src.push(all.slice(0, 30));
    const at = all[29].seq;
    const feed = new BuildFeed('b1', 1000, { view: src.snapshot(), seq: at });
    expect(feed.lastSeq).toBe(at);
    expect(feed.canReplayAfter(at - 1)).toBe(false);
    expect(feed.subscribe(() => undefined, { afterSeq: 3 }).reset).toBe(true);
    const got: BuildEvent[] = [];
    expect(feed.subscribe((evs) => void got.push(...evs), { afterSeq: at }).reset).toBe(false);
    await tick();
    feed.push(all.slice(30));
    expect(got.map((e) => e.seq)).toEqual(all.slice(30).map((e) => e.seq));
    expect(feed.isEnded).toBe(true);
    // A newer snapshot replaces the kept events; an older one changes nothing.
    const jumped = new BuildFeed('b1', 1000);
    jumped.push(all.slice(0, 10));
    jumped.reset({ view: src.snapshot(), seq: at });
    expect(jumped.lastSeq).toBe(at);
    expect(jumped.subscribe(() => undefined, { afterSeq: 5 }).reset).toBe(true);
    jumped.reset({ seq: 2 });
    expect(jumped.lastSeq).toBe(at);
  });

  it('a jump to a newer snapshot sends live subscribers back through a reset, never a silent gap', async () => {
    const src = new BuildFeed('b1', 1000);
    src.push(all.slice(0, 40));
    const feed = new BuildFeed('b1', 1000);
    feed.push(all.slice(0, 10));
    const resumable: BuildEvent[] = [];
    let overflowAt: number | undefined;
    feed.subscribe((evs) => void resumable.push(...evs), { afterSeq: -1, onOverflow: (seq) => (overflowAt = seq) });
    const plain: BuildEvent[] = [];
    feed.subscribe((evs) => void plain.push(...evs), { afterSeq: -1 });
    await tick();
    const at = all[39].seq;
    feed.reset({ view: src.snapshot(), seq: at });
    expect(overflowAt).toBe(all[9].seq);
    // Coming back from where it stopped, it is told to start over from the new view.
    const again = feed.subscribe((evs) => void resumable.push(...evs), { afterSeq: overflowAt });
    expect(again.reset).toBe(true);
    expect(again.view.seq).toBe(at);
    feed.push(all.slice(40, 45));
    await tick();
    // (Steps may be coalesced in delivery: compare what came after the first ten.)
    const after = (got: BuildEvent[]) => got.filter((e) => e.seq > all[9].seq).map((e) => e.seq);
    expect(resumable.at(-6)?.seq).toBe(all[9].seq);
    expect(after(resumable)).toEqual(all.slice(40, 45).map((e) => e.seq));
    // One that cannot resume keeps going after the jump.
    expect(after(plain)).toEqual(all.slice(40, 45).map((e) => e.seq));
    expect(feed.subscriberCount).toBe(2);
  });

  it('end() without an event releases subscribers and keeps new ones out', async () => {
    const feed = new BuildFeed('b1', 1000);
    feed.push(all.slice(0, 10));
    feed.subscribe(() => undefined);
    await tick();
    expect(feed.subscriberCount).toBe(1);
    feed.end();
    expect(feed.subscriberCount).toBe(0);
    const got: BuildEvent[] = [];
    feed.subscribe((evs) => void got.push(...evs));
    expect(feed.push(all.slice(10))).toEqual([]);
    await tick();
    expect(got).toEqual([]);
    expect(feed.subscriberCount).toBe(0);
  });
});
