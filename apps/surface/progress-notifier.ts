// Turns a build's event stream into MCP progress notifications at a pace an agent can take:
// at most one per `minIntervalMs` (the latest state wins), and a heartbeat whenever nothing was
// sent for `heartbeatMs`, because real TensorRT builds go silent for minutes and a silent tool call
// reads as a hung one. What it tells comes from the shared build view (apps/shared/build-view.ts),
// which the notifier follows through its LiveView (apps/shared/live-view.ts): the tool subscribes
// that live view to the service (`notifier.live.follow`), and the notifier reacts to what it folds.
import type { BuildView, BuildViewSnapshot, PathLevel } from '../shared/build-view.js';
import { LiveView, type LiveViewHandlers } from '../shared/live-view.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../shared/protocol.js';
import { progressMessage } from './progress-message.js';
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
  /** The build followed (its id names the view before a snapshot comes); default ''. */
  buildId?: string;
  /** Wall clock; injectable for tests. */
  now?: () => number;
  minIntervalMs?: number;
  heartbeatMs?: number;
  /** Silence longer than this is reported as "still building". */
  silentAfterMs?: number;
  /** Whether another build is ahead of this one, asked while it is queued (progressMessage). */
  waitingBehind?: () => boolean;
}

/** Events that move the build visibly; logs, cache figures and native heartbeats do not. */
const PROGRESS_EVENTS = new Set<BuildEvent['type']>(['build.started', 'phase.start', 'phase.step', 'phase.finish', 'build.cancelling']);

export class ProgressNotifier {
  /** The build as followed: joined to the service's snapshot (follow/join), or fed from the first event. */
  readonly live: LiveView;
  /** Wall time the build entered the queue (from the service's record), for "queued for N s". */
  queuedAtWall?: number;
  /** Others that show the same live view (the LSP's buildView publisher): told after the notifier. */
  readonly followers: LiveViewHandlers[] = [];
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
    this.now = opts.now ?? Date.now;
    this.minIntervalMs = opts.minIntervalMs ?? 250;
    this.heartbeatMs = opts.heartbeatMs ?? 2500;
    this.silentAfterMs = opts.silentAfterMs ?? 2000;
    this.live = new LiveView(
      opts.buildId ?? '',
      {
        onReset: (view, record, live) => {
          if (record) this.queuedAtWall = Date.parse(record.queuedAt);
          for (const f of this.followers) f.onReset?.(view, record, live);
        },
        onEvents: (events, view, live) => {
          this.folded(events);
          for (const f of this.followers) f.onEvents?.(events, view, live);
        },
      },
      { now: this.now },
    );
  }

  /** The build view the notifications are made from (the live view's; a reset replaces it). */
  get view(): BuildView {
    return this.live.view;
  }

  /**
   * The current path just before build.finished closed every phase: for a crash without a crash
   * record, the deepest place the builder was seen at.
   */
  get pathAtEnd(): PathLevel[] {
    return this.live.pathAtEnd;
  }

  /**
   * Starts from the service's record and view of the build (subscribe()'s snapshot); events after
   * the view's seq continue it. A host that gives no view (an older service) gets one from the record.
   */
  join(record: BuildRecord, view?: BuildViewSnapshot): void {
    this.live.snapshot(record, view);
  }

  /** First notification right away, so the agent learns the build exists before any callback. */
  start(): void {
    if (!this.stopped) void this.emit(this.progress.next(this.view.work), this.message());
  }

  /** Events of a stream followed from its first event (no snapshot): folded, then told. */
  onEvents(events: readonly BuildEvent[]): void {
    if (!this.live.hasState) this.live.startEmpty();
    this.live.events(events);
  }

  /** The build ended (its outcome may come before its event): the view ends with it too. */
  ended(outcome: BuildFinished): void {
    this.live.end(outcome);
  }

  /** Events the live view just folded in. */
  private folded(events: readonly BuildEvent[]): void {
    let moved = false;
    for (const ev of events) {
      if (ev.type === 'build.cancelling') {
        // "Stopping" is news the agent waits for, and the build may end a few ms later, often in
        // the same batch: send it now, inside the throttle window too. (The view has the whole
        // batch folded already; the message says "stopping" or the ending, never "running".)
        if (!this.stopped) this.flush();
        moved = false;
      } else if (PROGRESS_EVENTS.has(ev.type)) {
        moved = true;
      }
    }
    if (moved && !this.stopped) this.changed();
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
    const progress = this.progress.next(this.view.work);
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
    if (!this.stopped) void this.emit(this.progress.next(this.view.work), this.message());
  }

  private message(): string {
    const waitingBehind = this.view.status === 'queued' ? (this.opts.waitingBehind?.() ?? false) : false;
    return progressMessage(this.view, this.now(), { silentAfterMs: this.silentAfterMs, queuedAtWall: this.queuedAtWall, waitingBehind });
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
