// The words every surface uses for durations and sizes, so the CLI, the MCP and LSP servers and
// the UI say "4 min 05 s" for the same build, not "4m 5s" in one place and "4:05" in another.
// Pure (no Node or DOM imports): the renderer loads it too.

const pad2 = (n: number) => String(n).padStart(2, '0');

/**
 * "850 ms", "12.3 s", "4 min 05 s", "1 h 02 min". Negative values (clock skew between two
 * readings) read as 0; a value that is not a number reads as "—" rather than "NaN ms".
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)} ms`;
  // 59.96 s would round to "60.0 s"; from there on, whole seconds.
  if (v < 59_950) return `${(v / 1000).toFixed(1)} s`;
  const total = Math.round(v / 1000);
  if (total < 3600) return `${Math.floor(total / 60)} min ${pad2(total % 60)} s`;
  return `${Math.floor(total / 3600)} h ${pad2(Math.floor((total % 3600) / 60))} min`;
}

/**
 * A measured interval such as a cancel latency: under 1 ms it reads "< 1 ms" (below what the
 * clocks it comes from resolve), never "0 ms", which reads as "did not happen"; else as
 * formatDuration.
 */
export function formatLatency(ms: number): string {
  if (Number.isFinite(ms) && ms < 1) return '< 1 ms';
  return formatDuration(ms);
}

/** Whole seconds for "N s ago" lines that are redrawn often (a ticking tenth would be noise). */
export function formatAgo(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (ms < 1000) return '<1 s';
  if (ms < 60_000) return `${Math.floor(ms / 1000)} s`;
  return formatDuration(ms);
}

/** "512 B", "1.50 KiB", "12.3 MiB", "512 GiB": binary units, three significant digits. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (Math.abs(n) < 1024) return `${Math.round(n)} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = n / 1024;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const a = Math.abs(v);
  return `${a < 10 ? v.toFixed(2) : a < 100 ? v.toFixed(1) : v.toFixed(0)} ${units[i]}`;
}
