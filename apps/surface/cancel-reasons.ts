// The one record of stop requests, read by every surface (the CLI's build and trtexec, MCP's
// tools, the language server's commands, a stdio server's shutdown): for each build, who asked it
// to stop (the caller's request, a cancel command, a signal, a reader that left, the server
// shutting down) and why it was cancelled as this process asked (the first reason noted wins).
// The build view says why too (view.cancelling, from the build.cancelling event) and is read
// first; the reason here stands in where no view says it: a build whose view the service no
// longer keeps, or one stopped before its events reached this process.
//
// RunStop is one run's side of it (apps/surface/run-build.ts): requests that come before the
// build has an id wait there, and are sent (and recorded here) once it has one.
import type { BuildServiceApi } from '../service/api.js';
import type { CancelReason } from '../shared/protocol.js';

/**
 * Who asked: the caller's own request was cancelled (MCP notifications/cancelled, LSP
 * $/cancelRequest), a cancel command (cancel_build, trtBuildStudio.cancel), the client cancelled
 * a work-done progress, a signal, the reader of --json left, the server is shutting down.
 */
export type StopSource = 'request' | 'command' | 'progress' | 'signal' | 'reader' | 'shutdown';

interface StopEntry {
  reason?: CancelReason;
  requests: StopSource[];
}

export class CancelReasons {
  private readonly builds = new Map<string, StopEntry>();

  private entry(id: string): StopEntry {
    let e = this.builds.get(id);
    if (!e) this.builds.set(id, (e = { requests: [] }));
    return e;
  }

  /** The first reason noted for a build wins (a later stop does not change why it stopped). */
  note(id: string, reason: CancelReason): void {
    const e = this.entry(id);
    e.reason ??= reason;
  }

  get(id: string): CancelReason | undefined {
    return this.builds.get(id)?.reason;
  }

  /** A stop of build `id` was asked by `by` (sent to the service or not: it may have ended). */
  noteRequest(id: string, by: StopSource): void {
    this.entry(id).requests.push(by);
  }

  /** How many stops of build `id` were asked (by `by`, or by anyone). */
  requests(id: string, by?: StopSource): number {
    const r = this.builds.get(id)?.requests ?? [];
    return by === undefined ? r.length : r.filter((s) => s === by).length;
  }

  /**
   * Asks the service to stop build `id` (a second request of a build that is stopping kills its
   * worker) and records it; the reason is noted when the service took the request. Returns
   * whether it did (false: the build has ended, or is unknown).
   */
  request(service: Pick<BuildServiceApi, 'cancelBuild'>, id: string, reason: CancelReason, by: StopSource): boolean {
    const accepted = service.cancelBuild(id, reason);
    this.noteRequest(id, by);
    if (accepted) this.note(id, reason);
    return accepted;
  }
}

/** One stop request of a run. */
export interface StopRequest {
  reason: CancelReason;
  by: StopSource;
}

export interface RunStopHooks {
  /**
   * Wraps the sending of each request to the service (`send` cancels every build of the run and
   * returns whether the service took it): what a surface does around a stop (stop its progress
   * notifications first, log the answer after).
   */
  send?(request: StopRequest, send: () => boolean): boolean;
  /** The run's builds have ids: called before the requests that waited for them are sent. */
  attached?(waiting: readonly StopRequest[]): void;
}

/**
 * The stop requests of one run (one build, or a matrix's builds), from before the build exists to
 * its end. A request before startBuild returned waits and is sent as soon as the build has an id,
 * so a build asked to stop while it was being started still stops (each surface handled this on
 * its own before). Once sent, a request is in the server's record (`reasons`), under each id.
 */
export class RunStop {
  private waiting: Array<StopRequest & { ifAlone: boolean; send: boolean }> = [];
  private service: Pick<BuildServiceApi, 'cancelBuild'> | undefined;
  private builds: readonly string[] = [];

  constructor(
    readonly reasons: CancelReasons = new CancelReasons(),
    private readonly hooks: RunStopHooks = {},
  ) {}

  /** The first build's id, once the run has started. */
  get buildId(): string | undefined {
    return this.builds[0];
  }

  /** The run's builds have ids (startBuild returned). */
  get attachedTo(): readonly string[] {
    return this.builds;
  }

  /**
   * Asks the run to stop (`reason`, asked by `by`): sent now when the build exists, else when it
   * does. `ifAlone`: before the build exists, sent only when no other request waits (a reader
   * that left adds no second cancel, which would kill the worker, to a signal's). `send: false`:
   * only counted (a third Ctrl-C, whose worker is being killed already). Returns whether the
   * service took it (false while it waits).
   */
  request(reason: CancelReason, by: StopSource, opts: { ifAlone?: boolean; send?: boolean } = {}): boolean {
    const req = { reason, by, ifAlone: opts.ifAlone ?? false, send: opts.send ?? true };
    if (!this.service) {
      this.waiting.push(req);
      return false;
    }
    if (!req.send) {
      for (const id of this.builds) this.reasons.noteRequest(id, by);
      return false;
    }
    return this.sendNow(req);
  }

  /** How many stops were asked of this run (by `by`, or by anyone), sent or waiting. */
  count(by?: StopSource): number {
    const waiting = this.waiting.filter((r) => by === undefined || r.by === by).length;
    const first = this.builds[0];
    return waiting + (first === undefined ? 0 : this.reasons.requests(first, by));
  }

  /** Whether a stop was asked of this run (by `by`, or by anyone). */
  asked(by?: StopSource): boolean {
    return this.count(by) > 0;
  }

  /** The run's builds exist: the requests that waited are sent, in order. */
  attach(service: Pick<BuildServiceApi, 'cancelBuild'>, ids: readonly string[]): void {
    if (this.service) return;
    this.service = service;
    this.builds = ids;
    const waiting = this.waiting;
    this.waiting = [];
    this.hooks.attached?.(waiting);
    const others = waiting.some((r) => !r.ifAlone);
    for (const r of waiting) {
      if (!r.send || (r.ifAlone && others)) for (const id of ids) this.reasons.noteRequest(id, r.by);
      else this.sendNow(r);
    }
  }

  private sendNow(req: StopRequest): boolean {
    const send = () => this.builds.map((id) => this.reasons.request(this.service!, id, req.reason, req.by)).some(Boolean);
    return this.hooks.send ? this.hooks.send({ reason: req.reason, by: req.by }, send) : send();
  }
}
