// On a terminal: a live tree redrawn ~10 times a second below a fixed first line naming the
// backend. Logs scroll above the tree. The status line shows elapsed time (the build clock), how
// long ago TensorRT last called back and whether the builder is working meanwhile (the worker's
// CPU): real builds go silent for minutes, and a frozen bar reads as a hang. Everything shown is
// the shared build view (apps/shared/build-view.ts) the other surfaces show too.
import { BuildView } from '../../shared/build-view.js';
import { displayText } from '../../shared/display-text.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../../shared/protocol.js';
import { crashSite, formatCallback, formatCrashSite, formatRemaining, LONG_SILENCE_MS } from '../../shared/view-format.js';
import { formatDuration } from '../../shared/format.js';
import { backendLabel } from '../labels.js';
import type { BuildRenderer } from './renderer.js';
import { memoryEstimateLines, summaryLines } from './summary.js';
import { treeLines, trimLines } from './tree-view.js';
import { buildHeaderLine } from './watched-header.js';

const FRAME_MS = 100;

export class TtyRenderer implements BuildRenderer {
  private view = new BuildView('');
  private frameLines = 0;
  private timer?: NodeJS.Timeout;
  private readonly beganAt: number;
  private stopState?: { kind: 'cancel' | 'kill'; at: number };
  private simulated = false;
  /** The build asked for its verbose log (--verbose): info and VERBOSE lines scroll too. */
  private verbose = false;
  private anyEvent = false;
  private readonly color: boolean;

  constructor(
    private readonly out: NodeJS.WriteStream = process.stdout,
    /** Wall clock; injectable so tests can step through a silence. */
    private readonly now: () => number = Date.now,
  ) {
    this.color = !process.env.NO_COLOR;
    this.beganAt = now();
  }

  private paint(code: string, s: string): string {
    return this.color ? `\x1b[${code}m${s}\x1b[0m` : s;
  }

  /** The header named the backend (a farm build's is known only once a worker starts it). */
  private backendKnown = true;

  begin(record: BuildRecord): void {
    this.view = new BuildView(record.id);
    this.simulated = record.backend === 'simulated';
    this.verbose = record.options.verboseLog === true;
    this.backendKnown = record.backend !== undefined;
    const label = backendLabel(record.backend, record.backendVersion, record.options.backend);
    this.out.write(`${this.paint(this.simulated ? '1;33' : '1', `TRT Build Studio · ${label}`)}\n`);
    this.out.write(this.paint('2', displayText(buildHeaderLine(record, false))) + '\n');
    this.out.write('\x1b[?25l');
    this.timer = setInterval(() => this.draw(), FRAME_MS);
    this.draw();
  }

  events(events: BuildEvent[], view: BuildView): void {
    this.view = view;
    const logs: string[] = [];
    for (const e of events) {
      this.anyEvent = true;
      if (e.type === 'log' && (this.verbose || (e.severity !== 'verbose' && e.severity !== 'info'))) {
        const c = e.severity === 'warning' ? '33' : e.severity === 'info' ? '0' : e.severity === 'verbose' ? '2' : '31';
        // A message keeps its whole text: wrapped to the terminal, never cut (it is written once,
        // above the frame, so its lines do not enter the redraw's arithmetic).
        for (const line of this.wrap(`${e.severity}: ${displayText(e.message)}`)) logs.push(this.paint(c, line));
      } else if (e.type === 'build.started' && (e.memoryEstimate || !this.backendKnown)) {
        if (!this.backendKnown) {
          this.backendKnown = true;
          this.simulated = e.backend === 'simulated';
          logs.push(this.fit(this.paint(this.simulated ? '1;33' : '1', `backend: ${backendLabel(e.backend, e.backendVersion)}`)));
        }
        if (e.memoryEstimate) for (const l of memoryEstimateLines(e.memoryEstimate)) for (const line of this.wrap(l.text)) logs.push(this.paint(l.warning ? '33' : '2', line));
      } else if (e.type === 'cache.stats' && e.warning) {
        for (const line of this.wrap(`timing cache warning: ${displayText(e.warning)}`)) logs.push(this.paint('33', line));
      }
    }
    if (logs.length) {
      this.clearFrame();
      this.out.write(logs.join('\n') + '\n');
      this.draw();
    }
  }

