// One run of a build, the same for every surface that starts one (the CLI's `build` and
// `trtexec`, MCP's build_engine, start_build and build_matrix, the language server's
// trtBuildStudio.build): start it, follow it through the surface's live view, send the stop
// requests that came, those that came before the build had an id included, wait for its end and
// end the view with it. The surfaces differ only in what they show, which they pass in; the CLI,
// MCP and LSP start builds only through this file and run-matrix.ts (a farm's matrix), which
// apps/surface/test/run-build.test.ts checks. Light on purpose: the CLI loads it before its
// signal handling is in place, so it imports no schemas and no service code.
import type { BuildServiceApi, StartBuildInput } from '../service/api.js';
import type { LiveView } from '../shared/live-view.js';
import type { BuildFinished, BuildRecord, CancelReason } from '../shared/protocol.js';
import { CancelReasons, RunStop } from './cancel-reasons.js';

export { CancelReasons, RunStop, type StopRequest, type StopSource } from './cancel-reasons.js';

/** A stop was asked before the build was started, and the surface starts no build then. */
export class StoppedBeforeStart extends Error {
  constructor() {
    super('stopped before the build started');
    this.name = 'StoppedBeforeStart';
  }
}

export interface RunBuildOptions {
  /** The run's stop requests; they may come before this is called. Default: none come. */
  stop?: RunStop;
  /**
   * A stop asked before startBuild is called: start the build anyway and stop it at once (the
   * CLI, whose --json output then still ends with that build's build.finished). Otherwise the
   * run throws StoppedBeforeStart and starts nothing.
   */
  startStopped?: boolean;
  /** The build was accepted: before it is followed (a renderer's first line, a progress token). */
  onStarted?(record: BuildRecord): void | Promise<void>;
  /** Subscribes the surface's live view to the build and returns it (a view it shows). */
  follow?(record: BuildRecord): LiveView;
  /** The view could not be subscribed: told here and the run goes on without it. Unset: thrown. */
  onFollowError?(e: unknown, record: BuildRecord): void;
  /** The build's result is in (before the view has everything: see drain). */
  onEnded?(finished: BuildFinished): void;
  /** After the end, before the view is unsubscribed: wait for what the view still has to take. */
  drain?(live: LiveView): Promise<void>;
}

export interface BuildRun {
  record: BuildRecord;
  finished: BuildFinished;
  /** The surface's view, ended with the build (undefined: not followed). */
  live?: LiveView;
  /** Why it was cancelled: the view's word first, else the record of stop requests. */
  reason?: CancelReason;
}

/**
 * Starts a build and follows it to its end. Rejects with StoppedBeforeStart (see startStopped),
 * with what startBuild throws (nothing was started), or with what waitForResult throws (the view
 * is unsubscribed first).
 */
export async function runBuild(service: BuildServiceApi, input: StartBuildInput, opts: RunBuildOptions = {}): Promise<BuildRun> {
  const stop = opts.stop ?? new RunStop();
  if (stop.asked() && !opts.startStopped) throw new StoppedBeforeStart();
  const record = await service.startBuild(input);
  const id = record.id;
  await opts.onStarted?.(record);
  let live: LiveView | undefined;
  if (opts.follow) {
    try {
      live = opts.follow(record);
    } catch (e) {
      if (!opts.onFollowError) throw e;
      opts.onFollowError(e, record);
    }
  }
  // Requests that came while startBuild (or onStarted) ran are sent now: no event would tell them.
  stop.attach(service, [id]);
  let finished: BuildFinished;
  try {
    finished = await service.waitForResult(id);
  } catch (e) {
    live?.unsubscribe();
    throw e;
  }
  opts.onEnded?.(finished);
  if (live) {
    await opts.drain?.(live);
    live.unsubscribe();
    // The outcome is the view's too (it may not have come through the stream: a worker that died first).
    live.end(finished);
  }
  // The service puts a build.cancelling event (with its reason) into every cancelled build's
  // stream, and the view keeps it; what this process asked for stands in when none reached it.
  const reason = live?.view.cancelling?.reason ?? stop.reasons.get(id);
  // Kept for later questions (get_build) after the service has forgotten the build's view.
  if (reason) stop.reasons.note(id, reason);
  return { record, finished, ...(live ? { live } : {}), ...(reason ? { reason } : {}) };
}

/**
 * Starts a build that the caller will not wait for (MCP's start_build: the agent polls). Its
 * cancel reasons still reach the record, from the build's own events, until it ends.
 */
export async function startBuildUnfollowed(service: BuildServiceApi, input: StartBuildInput, reasons: CancelReasons, log?: (line: string) => void): Promise<BuildRecord> {
  const record = await service.startBuild(input);
  const id = record.id;
  try {
    const sub = service.subscribe(id, (events) => {
      for (const ev of events) {
        if (ev.type === 'build.cancelling') reasons.note(id, ev.reason);
        if (ev.type === 'build.finished') queueMicrotask(() => sub.unsubscribe());
      }
    });
    if (sub.snapshot.outcome) sub.unsubscribe();
  } catch (e) {
    log?.(`cannot follow build ${id}: ${(e as Error).message}`);
  }
  return record;
}
