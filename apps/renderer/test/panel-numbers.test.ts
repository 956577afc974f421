import { describe, expect, it } from 'vitest';
import type { BuildFinished } from '../../shared/protocol.js';
import { summaryFacts } from '../components/BuildSummary.js';
import { fmtCount, fmtRemaining } from '../lib/panel-numbers.js';

describe('format', () => {
  it('groups thousands like en-US', () => {
    for (const n of [0, 7, 999, 1000, 12_345, 1_100, 999_999, 1_234_567, 5_357_944, -4321]) {
      expect(fmtCount(n)).toBe(n.toLocaleString('en-US'));
    }
  });
});

// Durations and sizes are apps/shared/format.ts's words (tested there); what matters here is that
// the panels say them the same way the CLI and MCP do, not a renderer dialect ("4:05").
describe('panel wording', () => {
  it('says durations and sizes in the shared words', () => {
    const o = {
      v: 1,
      buildId: 'b',
      seq: 9,
      t: 245_000,
      type: 'build.finished',
      status: 'cancelled',
      durationMs: 245_000,
      engineBytes: undefined,
      cancelLatencyMs: 3_723_000,
      stopToFinishMs: 850.4,
    } as unknown as BuildFinished;
    expect(summaryFacts(o, undefined, 0)).toEqual(['no engine written', 'builder stopped 1 h 02 min after Stop', 'unwound in 850 ms']);
    const ok = { ...o, status: 'succeeded', engineBytes: 133_376, cancelLatencyMs: undefined, stopToFinishMs: undefined } as unknown as BuildFinished;
    expect(summaryFacts(ok, undefined, 1234)).toEqual(['engine 130 KiB', '1,234 TensorRT callbacks']);
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
});
