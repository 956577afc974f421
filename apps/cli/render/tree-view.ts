// Turns the build view's rows into the lines the terminal renderer draws. Pure (no I/O, no
// clock): the caller passes "now" in build time, so it is testable.
//
// Real builds start "Measuring tactic time" ~1,100 times under one parent; the build view keeps
// one row per name path with an instance count (apps/shared/phase-rows.ts), so a repeated phase is
// one line with its count, and what runs under it is shown under that line. Trees taller than the
// terminal are trimmed: finished lines go first, the path to what is running now stays.
import type { BuildView } from '../../shared/build-view.js';
import { displayText } from '../../shared/display-text.js';
import type { Instance, PhaseRow } from '../../shared/phase-rows.js';
import { formatDuration } from '../../shared/format.js';
import { formatMemory } from '../../shared/memory-text.js';
import { cutShortFrom } from '../../shared/view-format.js';

export interface ViewLine {
  text: string;
  /** On the path to a running phase: kept when trimming. */
  active: boolean;
  done: boolean;
}

function bar(done: number, total: number, width = 12): string {
  const f = total > 0 ? Math.min(1, done / total) : 0;
  const full = Math.round(f * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

function singleText(name: string, n: Instance, nowT: number, cutT: number | undefined): string {
  const steps = `${n.stepsDone}/${n.nbSteps}`;
  const took = formatDuration((n.endT ?? nowT) - n.startT);
  if (n.endT === undefined) return `▸ ${name}  ${bar(n.stepsDone, n.nbSteps)} ${steps}  ${took}`;
  if (n.early && cutT !== undefined && n.endT >= cutT) return `■ ${name}  stopped at ${steps}  ${took}`;
  return `✓ ${name}  ${steps}${n.early ? ' early' : ''}  ${took}`;
}

/** First start to last end: instances overlap across builder threads, so durations do not add up. */
function span(row: PhaseRow, nowT: number): number {
  const ends = row.spans.end;
  const end = row.open.length > 0 ? nowT : ends.length > 0 ? ends[ends.length - 1] : (row.shown.endT ?? nowT);
  return end - row.firstStartT;
}

export function treeLines(view: BuildView, nowT: number): ViewLine[] {
  const out: ViewLine[] = [];
  const cutT = cutShortFrom(view);
  const walk = (parent: PhaseRow, indent: string): boolean => {
    let anyActive = false;
    for (const row of parent.children) {
      const name = displayText(row.name);
      const latest = row.open[row.open.length - 1];
      let head: string;
      if (row.count === 0) {
        // A crashed build's lastPhasePath names a phase whose start was lost with the worker.
        head = `✕ ${name}  (the worker died here; its start never arrived)`;
      } else if (row.count === 1) {
        head = singleText(name, row.shown, nowT, cutT);
      } else {
        const done = row.count - row.open.length;
        head = latest
          ? `▸ ${name} ×${row.count}  (${done} done; now ${latest.stepsDone}/${latest.nbSteps}, ${formatDuration(nowT - latest.startT)})`
          : `✓ ${name} ×${row.count}  (all done in ${formatDuration(span(row, nowT))})`;
      }
      // The most the worker held while this phase ran (heartbeat samples; memory-track.ts).
      const mem = view.memory.of(row);
      if (mem) head += `  · peak ${formatMemory(mem.host)}${mem.gpu !== null ? ` / GPU ${formatMemory(mem.gpu)}` : ''}`;
      if (row.crashSite === 'last' && row.count > 0) head += '  ✕ the worker died here';
      const idx = out.length;
      out.push({ text: indent + head, active: latest !== undefined, done: latest === undefined });
      if (walk(row, indent + '  ')) out[idx].active = true;
      anyActive ||= out[idx].active;
    }
    return anyActive;
  };
  walk(view.rows.root, '');
  return out;
}

/** At most `max` lines: finished lines are dropped first (oldest first), then the top is cut. */
export function trimLines(lines: ViewLine[], max: number): string[] {
  if (max <= 0) return [];
  if (lines.length <= max) return lines.map((l) => l.text);
  let excess = lines.length - max + 1; // +1 for the "hidden" note
  const keep = lines.map(() => true);
  for (let i = 0; i < lines.length && excess > 0; i++) {
    if (!lines[i].active) {
      keep[i] = false;
      excess--;
    }
  }
  let kept = lines.filter((_, i) => keep[i]);
  const hidden = lines.length - kept.length;
  if (kept.length > max - 1) {
    // Only running phases left and still too deep: show the deepest part, where things move.
    kept = kept.slice(kept.length - (max - 1));
  }
  const total = lines.length - kept.length;
  return [`… ${total || hidden} line${(total || hidden) === 1 ? '' : 's'} hidden (terminal too small)`, ...kept.map((l) => l.text)];
}
