import { describe, expect, it } from 'vitest';
import { defaultYielder, feedInPieces } from '../web/chunk-feed.js';

describe('feedInPieces', () => {
  it('delivers a small chunk at once, without giving up the task', async () => {
    const got: string[] = [];
    let yields = 0;
    await feedInPieces(
      'abc',
      (p) => got.push(p),
      async () => void yields++,
      undefined,
      8,
    );
    expect(got).toEqual(['abc']);
    expect(yields).toBe(0);
  });

  it('splits a big chunk into pieces, in order, yielding between them only', async () => {
    const log: string[] = [];
    const text = 'x'.repeat(10) + 'y'.repeat(10) + 'z'.repeat(5);
    await feedInPieces(
      text,
      (p) => log.push(p),
      async () => void log.push('|'),
      undefined,
      10,
    );
    expect(log).toEqual(['x'.repeat(10), '|', 'y'.repeat(10), '|', 'z'.repeat(5)]);
    expect(log.filter((p) => p !== '|').join('')).toBe(text);
  });

  it('stops delivering once the subscription is cancelled', async () => {
    const got: string[] = [];
    let cancelled = false;
    await feedInPieces(
      'aabbcc',
      (p) => got.push(p),
      async () => void (cancelled = got.length >= 1),
      () => cancelled,
      2,
    );
    expect(got).toEqual(['aa']);
  });

  it('the default yielder resumes in a later task', async () => {
    const y = defaultYielder();
    const order: string[] = [];
    const done = y().then(() => order.push('resumed'));
    await Promise.resolve();
    order.push('sync and microtasks');
    await done;
    expect(order).toEqual(['sync and microtasks', 'resumed']);
  });
});
