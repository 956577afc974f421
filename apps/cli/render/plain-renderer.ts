// Not a terminal (CI logs, pipes): plain lines, no escape codes. Phase starts and finishes are
// printed only near the root (deep phases repeat thousands of times), logs and the result always,
// and a "still building" line during long silences so a CI log never looks frozen. The figures
// come from the shared build view (apps/shared/build-view.ts); names and messages go through
// displayText, so a model's control characters never reach the log.
import { BuildView } from '../../shared/build-view.js';
import { displayText } from '../../shared/display-text.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../../shared/protocol.js';
import { formatCallback, formatRemaining, LONG_SILENCE_MS } from '../../shared/view-format.js';
import { formatDuration } from '../../shared/format.js';
import { backendLabel } from '../labels.js';
import type { BuildRenderer } from './renderer.js';
import { memoryEstimateLines, summaryLines } from './summary.js';
import { buildHeaderLine } from './watched-header.js';

/** Phases deeper than this (root = 0) are not printed line by line. */
const MAX_DEPTH = 2;
const SILENCE_NOTE_MS = 30_000;
/** Repeated shallow phases: only the first few instances get lines. */
const MAX_REPEATS = 3;

interface Printed {
  name: string;
  nbSteps: number;
  startT: number;
  depth: number;
}

