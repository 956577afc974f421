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

  it('drops stale, repeated and post-final events', () => {
    const feed = new BuildFeed('b1', 1000);
    expect(feed.push(all.slice(0, 5))).toHaveLength(5);
    expect(feed.push(all.slice(0, 5))).toHaveLength(0);
    feed.push(all.slice(5));
    const after = { ...all[all.length - 1], seq: all[all.length - 1].seq + 1 };
    expect(feed.push([after])).toHaveLength(0);
    expect(feed.snapshot().status).toBe('succeeded');
  });
});
