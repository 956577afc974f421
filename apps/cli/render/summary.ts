// The closing lines of a build, shared by the terminal and plain renderers. Errors and paths may
// quote the model (tensor names), so they go through displayText: no control character from a
// model reaches the terminal.
import { displayText } from '../../shared/display-text.js';
import type { BuildFinished, CacheStats } from '../../shared/protocol.js';
import { crashSite, formatCrashSite, stoppedMidTimingNote } from '../../shared/view-format.js';
import { formatBytes, formatDuration } from '../../shared/format.js';

export function cacheLine(c: CacheStats): string {
  const parts = [`${c.entriesBefore} entries before`, `${c.entriesAfter} after (+${c.added})`, formatBytes(c.bytes)];
  if (c.hits !== undefined) parts.push(`${c.hits} hits`);
  if (c.misses !== undefined) parts.push(`${c.misses} misses${c.missesInferred ? ' (inferred from logs)' : ''}`);
  const note = stoppedMidTimingNote(c);
  return `Timing cache${c.path ? ` ${displayText(c.path)}` : ''}: ${parts.join(', ')}${note ? `\n  (${note})` : ''}${c.warning ? `\n  warning: ${displayText(c.warning)}` : ''}`;
}

export function summaryLines(f: BuildFinished, simulated: boolean): string[] {
  const lines: string[] = [];
  const took = formatDuration(f.durationMs);
  const error = f.error === undefined ? undefined : displayText(f.error);
  switch (f.status) {
    case 'succeeded':
      lines.push(
        `Succeeded in ${took}` +
          (f.engineBytes !== undefined ? `: ${simulated ? 'simulated output (not an engine)' : 'engine'} ${formatBytes(f.engineBytes)}` : '') +
          (f.outputPath ? ` → ${displayText(f.outputPath)}` : ''),
      );
      break;
    case 'cancelled': {
      const stop = [
        f.cancelLatencyMs !== undefined ? `cancel latency ${formatDuration(f.cancelLatencyMs)}` : '',
        f.stopToFinishMs !== undefined ? `stop took ${formatDuration(f.stopToFinishMs)}` : '',
      ].filter(Boolean);
      lines.push(`Cancelled after ${took}${stop.length ? ` (${stop.join(', ')})` : ''}; no output written`);
      if (error) lines.push(`  ${error}`);
      break;
    }
    case 'failed':
      lines.push(`Failed after ${took}: ${error ?? 'unknown error'}`);
      break;
    case 'crashed': {
      lines.push(`CRASHED after ${took}: ${error ?? 'the build worker died'}`);
      const site = crashSite(f);
      if (site) lines.push(`  ${formatCrashSite(site)}`);
      break;
    }
  }
  if (f.cache) lines.push(cacheLine(f.cache));
  return lines;
}
