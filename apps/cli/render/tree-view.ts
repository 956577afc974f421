// Turns the phase tree into the lines the terminal renderer draws. Pure (no I/O, no clock):
// the caller passes "now" in build time, so it is testable.
//
// Real builds start "Measuring tactic time" ~1,100 times under one parent; listing each would
// scroll the tree away. Siblings with the same name are grouped into one line with a count, and
// only the instance still running is expanded. Trees taller than the terminal are trimmed:
// finished lines go first, the path to what is running now stays.
import type { PhaseTree } from '../../shared/phase-tree.js';
import type { PhaseNode } from '../../shared/protocol.js';
import { formatDuration } from '../format.js';

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

function nodeText(n: PhaseNode, nowT: number): string {
  const running = n.endT === undefined;
  const icon = running ? '▸' : n.early ? '✓' : '✓';
  const steps = `${n.stepsDone}/${n.nbSteps}`;
  const took = formatDuration((n.endT ?? nowT) - n.startT);
  const early = n.early ? ' early' : '';
  return running ? `${icon} ${n.name}  ${bar(n.stepsDone, n.nbSteps)} ${steps}  ${took}` : `${icon} ${n.name}  ${steps}${early}  ${took}`;
}

/** First start to last end: instances overlap across builder threads, so durations do not add up. */
function span(group: PhaseNode[], nowT: number): number {
  return Math.max(...group.map((n) => n.endT ?? nowT)) - Math.min(...group.map((n) => n.startT));
}

function groupByName(nodes: PhaseNode[]): PhaseNode[][] {
  const groups = new Map<string, PhaseNode[]>();
  for (const n of nodes) {
    const g = groups.get(n.name);
    if (g) g.push(n);
    else groups.set(n.name, [n]);
  }
  return [...groups.values()];
}

/** Finished phases the CLI renderers keep (the native snapshot keeps as many). */
export const CLI_RETAIN_FINISHED_PHASES = 20_000;

/**
 * How many times a phase ran under one parent. A bounded tree (or a snapshot from one) has
 * evicted old finished siblings, so the count comes from `instance` (0-based n-th of this name
 * under this parent), never less than the nodes actually held.
 */
function instanceCount(group: readonly PhaseNode[]): number {
  let maxInstance = -1;
  for (const n of group) if (n.instance > maxInstance) maxInstance = n.instance;
  return Math.max(group.length, maxInstance + 1);
}

export function treeLines(tree: PhaseTree, nowT: number): ViewLine[] {
  const out: ViewLine[] = [];
  const walk = (parentId: number | null, indent: string): boolean => {
    let anyActive = false;
    for (const group of groupByName(tree.children(parentId))) {
      if (instanceCount(group) === 1) {
        const n = group[0];
        const idx = out.length;
        out.push({ text: indent + nodeText(n, nowT), active: n.endT === undefined, done: n.endT !== undefined });
        const childActive = walk(n.id, indent + '  ');
        if (childActive) out[idx].active = true;
        anyActive ||= out[idx].active;
        continue;
      }
      const open = group.filter((n) => n.endT === undefined);
      const count = instanceCount(group);
      const done = count - open.length;
      const latest = open[open.length - 1];
      const name = group[0].name;
      const head = latest
        ? `▸ ${name} ×${count}  (${done} done; now ${latest.stepsDone}/${latest.nbSteps}, ${formatDuration(nowT - latest.startT)})`
        : `✓ ${name} ×${count}  (all done in ${formatDuration(span(group, nowT))})`;
      const idx = out.length;
      out.push({ text: indent + head, active: !!latest, done: !latest });
      if (latest && walk(latest.id, indent + '  ')) out[idx].active = true;
      anyActive ||= out[idx].active;
    }
    return anyActive;
  };
  walk(null, '');
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
