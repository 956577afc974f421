// Turns a build's event stream into MCP progress notifications at a pace an agent can take:
// at most one per `minIntervalMs` (the latest state wins), and a heartbeat whenever nothing was
// sent for `heartbeatMs`, because real TensorRT builds go silent for minutes and a silent tool call
// reads as a hung one.
import type { BuildEvent } from '../shared/protocol.js';
import { BuildProgressModel, progressMessage } from './progress-model.js';
import { MonotonicProgress } from './progress-value.js';

export interface ProgressUpdate {
  progress: number;
  /** Only once known: in the last notification of a build that produced its engine. */
  total?: number;
  message: string;
}

export interface NotifierOptions {
  /** Delivers one notification; must not throw or reject (the caller swallows transport errors). */
  send(update: ProgressUpdate): void | Promise<void>;
  model?: BuildProgressModel;
  /** Wall clock; injectable for tests. */
  now?: () => number;
  minIntervalMs?: number;
  heartbeatMs?: number;
  /** Silence longer than this is reported as "still building". */
  silentAfterMs?: number;
}

/** Events that move the build visibly; logs, cache figures and native heartbeats do not. */
const PROGRESS_EVENTS = new Set<BuildEvent['type']>(['build.started', 'phase.start', 'phase.step', 'phase.finish', 'build.cancelling']);

export class ProgressNotifier {
  readonly model: BuildProgressModel;
  private readonly progress = new MonotonicProgress();
  private readonly now: () => number;
  private readonly minIntervalMs: number;
  private readonly heartbeatMs: number;
  private readonly silentAfterMs: number;
  private lastSentAt = -Infinity;
  private flushTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly opts: NotifierOptions) {
    this.model = opts.model ?? new BuildProgressModel();
    this.now = opts.now ?? Date.now;
    this.minIntervalMs = opts.minIntervalMs ?? 250;
    this.heartbeatMs = opts.heartbeatMs ?? 2500;
    this.silentAfterMs = opts.silentAfterMs ?? 2000;
  }

  /** First notification right away, so the agent learns the build exists before any callback. */
  start(): void {
    if (!this.stopped) void this.emit(this.progress.next(this.model.work), this.message());
  }

  onEvents(events: readonly BuildEvent[]): void {
    if (this.stopped) return;
    const now = this.now();
    let moved = false;
    for (const ev of events) {
      this.model.apply(ev, now);
      if (ev.type === 'build.cancelling') {
        // "Stopping" is news the agent waits for, and the build may end a few ms later, often in
        // the same batch: send it now, from the state right after the cancel, inside the throttle
        // window too.
        this.flush();
        moved = false;
      } else if (PROGRESS_EVENTS.has(ev.type)) {
        moved = true;
      }
    }
    if (moved) this.changed();
  }

  /** Something worth telling happened: send now, or at the end of the throttle window. */
  changed(): void {
    if (this.stopped || this.flushTimer) return;
    const wait = this.lastSentAt + this.minIntervalMs - this.now();
    if (wait <= 0) this.flush();
    else this.flushTimer = setTimeout(() => this.flush(), wait);
  }

  /** The last notification of the build; nothing is sent after it. Resolves once it is written. */
  async finish(message: string, engineDone: boolean): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.clearTimers();
    const progress = this.progress.next(this.model.work);
    await this.emit(progress, message, engineDone ? progress : undefined);
  }

  /** Stop without a final notification (the request was cancelled: the client no longer listens). */
  stop(): void {
    this.stopped = true;
    this.clearTimers();
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (!this.stopped) void this.emit(this.progress.next(this.model.work), this.message());
  }

  private message(): string {
    return progressMessage(this.model, this.now(), { silentAfterMs: this.silentAfterMs });
  }

  private emit(progress: number, message: string, total?: number): void | Promise<void> {
    this.lastSentAt = this.now();
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = this.stopped ? undefined : setTimeout(() => this.flush(), this.heartbeatMs);
    return this.opts.send(total === undefined ? { progress, message } : { progress, total, message });
  }

  private clearTimers(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.flushTimer = this.heartbeatTimer = undefined;
  }
}
