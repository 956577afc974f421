import { describe, expect, it } from 'vitest';
import { BuildView } from '../build-view.js';
import type { BuildRecord } from '../protocol.js';
import { formatCurrentPath, formatLiveness, formatRemaining, rowLines, viewFromRecord } from '../view-format.js';

describe('viewFromRecord', () => {
  it('starts empty from a record without a phase tree', () => {
    const v = viewFromRecord({ id: 'x', state: 'queued', modelPath: '/m', options: { backend: 'auto' }, queuedAt: '', lastSeq: -1, engineAvailable: false } as unknown as BuildRecord);
    expect(v.status).toBe('queued');
    expect(v.rows.root.children).toEqual([]);
  });
});

describe('wording', () => {
  it('puts step counts where they tell something and escapes names', () => {
    expect(formatCurrentPath([{ name: 'Building engine', stepsDone: 2, nbSteps: 6 }, { name: 'subgraph', stepsDone: 0, nbSteps: 1 }, { name: 'Time\x07', stepsDone: 9, nbSteps: 4 }])).toBe(
      'Building engine 2/6 › subgraph › Time\\x07 4/4',
    );
  });

  it('says busy or stalled from the worker\'s cores', () => {
    expect(formatLiveness(undefined)).toBeUndefined();
    expect(formatLiveness(0.01)).toBe('no CPU use');
    expect(formatLiveness(1)).toBe('builder busy, 1.0 core');
    expect(formatLiveness(1.46)).toBe('builder busy, 1.5 cores');
  });

  it('gives the predicted end with its range, and says when it has passed', () => {
    expect(formatRemaining({ remainingMs: 12_000, lowMs: 9000, highMs: 15_000, basis: 3 })).toBe('about 12.0 s left (9.0 s–15.0 s)');
    expect(formatRemaining({ remainingMs: 5000, lowMs: 5000, highMs: 5000, basis: 1 })).toBe('about 5.0 s left');
    expect(formatRemaining({ remainingMs: 0, lowMs: 0, highMs: 4000, basis: 2 })).toBe('past the predicted end (up to 4.0 s more)');
    expect(formatRemaining({ remainingMs: 0, lowMs: 0, highMs: 0, basis: 2 })).toBe('past the predicted end');
  });
});
