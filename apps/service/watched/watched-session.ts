// A build of the service that runs inside the user's own program (docs/watch.md): no worker of
// ours, no model file, no output path. A probe in the program reports it; the probe connection
// (probe-connection.ts) hands each probe line to this session, which folds it into events
// (apps/shared/probe-fold.ts) and keeps them in a BuildFeed as a worker's build does, so every
// surface (the CLI renderers, SSE, Electron, MCP, LSP) follows it the same way. Stop sends the
// probe a cancel line: the build ends at TensorRT's next step and the program gets TensorRT's
// cancel result. Nothing here can kill the program: it is not ours.
import type { BuildViewSnapshot } from '../../shared/build-view.js';
import { stateOf } from '../../shared/build-view.js';
import { ProbeBuildFold, watchedLabel, watchedOf, type ProbeBuildBegin, type ProbeHello, type ProbeLine } from '../../shared/probe-fold.js';
import type { BuildEvent, BuildFinished, BuildRecord, BuildState, CancelReason, WatchedBuild } from '../../shared/protocol.js';
import type { Subscription } from '../api.js';
import { BuildFeed } from '../build-feed.js';
import type { SubscribeOptions } from '../build-session.js';
import type { EngineRecord } from '../engine-identity.js';

export interface WatchedSessionOptions {
  retainEvents: number;
  /** Sends the probe its cancel line for this build. */
  sendCancel: () => void;
  /** Called once, when the build has ended. */
  onEnded?: (s: WatchedSession) => void;
}

export class WatchedSession {
  readonly watched = true;
  private readonly queuedAt = new Date().toISOString();
  private finishedAt?: string;
  private readonly startedAtMs = Date.now();
  private readonly feed: BuildFeed;
  private readonly fold: ProbeBuildFold;
  private readonly waiters: Array<(f: BuildFinished) => void> = [];
  private stopRequested = false;
  readonly label: WatchedBuild;

  constructor(
    readonly id: string,
    hello: ProbeHello,
    begin: ProbeBuildBegin,
    private readonly opts: WatchedSessionOptions,
  ) {
    this.feed = new BuildFeed(id, opts.retainEvents);
    this.fold = new ProbeBuildFold(id, hello, begin);
    this.label = watchedOf(hello, begin);
    this.push([this.fold.started()]);
  }

  /** The probe's line for this build. */
  probeLine(line: ProbeLine): void {
    this.push(this.fold.apply(line));
  }

  /** The connection closed with the build still open (the program exited or was killed). */
  connectionClosed(how: string): void {
    this.push(this.fold.crash(how, this.elapsed()));
  }

  /** The build clock here: the probe's latest t, or wall time since the build began if later. */
  private elapsed(): number {
    return Math.max(this.fold.t, Date.now() - this.startedAtMs);
  }

  private push(events: BuildEvent[]): void {
    if (events.length === 0) return;
    const fresh = this.feed.push(events);
    const end = fresh.find((e): e is BuildFinished => e.type === 'build.finished');
    if (end) {
      this.finishedAt = new Date().toISOString();
      for (const w of this.waiters.splice(0)) w(end);
      this.opts.onEnded?.(this);
    }
  }

  get finished(): boolean {
    return this.feed.view.outcome !== undefined;
  }

  private get state(): BuildState {
    return stateOf(this.feed.view, { launched: true, stopRequested: this.stopRequested });
  }

  record(): BuildRecord {
    const w = this.label;
    const started = this.feed.view.started;
    return {
      id: this.id,
      state: this.state,
      // No model file: the label names the program, which is what the user knows the build by.
      modelPath: watchedLabel(w),
      // Only the backend is known; every other option is the program's and unknown here.
      options: { backend: 'tensorrt' },
      queuedAt: this.queuedAt,
      startedAt: this.queuedAt,
      finishedAt: this.finishedAt,
      backend: 'tensorrt',
      backendVersion: started?.backendVersion,
      simulated: false,
      outcome: this.feed.view.outcome,
      lastSeq: this.feed.lastSeq,
      // The engine is the program's to keep (it may never be written to a file).
      engineAvailable: false,
      watched: w,
    };
  }

  view(): BuildViewSnapshot {
    return this.feed.snapshot();
  }

  subscribe(cb: (events: BuildEvent[]) => unknown, afterSeq?: number, opts: SubscribeOptions = {}): Subscription {
    const snapshot = this.record();
    const sub = this.feed.subscribe(cb, { ...opts, afterSeq });
    return { snapshot, view: sub.view, reset: sub.reset, unsubscribe: sub.unsubscribe };
  }

  /**
   * Asks the probe to stop the build at its next step. A second request changes nothing: the
   * program is not ours to kill (watch passes a second Ctrl-C to the program itself).
   */
  cancel(reason: CancelReason = 'user', opts: { send?: boolean } = {}): boolean {
    if (this.finished) return false;
    if (!this.stopRequested) {
      this.stopRequested = true;
      this.push(this.fold.cancelling(reason, this.elapsed()));
      // `send: false`: the caller sends one `cancel "*"` for the whole connection instead. One
      // line, not one per build and another for "*": a probe that exits with a line it never read
      // makes Linux reset the connection, and the sink may lose the probe's last lines with it.
      if (opts.send !== false) this.opts.sendCancel();
    }
    return true;
  }

  waitForResult(): Promise<BuildFinished> {
    const o = this.feed.view.outcome;
    if (o) return Promise.resolve(o);
    return new Promise((r) => this.waiters.push(r));
  }

  /** No worker: "exited" is "ended". */
  async waitForExit(): Promise<void> {
    await this.waitForResult();
  }

  enginePath(): string | undefined {
    return undefined;
  }

  engineRecord(): EngineRecord | undefined {
    return undefined;
  }
}
