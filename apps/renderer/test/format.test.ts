import { describe, expect, it } from 'vitest';
import { fmtAgo, fmtBytes, fmtCount, fmtMs } from '../lib/format.js';

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
