// Where the timeline writes each phase's name: inside its bar, beside it, or (no room) on hover.
import { describe, expect, it } from 'vitest';
import { placeLabels } from '../components/Timeline.js';
import type { PhaseRow } from '../../shared/phase-rows.js';

const row = (name: string) => ({ name }) as PhaseRow;
const measure = (t: string) => t.length * 6;

describe('placeLabels', () => {
  it('puts a name inside a bar that holds it, cut with "…" in one that holds part of it', () => {
    const a = row('Building engine'); // 90 px
    const b = row('Timing graph nodes'); // 108 px
    const labels = placeLabels(
      [
        { row: a, x0: 0, x1: 200 },
        { row: b, x0: 200, x1: 260 },
      ],
      600,
      measure,
    );
    expect(labels[0]).toEqual({ row: a, text: 'Building engine', x: 3 });
    expect(labels[1].text.endsWith('…')).toBe(true);
    expect(measure(labels[1].text)).toBeLessThanOrEqual(60 - 6);
    expect('Timing graph nodes'.startsWith(labels[1].text.slice(0, -1))).toBe(true);
  });

  it('labels a bar too thin for its name beside it, in the room before the next bar', () => {
    const thin = row('Measuring tactic time');
    const next = row('Other');
    const labels = placeLabels(
      [
        { row: thin, x0: 100, x1: 104 },
        { row: next, x0: 400, x1: 500 },
      ],
      600,
      measure,
    );
    expect(labels[0]).toEqual({ row: thin, text: 'Measuring tactic time', x: 107 });
    expect(labels[1]).toEqual({ row: next, text: 'Other', x: 403 });
    // No room beside either: left to the hover.
    expect(
      placeLabels(
        [
          { row: thin, x0: 100, x1: 104 },
          { row: next, x0: 110, x1: 112 },
        ],
        113,
        measure,
      ),
    ).toEqual([]);
  });

  it('names a row once, on its widest bar, and labels placed beside never overlap', () => {
    const r = row('Evaluating');
    const s = row('Second');
    const labels = placeLabels(
      [
        { row: r, x0: 0, x1: 2 },
        { row: r, x0: 300, x1: 302 },
        { row: r, x0: 10, x1: 20 },
        { row: s, x0: 90, x1: 91 },
      ],
      600,
      measure,
    );
    expect(labels.filter((l) => l.row === r)).toHaveLength(1);
    for (let i = 1; i < labels.length; i++) expect(labels[i].x).toBeGreaterThanOrEqual(labels[i - 1].x + measure(labels[i - 1].text));
  });
});

describe('placeLabels never names the wrong bar', () => {
  it('a thin bar whose right side is covered by a longer bar of the same lane gets no beside label over it', () => {
    const thin = row('Preparing graph for optimization');
    const long = row('Building engine from subgraph');
    const labels = placeLabels(
      [
        { row: thin, x0: 98, x1: 100 },
        { row: long, x0: 99, x1: 500 },
      ],
      600,
      measure,
    );
    expect(labels).toEqual([{ row: long, text: 'Building engine from subgraph', x: 102 }]);
  });
});
