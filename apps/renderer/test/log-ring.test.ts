import { describe, expect, it } from 'vitest';
import { LogRing } from '../store/log-ring.js';

describe('LogRing', () => {
  it('keeps the newest lines up to its capacity and counts what it dropped', () => {
    const r = new LogRing(1000);
    for (let i = 0; i < 2500; i++) r.push({ seq: i, t: i, severity: 'info', message: `m${i}` });
    expect(r.size).toBe(1000);
    expect(r.dropped).toBe(1500);
    expect(r.at(0).seq).toBe(1500);
    expect(r.toArray().map((l) => l.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => 1500 + i));
  });
});
