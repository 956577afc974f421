// The life of one build worker process, and the one cancel/kill policy: launch it, validate what
// it says, release it once its result is in, give its last messages a moment to land after it
// exits, and kill it when it will not stop. What the build *is* (view, log, record) lives
// elsewhere (build-feed.ts, build-session.ts); this module only reports what the process did.
import { describeZodError, type BuildEvent, type BuildFinished, type CancelReason } from '../shared/protocol.js';
import { decodeEventLines } from '../shared/event-lines.js';
import { WorkerToParent, type ParentToWorker } from '../worker/messages.js';
import type { WorkerChannel, WorkerLauncher } from './worker-host.js';

/** A worker that sent its result but lingers this long is killed (it holds a GPU slot). */
export const EXIT_AFTER_RESULT_MS = 5000;
/** Exit and the last messages travel separately (utilityProcess especially): wait this long after exit. */
const EXIT_GRACE_MS = 25;

export type StartRequest = Extract<ParentToWorker, { type: 'start' }>['request'];

/** How the worker process ended, once its last messages had time to land. */
export interface WorkerExit {
  code: number | null;
  signal: string | null;
  /** Set when we killed it because it did not stop after a cancel: why. */
  killedAfterCancel?: 'second cancel' | 'no result in time';
  /** ms from the first cancel request to the exit, when there was one. */
  sinceCancelMs?: number;
  /** The last lines it wrote, when the launcher captured them. */
  stderrTail?: string;
}

export interface WorkerRunEvents {
  /** A promise: the worker gets its `ack` (may send more) only once it settles (back-pressure). */
  onEvents(events: BuildEvent[]): void | Promise<void>;
  /** The worker's own result (normally after its build.finished event). */
  onResult(finished: BuildFinished): void;
  /** The worker could not run the build (addon, request), or spoke garbage (then it is killed). */
  onError(message: string): void;
  /** Once, after the process is gone (and its last messages were handled). */
  onExit(exit: WorkerExit): void;
}

export interface WorkerRunOptions {
  /** No result this long after the first cancel: kill. */
  cancelKillMs: number;
  /** Cancel with reason "timeout" after this long (the build's time budget, not its queue wait). */
  budgetMs?: number;
}

export class WorkerRun {
  private channel?: WorkerChannel;
  private exited = false;
  private exitedPromise: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private cancelRequests = 0;
  private cancelRequestedAtMs?: number;
  private killReason?: WorkerExit['killedAfterCancel'];
  private done = false;

  constructor(
    private readonly opts: WorkerRunOptions,
    private readonly on: WorkerRunEvents,
  ) {}

  /** True while a worker process exists (launched and not yet exited). */
  get alive(): boolean {
    return this.channel !== undefined && !this.exited;
  }

  get launched(): boolean {
    return this.channel !== undefined;
  }

  get pid(): number | undefined {
    return this.channel?.pid;
  }

  /** Wall time of the first cancel request, if any. */
  get cancelRequestedAt(): number | undefined {
    return this.cancelRequestedAtMs;
  }

  /** Resolves when the worker process has exited (at once if there never was one). */
  whenExited(): Promise<void> {
    return this.exitedPromise;
  }

  /** Starts the worker on `request`; throws (with the launcher's message) when it cannot. */
  launch(launcher: WorkerLauncher, request: StartRequest): void {
    const ch = launcher();
    this.channel = ch;
    this.exitedPromise = new Promise((resolve) => {
      ch.onExit((code, signal) => {
        this.exited = true;
        this.clearTimers();
        setTimeout(() => {
          const exit: WorkerExit = {
            code,
            signal,
            ...(this.killReason ? { killedAfterCancel: this.killReason } : {}),
            ...(this.cancelRequestedAtMs !== undefined ? { sinceCancelMs: Date.now() - this.cancelRequestedAtMs } : {}),
          };
          const tail = ch.stderrTail?.();
          if (tail) exit.stderrTail = tail;
          this.on.onExit(exit);
          resolve();
        }, EXIT_GRACE_MS);
      });
    });
    ch.onMessage((raw) => this.onMessage(raw));
    ch.send({ type: 'start', request });
    if (this.opts.budgetMs) this.timers.push(setTimeout(() => this.cancel('timeout'), this.opts.budgetMs));
  }

  /**
   * The one cancel policy. First request: ask the worker to stop at the next step, and kill it
   * if no result comes within cancelKillMs (or `killAfterMs`: a memory stop's grace period). A second request kills it at once. Returns the
   * number of requests so far.
   */
  cancel(reason: CancelReason, killAfterMs = this.opts.cancelKillMs): number {
    if (!this.channel || this.done) return this.cancelRequests;
    this.cancelRequests++;
    if (this.cancelRequests === 1) {
      this.cancelRequestedAtMs = Date.now();
      this.channel.send({ type: 'cancel', reason });
      this.timers.push(setTimeout(() => this.kill('no result in time'), killAfterMs));
    } else {
      this.kill('second cancel');
    }
    return this.cancelRequests;
  }

  /**
   * The build has its ending (from the worker or written by the host): no more cancel timers; a
   * worker that lingers after that is killed.
   */
  settled(): void {
    this.done = true;
    this.clearTimers();
    if (this.channel && !this.exited) this.timers.push(setTimeout(() => this.channel?.kill(), EXIT_AFTER_RESULT_MS));
  }

  /** Ends the worker now, whatever it is doing (a worker that speaks garbage). */
  abort(): void {
    if (this.channel && !this.exited) this.channel.kill();
  }

  private kill(why: NonNullable<WorkerExit['killedAfterCancel']>): void {
    if (this.done || this.exited || !this.channel) return;
    this.killReason = why;
    this.channel.kill();
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }

  /** Hands a batch on; the worker's ack waits until whoever paces the build has room. */
  private takeEvents(events: BuildEvent[]): void {
    const ready = this.on.onEvents(events);
    const ack = () => {
      if (this.channel && !this.exited) this.channel.send({ type: 'ack' });
    };
    if (ready) ready.then(ack, ack);
    else ack();
  }

  private onMessage(raw: unknown): void {
    const parsed = WorkerToParent.safeParse(raw);
    if (!parsed.success) {
      // A worker that speaks garbage cannot be trusted to finish properly either.
      this.on.onError(`the build worker sent an invalid message: ${describeZodError(parsed.error)}`);
      this.abort();
      return;
    }
    const msg = parsed.data;
    switch (msg.type) {
      case 'events':
        this.takeEvents(msg.events);
        break;
      case 'eventLines': {
        const decoded = decodeEventLines(msg.lines);
        if ('error' in decoded) {
          this.on.onError(`the build worker sent an invalid message: ${decoded.error}`);
          this.abort();
          return;
        }
        this.takeEvents(decoded.events);
        break;
      }
      case 'result':
        this.on.onResult(msg.finished);
        this.channel?.send({ type: 'release' });
        break;
      case 'error':
        this.on.onError(msg.message);
        break;
      case 'ready':
      case 'backends':
      case 'buildRoutes':
        break;
    }
  }
}