  restart(view: BuildView): void {
    const from = this.view.seq;
    this.view = view;
    this.anyEvent = true;
    this.clearFrame();
    this.out.write(
      this.fit(this.paint('2', `events #${from + 1}–#${view.seq} are no longer available; the tree goes on from the build's state at ${formatDuration(view.lastT)}`)) + '\n',
    );
    this.draw();
  }

  stopping(kind: 'cancel' | 'kill'): void {
    this.stopState = { kind, at: this.now() };
    this.draw();
  }

  end(finished: BuildFinished): void {
    if (this.timer) clearInterval(this.timer);
    this.draw(true);
    this.out.write('\x1b[?25h');
    const c = finished.status === 'succeeded' ? '32' : finished.status === 'cancelled' ? '33' : '31';
    for (const l of summaryLines(finished, this.simulated)) this.out.write(this.paint(c, l) + '\n');
  }

  /** Restores the cursor if the process is torn down mid-build. */
  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.out.write('\x1b[?25h');
  }

  /** The first line of the frame: where the build stands, on the build clock. */
  statusLine(): string {
    const v = this.view;
    const now = this.now();
    if (v.outcome) {
      const site = crashSite(v.outcome);
      return `${v.outcome.status} · ${formatDuration(v.outcome.durationMs)}${site ? ` · ${formatCrashSite(site)}` : ''}`;
    }
    if (!this.anyEvent) return `starting the build worker… ${formatDuration(now - this.beganAt)}`;
    const parts = [`elapsed ${formatDuration(v.elapsedMs(now))}`];
    const callback = formatCallback(v, now, this.simulated);
    // A long silence is normal for TensorRT, but worth the eye: with "no CPU use" it is a stall.
    if (callback) parts.push((v.sinceLastCallbackMs(now) ?? 0) > LONG_SILENCE_MS ? this.paint('1;33', callback) : callback);
    else parts.push('no TensorRT callback yet');
    const left = v.remaining(now);
    if (left) parts.push(formatRemaining(left, v.phaseSharesSource));
    if (this.stopState) {
      const since = formatDuration(now - this.stopState.at);
      parts.push(this.paint('1;33', this.stopState.kind === 'cancel' ? `stopping… ${since} (Ctrl-C again to kill)` : `killing the worker… ${since}`));
    }
    return parts.join(' · ');
  }

  /** Plain text in lines of the terminal's width; continuation lines indented by two. */
  private wrap(s: string): string[] {
    const cols = Math.max(20, (this.out.columns ?? 100) - 1);
    const out: string[] = [];
    for (const para of s.split('\n')) {
      let rest = para;
      let first = true;
      do {
        const room = first ? cols : cols - 2;
        let cut = rest.length <= room ? rest.length : rest.lastIndexOf(' ', room);
        if (cut <= room / 2) cut = Math.min(rest.length, room);
        out.push((first ? '' : '  ') + rest.slice(0, cut));
        rest = rest.slice(cut).trimStart();
        first = false;
      } while (rest.length > 0);
    }
    return out;
  }

  private fit(s: string): string {
    // Wrapped lines would break the cursor arithmetic of the redraw.
    const cols = Math.max(20, (this.out.columns ?? 100) - 1);
    const plain = s.replace(/\x1b\[[0-9;]*m/g, '');
    return plain.length > cols ? plain.slice(0, cols - 1) + '…' : s;
  }

  private clearFrame(): void {
    if (this.frameLines > 0) this.out.write(`\x1b[${this.frameLines}A\r\x1b[J`);
    this.frameLines = 0;
  }

  private draw(final = false): void {
    const rows = this.out.rows ?? 40;
    const nowT = final ? this.view.elapsedMs() : this.view.elapsedMs(this.now());
    const body = trimLines(treeLines(this.view, nowT), Math.max(3, rows - 5));
    const frame = [this.statusLine(), ...body].map((l) => this.fit(l));
    this.clearFrame();
    this.out.write(frame.join('\n') + '\n');
    this.frameLines = frame.length;
  }
}
