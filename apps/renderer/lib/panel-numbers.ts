// Number formatting only the panels need; durations and sizes come from apps/shared/format.ts so
// every surface uses the same words. Fixed-width output (tabular digits in CSS) keeps
// columns from jumping as values change every frame.

/** 1234567 → "1,234,567". By hand: toLocaleString goes through Intl and showed up in profiles. */
export function fmtCount(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const neg = n < 0;
  let s = String(Math.round(Math.abs(n)));
  for (let i = s.length - 3; i > 0; i -= 3) s = `${s.slice(0, i)},${s.slice(i)}`;
  return neg ? `-${s}` : s;
}

/**
 * The predicted end, "about 40 s left (30–55 s)": the median guess and the spread of the earlier
 * builds it rests on. Whole seconds under two minutes, whole minutes above (a ticking second on a
 * twenty-minute guess would claim precision it does not have).
 */
export function fmtRemaining(e: { remainingMs: number; lowMs: number; highMs: number }): string {
  if (e.highMs < 1000) return 'past the predicted end';
  const minutes = e.highMs >= 120_000;
  const unit = minutes ? 60_000 : 1000;
  const r = (ms: number) => Math.max(minutes ? 1 : 0, Math.round(ms / unit));
  const u = minutes ? 'min' : 's';
  const low = r(e.lowMs);
  const high = r(e.highMs);
  const range = low === high ? '' : ` (${low}–${high} ${u})`;
  return `about ${r(e.remainingMs)} ${u} left${range}`;
}
