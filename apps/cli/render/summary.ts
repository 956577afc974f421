// The closing lines of a build, shared by the terminal and plain renderers. Errors and paths may
// quote the model (tensor names), so they go through displayText: no control character from a
// model reaches the terminal.
import { displayText } from '../../shared/display-text.js';
import { formatMemory } from '../../shared/memory-text.js';
import type { BuildFinished, BuildMemory, CacheStats, MemoryEstimate } from '../../shared/protocol.js';
import { crashSite, formatCrashSite, stoppedMidTimingNote } from '../../shared/view-format.js';
import { formatBytes, formatDuration, formatLatency } from '../../shared/format.js';
import { buildLayersText } from '../../shared/build-layers.js';

export function cacheLine(c: CacheStats): string {
  const parts = [`${c.entriesBefore} entries before`, `${c.entriesAfter} after (+${c.added})`, formatBytes(c.bytes)];
  if (c.hits !== undefined) parts.push(`${c.hits} hits`);
  if (c.misses !== undefined) parts.push(`${c.misses} misses${c.missesInferred ? ' (inferred from logs)' : ''}`);
  const note = stoppedMidTimingNote(c);
  return `Timing cache${c.path ? ` ${displayText(c.path)}` : ''}: ${parts.join(', ')}${note ? `\n  (${note})` : ''}${c.warning ? `\n  warning: ${displayText(c.warning)}` : ''}`;
}

/** Phase rows listed in the memory summary: the outer levels, where the story is. */
const MEMORY_ROWS = 12;
const MEMORY_DEPTH = 5;

/** "Memory: peak 3.1 GiB host, 12 GiB GPU", then the peak of each outer phase, indented by depth. */
export function memoryLines(m: BuildMemory): string[] {
  // A device delta counts every process's allocations on the GPU since the build began: say so.
  const gpu = m.peakGpuBytes !== null ? `, ${formatMemory(m.peakGpuBytes)} GPU${m.peakGpuSource === 'device-delta' ? ' (device delta)' : ''}` : '';
  const lines = [`Memory: peak ${formatMemory(m.peakHostBytes)} host${gpu}`];
  const rows = m.byPhase.filter((p) => p.path.length <= MEMORY_DEPTH);
  for (const p of rows.slice(0, MEMORY_ROWS)) {
    const g = p.peakGpuBytes !== null ? ` / GPU ${formatMemory(p.peakGpuBytes)}` : '';
    lines.push(`${'  '.repeat(p.path.length)}${displayText(p.path[p.path.length - 1])}: ${formatMemory(p.peakHostBytes)}${g}`);
  }
  if (rows.length > MEMORY_ROWS) lines.push(`  … ${rows.length - MEMORY_ROWS} more phases (all of them in --json: build.finished memory.byPhase)`);
  return lines;
}

/** "memory: expected peak about 3 GiB (basis)", and the warning when that is more than there is. */
export function memoryEstimateLines(e: MemoryEstimate): { text: string; warning: boolean }[] {
  const avail = e.availableBytes !== undefined ? `; ${formatMemory(e.availableBytes)} available` : '';
  const out = [{ text: `memory: expected peak about ${formatMemory(e.peakHostBytes)} host (from ${displayText(e.basis)})${avail}`, warning: false }];
  if (e.warning) out.push({ text: `warning: ${displayText(e.warning)}`, warning: true });
  return out;
}

export function summaryLines(f: BuildFinished, simulated: boolean): string[] {
  const lines: string[] = [];
  const took = formatDuration(f.durationMs);
  const error = f.error === undefined ? undefined : displayText(f.error);
  switch (f.status) {
    case 'succeeded':
      if (f.reused) {
        lines.push(
          `Reused the engine of build ${displayText(f.reused.fromBuildId)} (nothing built)` +
            (f.engineBytes !== undefined ? `: ${simulated ? 'simulated output (not an engine)' : 'engine'} ${formatBytes(f.engineBytes)}` : '') +
            (f.outputPath ? ` → ${displayText(f.outputPath)}` : ''),
        );
        break;
      }
      lines.push(
        `Succeeded in ${took}` +
          (f.engineBytes !== undefined ? `: ${simulated ? 'simulated output (not an engine)' : 'engine'} ${formatBytes(f.engineBytes)}` : '') +
          (f.outputPath ? ` → ${displayText(f.outputPath)}` : ''),
      );
      // Layer names come from the model: displayText keeps control characters off the terminal.
      if (f.layers) lines.push(displayText(buildLayersText(f.layers)));
      break;
    case 'cancelled': {
      const stop = [
        f.cancelLatencyMs !== undefined ? `cancel latency ${formatLatency(f.cancelLatencyMs)}` : '',
        f.stopToFinishMs !== undefined ? `stop took ${formatLatency(f.stopToFinishMs)}` : '',
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
  if (f.memory) lines.push(...memoryLines(f.memory));
  return lines;
}
