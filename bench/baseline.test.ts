import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BASELINE_FILE, compareToBaseline } from './baseline.js';

describe('compareToBaseline', () => {
  it('puts each baseline figure beside the run’s, with the ratio and whether it moved the wrong way', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-baseline-'));
    const file = path.join(dir, 'baseline.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        recorded: 'test',
        ui: {
          'eventToPaintMs.p99': { value: 600, better: 'lower' },
          'fps.p5': { value: 25, better: 'higher' },
          'missing.figure': { value: 1, better: 'lower' },
        },
      }),
    );
    try {
      const c = compareToBaseline('ui', { eventToPaintMs: { p99: 30 }, fps: { p5: 20 } }, file);
      expect(c.recorded).toBe('test');
      expect(c.figures['eventToPaintMs.p99']).toMatchObject({ baseline: 600, now: 30, ratio: 0.05, worse: false });
      expect(c.figures['fps.p5']).toMatchObject({ baseline: 25, now: 20, ratio: 0.8, worse: true });
      expect(c.figures['missing.figure']).toMatchObject({ now: null, ratio: null, worse: false });
      expect(compareToBaseline('native', {}, file).figures).toEqual({});
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the checked-in baseline, which names a figure for every benchmark', () => {
    for (const bench of ['ui', 'native', 'pipeline'] as const) {
      const figures = Object.values(compareToBaseline(bench, {}, BASELINE_FILE).figures);
      expect(figures.length).toBeGreaterThan(0);
      for (const f of figures) expect(f.baseline).toBeGreaterThan(0);
    }
  });
});
