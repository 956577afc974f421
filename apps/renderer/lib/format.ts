// Number formatting shared by the panels. Fixed-width output (tabular digits in CSS) keeps
// columns from jumping as values change every frame.

/** 1234567 → "1,234,567". By hand: toLocaleString goes through Intl and showed up in profiles. */
export function fmtCount(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const neg = n < 0;
  let s = String(Math.round(Math.abs(n)));
  for (let i = s.length - 3; i > 0; i -= 3) s = `${s.slice(0, i)},${s.slice(i)}`;
  return neg ? `-${s}` : s;
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ${units[i]}`;
}

/** Durations: "850 ms", "12.3 s", "4:05", "1:02:03". */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (x: number) => String(x).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** Whole seconds for "last TensorRT callback N s ago" (a ticking tenth would be noise). */
export function fmtAgo(ms: number): string {
  if (ms < 1000) return '<1 s';
  if (ms < 60_000) return `${Math.floor(ms / 1000)} s`;
  return fmtMs(ms);
}

export function fmtShape(shape: readonly (number | string)[]): string {
  return `[${shape.join(', ')}]`;
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

/** The build worker's CPU use in cores ("1.6 cores"), for the liveness hint. */
export function fmtCores(cores: number): string {
  return `${cores < 10 ? cores.toFixed(1) : Math.round(cores)} core${cores >= 0.95 && cores < 1.05 ? '' : 's'}`;
}
