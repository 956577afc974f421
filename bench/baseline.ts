// The benchmarks' guard: every bench prints, beside its own figures, the previous ones from the
// checked-in bench/baseline.json and the ratio now / baseline, so a regression shows in the
// run that causes it. Figures are named by their path in the bench's JSON ("fps.p5").
import * as fs from 'node:fs';
import * as path from 'node:path';

export type BenchName = 'ui' | 'native' | 'pipeline' | 'watch';

interface BaselineFigure {
  value: number;
  better: 'lower' | 'higher';
  note?: string;
}

export interface Compared {
  baseline: number;
  now: number | null;
  /** now / baseline (null when this run has no such figure). */
  ratio: number | null;
  better: 'lower' | 'higher';
  /** The figure moved the wrong way by more than 10 % (noise on a shared machine is not less). */
  worse: boolean;
  note?: string;
}

/** bench/baseline.json in the source tree (this file runs from dist/bench/, or from bench/ in tests). */
export const BASELINE_FILE =
  [path.join(__dirname, 'baseline.json'), path.resolve(__dirname, '..', '..', 'bench', 'baseline.json')].find((f) => fs.existsSync(f)) ?? path.join(__dirname, 'baseline.json');

function at(obj: unknown, dotted: string): number | null {
  let cur: unknown = obj;
  for (const k of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return null;
    cur = (cur as Record<string, unknown>)[k];
  }
  return typeof cur === 'number' && Number.isFinite(cur) ? cur : null;
}

/** The baseline's figures for `bench` beside this run's, with ratios. */
export function compareToBaseline(bench: BenchName, result: unknown, file = BASELINE_FILE): { file: string; recorded: string; figures: Record<string, Compared> } {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { recorded: string } & Partial<Record<BenchName, Record<string, BaselineFigure>>>;
  const figures: Record<string, Compared> = {};
  for (const [name, f] of Object.entries(doc[bench] ?? {})) {
    const now = at(result, name);
    const ratio = now === null || f.value === 0 ? null : Math.round((now / f.value) * 1000) / 1000;
    const worse = ratio !== null && (f.better === 'lower' ? ratio > 1.1 : ratio < 1 / 1.1);
    figures[name] = { baseline: f.value, now, ratio, better: f.better, worse, ...(f.note ? { note: f.note } : {}) };
  }
  return { file: path.relative(process.cwd(), file) || file, recorded: doc.recorded, figures };
}