export class PlainRenderer implements BuildRenderer {
  private view = new BuildView('');
  /** Open phases whose start got a line (so their finish gets one); bounded by MAX_DEPTH × MAX_REPEATS per path. */
  private readonly printed = new Map<number, Printed>();
  private simulated = false;
  /** The build asked for its verbose log (--verbose): print VERBOSE lines too. */
  private verbose = false;
  private lastPrintAt: number;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly out: NodeJS.WritableStream = process.stdout,
    private readonly now: () => number = Date.now,
  ) {
    this.lastPrintAt = now();
  }

  private line(s: string): void {
    this.out.write(s + '\n');
    this.lastPrintAt = this.now();
  }

  /** The header named the backend (a farm build's is known only once a worker starts it). */
  private backendKnown = true;

  begin(record: BuildRecord): void {
    this.view = new BuildView(record.id);
    this.simulated = record.backend === 'simulated';
    this.verbose = record.options.verboseLog === true;
    this.backendKnown = record.backend !== undefined;
    this.line(`Backend: ${backendLabel(record.backend, record.backendVersion, record.options.backend)}`);
    this.line(displayText(buildHeaderLine(record, true)));
    this.timer = setInterval(() => this.silenceNote(), 1000);
    this.timer.unref();
  }

  /** The line a long silence gets; exposed for tests that step the clock. */
  silenceNote(): void {
    const now = this.now();
    if (now - this.lastPrintAt < SILENCE_NOTE_MS || this.view.outcome) return;
    const quiet = this.view.sinceLastCallbackMs(now) ?? this.view.elapsedMs(now);
    const parts = [`${quiet >= LONG_SILENCE_MS ? '⚠' : '…'} still building; ${formatCallback(this.view, now) ?? 'no TensorRT callback yet'}`];
    const left = this.view.remaining(now);
    if (left) parts.push(formatRemaining(left, this.view.phaseSharesSource));
    this.line(parts.join('; '));
  }

  /**
   * Phases that end before their last step: TensorRT does that in a good build (a detail), and
   * every open phase does it when a build is stopped or fails (not "finished"). A cancel is known
   * when it happens; a failure only from build.finished, which comes in the same batch as the
   * unwinding, so those lines wait for the rest of the batch.
   */
  private held: { at: string; p: Printed; e: Extract<BuildEvent, { type: 'phase.finish' }> }[] = [];

  private flushHeld(stopped: boolean): void {
    for (const h of this.held.splice(0)) this.finishLine(h.at, h.p, h.e, stopped);
  }

  /** One event, the view as it stood right after it (the phase just started is its most active). */
  event(e: BuildEvent, view: BuildView): void {
    this.view = view;
    if (this.held.length > 0 && !(e.type === 'phase.finish' && e.early)) this.flushHeld(e.type === 'build.finished' && e.status !== 'succeeded');
    const at = `[${(e.t / 1000).toFixed(2).padStart(8)}s]`;
    switch (e.type) {
      case 'build.started':
        if (!this.backendKnown) {
          this.backendKnown = true;
          this.simulated = e.backend === 'simulated';
          this.line(`${at} Backend: ${backendLabel(e.backend, e.backendVersion)}`);
        }
        if (e.gpu) this.line(`${at} GPU: ${displayText(e.gpu)}`);
        if (e.memoryEstimate) for (const l of memoryEstimateLines(e.memoryEstimate)) this.line(`${at} ${l.text}`);
        break;
      case 'phase.start': {
        const d = view.rows.activeRow()?.depth ?? 0;
        if (d <= MAX_DEPTH && e.instance < MAX_REPEATS) {
          const name = displayText(e.name);
          this.printed.set(e.id, { name, nbSteps: e.nbSteps, startT: e.t, depth: d });
          this.line(`${at} ${'  '.repeat(d)}▸ ${name} (${e.nbSteps} step${e.nbSteps === 1 ? '' : 's'})`);
        }
        break;
      }
      case 'phase.finish': {
        const p = this.printed.get(e.id);
        if (p) {
          this.printed.delete(e.id);
          if (!e.early) this.finishLine(at, p, e, false);
          else if (view.status === 'cancelling') this.finishLine(at, p, e, true);
          else this.held.push({ at, p, e });
        }
        break;
      }
      case 'log':
        if (e.severity !== 'verbose' || this.verbose) this.line(`${at} ${e.severity}: ${displayText(e.message)}`);
        break;
      case 'cache.stats':
        if (e.warning) this.line(`${at} timing cache warning: ${displayText(e.warning)}`);
        break;
      case 'build.cancelling':
        this.line(`${at} stopping… (reason: ${e.reason})`);
        break;
      default:
        break;
    }
  }

  /** The end of a batch: early finishes still held were details of a good build. */
  events(_events: BuildEvent[], view: BuildView): void {
    this.view = view;
    this.flushHeld(false);
  }

  private finishLine(at: string, p: Printed, e: Extract<BuildEvent, { type: 'phase.finish' }>, stopped: boolean): void {
    const indent = '  '.repeat(p.depth);
    const took = formatDuration(e.t - p.startT);
    if (stopped) this.line(`${at} ${indent}■ ${p.name} stopped at ${e.stepsDone}/${p.nbSteps} after ${took}`);
    else this.line(`${at} ${indent}✓ ${p.name} ${e.stepsDone}/${p.nbSteps}${e.early ? ' (finished early)' : ''} in ${took}`);
  }

  restart(view: BuildView): void {
    const from = this.view.seq;
    this.view = view;
    // A phase that finished in the gap gets no finish line; a shallow one that started in it is
    // taken on, so that its finish gets one like any other.
    const open = new Map([...this.view.rows.openInstances()].map((o) => [o.inst.id, o] as const));
    for (const id of [...this.printed.keys()]) if (!open.has(id)) this.printed.delete(id);
    for (const [id, o] of open) {
      if (this.printed.has(id) || o.row.depth > MAX_DEPTH || o.row.count > MAX_REPEATS) continue;
      this.printed.set(id, { name: displayText(o.row.name), nbSteps: o.inst.nbSteps, startT: o.inst.startT, depth: o.row.depth });
    }
    const where = this.view
      .currentPath()
      .map((l) => `${displayText(l.name)} ${l.stepsDone}/${l.nbSteps}`)
      .join(' › ');
    const at = `[${(view.lastT / 1000).toFixed(2).padStart(8)}s]`;
    this.line(`${at} … events #${from + 1}–#${view.seq} are no longer available; going on from the build's state${where ? `: ${where}` : ''}`);
  }

  stopping(kind: 'cancel' | 'kill', signal: string): void {
    this.line(kind === 'cancel' ? `${signal}: stopping at the next step (again to kill the worker)` : `${signal}: killing the build worker`);
  }

  end(finished: BuildFinished): void {
    if (this.timer) clearInterval(this.timer);
    this.printed.clear();
    for (const l of summaryLines(finished, this.simulated)) this.line(l);
  }
}
