// Not a terminal (CI logs, pipes): plain lines, no escape codes. Phase starts and finishes are
// printed only near the root (deep phases repeat thousands of times), logs and the result always,
// and a "still building" line during long silences so a CI log never looks frozen.
import { PhaseTree } from '../../shared/phase-tree.js';
import { CLI_RETAIN_FINISHED_PHASES } from './tree-view.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../../shared/protocol.js';
import { backendLabel, formatDuration } from '../format.js';
import type { BuildRenderer } from './renderer.js';
import { summaryLines } from './summary.js';

/** Phases deeper than this (root = 0) are not printed line by line. */
const MAX_DEPTH = 2;
const SILENCE_NOTE_MS = 30_000;
/** Repeated shallow phases: only the first few instances get lines. */
const MAX_REPEATS = 3;

export class PlainRenderer implements BuildRenderer {
  // Bounded: lines need only open phases (depth) and the one just finished, which is the newest
  // finished phase and so never the one evicted.
  private readonly tree = new PhaseTree({ retainFinished: CLI_RETAIN_FINISHED_PHASES });
  private simulated = false;
  private lastCallbackAt = Date.now();
  private lastPrintAt = Date.now();
  private timer?: NodeJS.Timeout;

  constructor(private readonly out: NodeJS.WritableStream = process.stdout) {}

  private line(s: string): void {
    this.out.write(s + '\n');
    this.lastPrintAt = Date.now();
  }

  private depth(id: number): number {
    let d = 0;
    for (let n = this.tree.get(id); n && n.parentId !== null; n = this.tree.get(n.parentId)) d++;
    return d;
  }

  begin(record: BuildRecord): void {
    this.simulated = record.backend === 'simulated';
    this.line(`Backend: ${backendLabel(record.backend, record.backendVersion)}`);
    this.line(`Model: ${record.modelPath} → ${record.outputPath ?? '(default output)'}`);
    this.timer = setInterval(() => {
      if (Date.now() - this.lastPrintAt >= SILENCE_NOTE_MS) {
        this.line(`… still building; last TensorRT callback ${formatDuration(Date.now() - this.lastCallbackAt)} ago`);
      }
    }, 1000);
    this.timer.unref();
  }

  events(events: BuildEvent[]): void {
    for (const e of events) {
      if (e.type !== 'heartbeat') this.lastCallbackAt = Date.now();
      else this.lastCallbackAt = Date.now() - e.sinceLastCallbackMs;
      this.tree.apply(e);
      const at = `[${(e.t / 1000).toFixed(2).padStart(8)}s]`;
      switch (e.type) {
        case 'build.started':
          if (e.gpu) this.line(`${at} GPU: ${e.gpu}`);
          break;
        case 'phase.start': {
          const d = this.depth(e.id);
          if (d <= MAX_DEPTH && e.instance < MAX_REPEATS) this.line(`${at} ${'  '.repeat(d)}▸ ${e.name} (${e.nbSteps} step${e.nbSteps === 1 ? '' : 's'})`);
          break;
        }
        case 'phase.finish': {
          const n = this.tree.get(e.id);
          const d = this.depth(e.id);
          if (n && d <= MAX_DEPTH && n.instance < MAX_REPEATS) {
            const early = e.early ? ' (finished early)' : '';
            this.line(`${at} ${'  '.repeat(d)}✓ ${n.name} ${e.stepsDone}/${n.nbSteps}${early} in ${formatDuration(e.t - n.startT)}`);
          }
          break;
        }
        case 'log':
          if (e.severity !== 'verbose') this.line(`${at} ${e.severity}: ${e.message}`);
          break;
        case 'cache.stats':
          if (e.warning) this.line(`${at} timing cache warning: ${e.warning}`);
          break;
        case 'build.cancelling':
          this.line(`${at} stopping… (reason: ${e.reason})`);
          break;
        default:
          break;
      }
    }
  }

  stopping(kind: 'cancel' | 'kill', signal: string): void {
    this.line(kind === 'cancel' ? `${signal}: stopping at the next step (again to kill the worker)` : `${signal}: killing the build worker`);
  }

  end(finished: BuildFinished): void {
    if (this.timer) clearInterval(this.timer);
    for (const l of summaryLines(finished, this.simulated)) this.line(l);
  }
}
