// The closing lines of a build, shared by the terminal and plain renderers.
import type { BuildFinished, CacheStats } from '../../shared/protocol.js';
import { formatBytes, formatDuration } from '../format.js';

export function cacheLine(c: CacheStats): string {
  const parts = [`${c.entriesBefore} entries before`, `${c.entriesAfter} after (+${c.added})`, formatBytes(c.bytes)];
  if (c.hits !== undefined) parts.push(`${c.hits} hits`);
  if (c.misses !== undefined) parts.push(`${c.misses} misses${c.missesInferred ? ' (inferred from logs)' : ''}`);
  return `Timing cache${c.path ? ` ${c.path}` : ''}: ${parts.join(', ')}${c.warning ? `\n  warning: ${c.warning}` : ''}`;
}

export function summaryLines(f: BuildFinished, simulated: boolean): string[] {
  const lines: string[] = [];
  const took = formatDuration(f.durationMs);
  switch (f.status) {
    case 'succeeded':
      lines.push(
        `Succeeded in ${took}` +
          (f.engineBytes !== undefined ? `: ${simulated ? 'simulated output (not an engine)' : 'engine'} ${formatBytes(f.engineBytes)}` : '') +
          (f.outputPath ? ` → ${f.outputPath}` : ''),
      );
      break;
    case 'cancelled': {
      const stop = [
        f.cancelLatencyMs !== undefined ? `cancel latency ${formatDuration(f.cancelLatencyMs)}` : '',
        f.stopToFinishMs !== undefined ? `stop took ${formatDuration(f.stopToFinishMs)}` : '',
      ].filter(Boolean);
      lines.push(`Cancelled after ${took}${stop.length ? ` (${stop.join(', ')})` : ''}; no output written`);
      if (f.error) lines.push(`  ${f.error}`);
      break;
    }
    case 'failed':
      lines.push(`Failed after ${took}: ${f.error ?? 'unknown error'}`);
      break;
    case 'crashed':
      lines.push(`CRASHED after ${took}: ${f.error ?? 'the build worker died'}`);
      break;
  }
  if (f.cache) lines.push(cacheLine(f.cache));
  return lines;
}
