import { describe, expect, it } from 'vitest';
import { formatAgo, formatBytes, formatDuration } from '../format.js';

describe('formatDuration: one wording for every surface', () => {
  it('keeps a decimal only where it matters and pads the smaller unit', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(849.6)).toBe('850 ms');
    expect(formatDuration(400)).toBe('400 ms');
    expect(formatDuration(12_340)).toBe('12.3 s');
    expect(formatDuration(59_949)).toBe('59.9 s');
    // Would round to "60.0 s": from there on, minutes.
    expect(formatDuration(59_960)).toBe('1 min 00 s');
    expect(formatDuration(245_000)).toBe('4 min 05 s');
    expect(formatDuration(3_599_600)).toBe('1 h 00 min');
    expect(formatDuration(3_720_000)).toBe('1 h 02 min');
  });

  it('reads clock skew as zero and a non-number as a dash', () => {
    expect(formatDuration(-5)).toBe('0 ms');
    expect(formatDuration(Number.NaN)).toBe('—');
    expect(formatDuration(Infinity)).toBe('—');
  });

  it('gives whole seconds for "ago" lines', () => {
    expect(formatAgo(999)).toBe('<1 s');
    expect(formatAgo(12_900)).toBe('12 s');
    expect(formatAgo(245_000)).toBe('4 min 05 s');
  });
});

describe('formatBytes', () => {
  it('uses binary units with three significant digits', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(12.34 * 2 ** 20)).toBe('12.3 MiB');
    expect(formatBytes(512 * 2 ** 30)).toBe('512 GiB');
  });
});

describe('formatLatency', () => {
  it('says "< 1 ms" below a millisecond (never "0 ms"), else as formatDuration', async () => {
    const { formatLatency } = await import('../format.js');
    expect(formatLatency(0)).toBe('< 1 ms');
    expect(formatLatency(0.4)).toBe('< 1 ms');
    expect(formatLatency(1)).toBe('1 ms');
    expect(formatLatency(1500)).toBe('1.5 s');
    expect(formatLatency(Number.NaN)).toBe('—');
  });
});
