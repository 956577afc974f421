// Events as JSON lines between the worker and its host (apps/shared/event-lines.ts): the batch
// decodes to the same events, the hand check of the three phase events answers as their zod
// schemas do, the worker's text is reused only where it is exactly the event, and every kind of
// bad batch is refused with a reason.
import { describe, expect, it } from 'vitest';
import { eventJson } from '../../shared/event-json.js';
import { BuildEvent } from '../../shared/protocol.js';
import { formatEvents } from '../../service/http/sse.js';
import { BuildFeed } from '../../service/build-feed.js';
import { decodeEventLines, encodeEventLines, isExactPhaseEvent } from '../event-lines.js';
import { tensorrtLikeStream } from '../../../test/support/synthetic-build.js';

const start = { v: 1, buildId: 'b1', seq: 4, t: 1.5, type: 'phase.start', id: 7, parentId: 3, name: 'Measuring tactic time', nbSteps: 2, instance: 19 };
const step = { v: 1, buildId: 'b1', seq: 5, t: 1.6, type: 'phase.step', id: 7, step: 0, stepsDone: 1 };
const finish = { v: 1, buildId: 'b1', seq: 6, t: 1.7, type: 'phase.finish', id: 7, stepsDone: 2, early: false };

/** Each phase event with one thing changed: a field missing, added, or of another type or range. */
function variants(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const base of [start, step, finish] as Record<string, unknown>[]) {
    out.push({ ...base });
    for (const k of Object.keys(base)) {
      const without = { ...base };
      delete without[k];
      out.push(without);
      for (const bad of [null, '1', 1.5, -1, 2 ** 60, true, {}, []]) out.push({ ...base, [k]: bad });
    }
    out.push({ ...base, extra: 1 });
    out.push({ ...base, parentId: null });
    out.push({ ...base, v: 2 });
    out.push({ ...base, t: -0.25 });
    out.push(JSON.parse(JSON.stringify(base).replace('{', '{"__proto__":{"x":1},')) as Record<string, unknown>);
  }
  return out;
}

describe('event lines', () => {
  it('a build stream survives the trip: same events, in order', () => {
    const events = tensorrtLikeStream(3, 12);
    const decoded = decodeEventLines(encodeEventLines(events));
    if ('error' in decoded) throw new Error(decoded.error);
    expect(decoded.events).toEqual(events);
    for (const [i, ev] of decoded.events.entries()) expect(JSON.parse(eventJson(ev))).toEqual(events[i]);
  });

  it('the phase events keep the worker text, the others are stringified as the host holds them', () => {
    const events = tensorrtLikeStream(3, 12);
    // Keys in reverse: text that differs from JSON.stringify of the parsed event, so reuse shows.
    const lines = events.map((e) => JSON.stringify(Object.fromEntries(Object.entries(e).reverse())));
    const decoded = decodeEventLines(lines);
    if ('error' in decoded) throw new Error(decoded.error);
    let reused = 0;
    for (const [i, ev] of decoded.events.entries()) {
      if (eventJson(ev) === lines[i]) reused++;
      else expect(eventJson(ev)).toBe(JSON.stringify(ev));
    }
    const phases = events.filter((e) => e.type.startsWith('phase.')).length;
    expect(phases).toBeGreaterThan(100);
    expect(reused).toBe(phases);
  });

  it('the hand check says yes only where zod accepts the same object and returns an equal one', () => {
    let yes = 0;
    for (const v of variants()) {
      const zod = BuildEvent.safeParse(v);
      if (isExactPhaseEvent(v)) {
        yes++;
        expect(zod.success, JSON.stringify(v)).toBe(true);
        expect(zod.data).toEqual(v);
      }
    }
    // The unchanged events and the legal variants (parentId null, a negative t) pass by hand.
    expect(yes).toBeGreaterThanOrEqual(5);
    expect(isExactPhaseEvent(start) && isExactPhaseEvent(step) && isExactPhaseEvent(finish)).toBe(true);
  });

  it('a batch decodes exactly when zod accepts each of its events', () => {
    for (const v of variants()) {
      const decoded = decodeEventLines([JSON.stringify(v)]);
      expect('events' in decoded, JSON.stringify(v)).toBe(BuildEvent.safeParse(v).success);
    }
  });

  it('text with a line break (legal JSON) is parsed but never reused: SSE frames by lines', () => {
    const pretty = JSON.stringify(start, null, 2);
    const decoded = decodeEventLines([pretty]);
    if ('error' in decoded) throw new Error(decoded.error);
    expect(eventJson(decoded.events[0])).toBe(JSON.stringify(start));
    expect(formatEvents(decoded.events)).toBe(`id: 4\ndata: ${JSON.stringify(start)}\n\n`);
  });

  it('SSE sends the worker text of a phase event as its data line', () => {
    const line = JSON.stringify(finish);
    const decoded = decodeEventLines([line]);
    if ('error' in decoded) throw new Error(decoded.error);
    expect(formatEvents(decoded.events)).toBe(`id: 6\ndata: ${line}\n\n`);
  });

  it('refuses a batch that is not JSON, a line with two values, an empty line, and says which event is wrong', () => {
    expect(decodeEventLines(['{"v":1,'])).toMatchObject({ error: expect.stringMatching(/not JSON/) });
    expect(decodeEventLines([`${JSON.stringify(start)},${JSON.stringify(step)}`])).toMatchObject({ error: expect.stringMatching(/1 event lines held 2 values/) });
    expect(decodeEventLines([JSON.stringify(start), ''])).toMatchObject({ error: expect.stringMatching(/not JSON/) });
    expect(decodeEventLines([JSON.stringify(start), JSON.stringify({ ...step, id: 'x' })])).toMatchObject({ error: expect.stringMatching(/^event 2 of 2: /) });
    expect(decodeEventLines([])).toEqual({ events: [] });
  });

  it('the text goes out live to subscribers, and the events kept for replay let it go', () => {
    const ev = { ...start, seq: 0, buildId: 'bf' };
    const line = JSON.stringify(Object.fromEntries(Object.entries(ev).reverse()));
    const decoded = decodeEventLines([line]);
    if ('error' in decoded) throw new Error(decoded.error);
    const feed = new BuildFeed('bf', 100);
    const live: string[] = [];
    feed.subscribe((events) => live.push(...events.map(eventJson)));
    return new Promise<void>((resolve) =>
      queueMicrotask(() => {
        feed.push(decoded.events);
        expect(live).toEqual([line]);
        // Kept in the log without it: a replay writes the event as it is.
        expect(eventJson(decoded.events[0])).toBe(JSON.stringify(decoded.events[0]));
        resolve();
      }),
    );
  });
});
