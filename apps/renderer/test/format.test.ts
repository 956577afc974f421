import { describe, expect, it } from 'vitest';
import { fmtAgo, fmtBytes, fmtCount, fmtMs, fmtCores, fmtRemaining } from '../lib/format.js';

describe('format', () => {
  it('groups thousands like en-US', () => {
    for (const n of [0, 7, 999, 1000, 12_345, 1_100, 999_999, 1_234_567, 5_357_944, -4321]) {
      expect(fmtCount(n)).toBe(n.toLocaleString('en-US'));
    }
  });
  it('formats durations, ages and sizes compactly', () => {
    expect(fmtMs(850.4)).toBe('850 ms');
    expect(fmtMs(12_345)).toBe('12.3 s');
    expect(fmtMs(245_000)).toBe('4:05');
    expect(fmtMs(3_723_000)).toBe('1:02:03');
    expect(fmtAgo(41_900)).toBe('41 s');
    expect(fmtBytes(133_376)).toBe('130 KiB');
    expect(fmtBytes(512)).toBe('512 B');
  });
});

describe('fmtRemaining', () => {
  it('says about how long, with the spread of the earlier builds', () => {
    expect(fmtRemaining({ remainingMs: 40_400, lowMs: 30_000, highMs: 55_000 })).toBe('about 40 s left (30–55 s)');
    expect(fmtRemaining({ remainingMs: 5_000, lowMs: 5_000, highMs: 5_200 })).toBe('about 5 s left');
    // Long builds in whole minutes: a ticking second would claim a precision the guess lacks.
    expect(fmtRemaining({ remainingMs: 20 * 60_000, lowMs: 15 * 60_000, highMs: 26 * 60_000 })).toBe('about 20 min left (15–26 min)');
    expect(fmtRemaining({ remainingMs: 0, lowMs: 0, highMs: 0 })).toBe('past the predicted end');
  });
  it('counts cores', () => {
    expect(fmtCores(1.62)).toBe('1.6 cores');
    expect(fmtCores(1)).toBe('1.0 core');
    expect(fmtCores(0.3)).toBe('0.3 cores');
  });
});
