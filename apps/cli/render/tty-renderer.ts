// On a terminal: a live tree redrawn ~10 times a second below a fixed first line naming the
// backend. Logs scroll above the tree. The status line shows elapsed time and how long ago
// TensorRT last called back: real builds go silent for minutes, and a frozen bar reads as a hang.
import { PhaseTree } from '../../shared/phase-tree.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../../shared/protocol.js';
import { backendLabel, formatDuration } from '../format.js';
import type { BuildRenderer } from './renderer.js';
import { summaryLines } from './summary.js';
import { CLI_RETAIN_FINISHED_PHASES, treeLines, trimLines } from './tree-view.js';

const FRAME_MS = 100;

export class TtyRenderer implements BuildRenderer {
  // Bounded like the service's tree: the view needs open phases and recent ones; repeat counts
  // come from `instance` (tree-view.ts), so evicting old finished siblings does not change them.
  private readonly tree = new PhaseTree({ retainFinished: CLI_RETAIN_FINISHED_PHASES });
  private frameLines = 0;
  private timer?: NodeJS.Timeout;
  private readonly startedAt = Date.now();
  /** Native build time (ms) of the latest event and the local clock when it arrived. */
  private lastT = 0;
  private lastTAt = Date.now();
  private lastCallbackAt = Date.now();
  private stopState?: { kind: 'cancel' | 'kill'; at: number };
  private simulated = false;
  private anyEvent = false;
  private readonly color: boolean;

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {
    this.color = !process.env.NO_COLOR;
  }

  private paint(code: string, s: string): string {
    return this.color ? `\x1b[${code}m${s}\x1b[0m` : s;
  }

  begin(record: BuildRecord): void {
    this.simulated = record.backend === 'simulated';
    const label = backendLabel(record.backend, record.backendVersion);
    this.out.write(`${this.paint(this.simulated ? '1;33' : '1', `TRT Build Studio · ${label}`)}\n`);
    this.out.write(this.paint('2', `${record.modelPath} → ${record.outputPath ?? ''}`) + '\n');
    this.out.write('\x1b[?25l');
    this.timer = setInterval(() => this.draw(), FRAME_MS);
    this.draw();
  }

  events(events: BuildEvent[]): void {
    const logs: string[] = [];
    for (const e of events) {
      this.anyEvent = true;
      this.lastT = e.t;
      this.lastTAt = Date.now();
      if (e.type === 'heartbeat') this.lastCallbackAt = Date.now() - e.sinceLastCallbackMs;
      else this.lastCallbackAt = Date.now();
      this.tree.apply(e);
      if (e.type === 'log' && e.severity !== 'verbose' && e.severity !== 'info') {
        const c = e.severity === 'warning' ? '33' : '31';
        logs.push(this.paint(c, `${e.severity}: ${e.message}`));
      } else if (e.type === 'cache.stats' && e.warning) {
        logs.push(this.paint('33', `timing cache warning: ${e.warning}`));
      }
    }
    if (logs.length) {
      this.clearFrame();
      this.out.write(logs.map((l) => this.fit(l)).join('\n') + '\n');
      this.draw();
    }
  }

  stopping(kind: 'cancel' | 'kill'): void {
    this.stopState = { kind, at: Date.now() };
    this.draw();
  }

  end(finished: BuildFinished): void {
    if (this.timer) clearInterval(this.timer);
    this.draw(finished);
    this.out.write('\x1b[?25h');
    for (const l of summaryLines(finished, this.simulated)) {
      const c = finished.status === 'succeeded' ? '32' : finished.status === 'cancelled' ? '33' : '31';
      this.out.write(this.paint(c, l) + '\n');
    }
  }

  /** Restores the cursor if the process is torn down mid-build. */
  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.out.write('\x1b[?25h');
  }

  private nowT(): number {
    return this.lastT + (Date.now() - this.lastTAt);
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

  private statusLine(finished?: BuildFinished): string {
    const elapsed = formatDuration(finished ? finished.durationMs : Date.now() - this.startedAt);
    if (finished) return `${finished.status} · ${elapsed}`;
    const quiet = formatDuration(Date.now() - this.lastCallbackAt);
    const parts = [`elapsed ${elapsed}`];
    if (!this.anyEvent) parts.push('starting the build worker…');
    else parts.push(`last ${this.simulated ? '(simulated) ' : ''}TensorRT callback ${quiet} ago`);
    if (this.stopState) {
      const since = formatDuration(Date.now() - this.stopState.at);
      parts.push(this.paint('1;33', this.stopState.kind === 'cancel' ? `stopping… ${since} (Ctrl-C again to kill)` : `killing the worker… ${since}`));
    }
    return parts.join(' · ');
  }

  private draw(finished?: BuildFinished): void {
    const rows = this.out.rows ?? 40;
    const body = trimLines(treeLines(this.tree, finished ? (finished.t ?? this.nowT()) : this.nowT()), Math.max(3, rows - 5));
    const frame = [this.statusLine(finished), ...body].map((l) => this.fit(l));
    this.clearFrame();
    this.out.write(frame.join('\n') + '\n');
    this.frameLines = frame.length;
  }
}
