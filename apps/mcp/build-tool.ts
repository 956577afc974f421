// The build_engine tool: one tool call = one build, from start to its final state. While it runs,
// progress notifications follow the phase tree; a notifications/cancelled for the request (the SDK
// aborts extra.signal) or an exhausted time budget stops it at the next step boundary. The run
// itself (start, follow, stop, wait) is the shared one (apps/surface/run-build.ts).
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { BuildServiceApi, StartBuildInput } from '../service/api.js';
import type { CancelReasons } from '../surface/cancel-reasons.js';
import { RunStop, runBuild, startBuildUnfollowed, StoppedBeforeStart } from '../surface/run-build.js';
import { resolveUserPath } from '../surface/user-path.js';
import { ProgressNotifier, type NotifierOptions } from '../surface/progress-notifier.js';
import { buildResult } from '../surface/build-result.js';
import { errorResult, okResult, resultForError } from './tool-results.js';
import { parseBuildOptions, type BuildArgs } from '../surface/schemas.js';
import { farmFields as sharedFarmFields } from '../surface/farm-builds.js';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const FINAL_NOTIFICATION_GAP_MS = 25;

export interface BuildToolDeps {
  service: BuildServiceApi;
  reasons: CancelReasons;
  /** Pacing of progress notifications (tests shorten the heartbeat). */
  notifier?: Pick<NotifierOptions, 'minIntervalMs' | 'heartbeatMs' | 'silentAfterMs'>;
  log?: (line: string) => void;
}

/**
 * start_build: queues the build and returns at once, for agents that poll get_build instead of
 * holding a request open. Cancel reasons are still recorded, from the build's own events.
 */
export async function startBuildTool(deps: BuildToolDeps, args: z.infer<typeof BuildArgs>): Promise<CallToolResult> {
  const { service, reasons } = deps;
  let record;
  try {
    record = await startBuildUnfollowed(service, buildInput(service, args, parseBuildOptions(args.options)), reasons, deps.log);
  } catch (e) {
    return resultForError(e, 'Cannot start the build');
  }
  const id = record.id;
  deps.log?.(`build ${id} started for ${record.modelPath} (not waited for)`);
  const message = `Build ${id} is ${record.state}; poll get_build with id "${id}" for its progress and outcome, cancel_build to stop it.`;
  return okResult({ buildId: id, state: record.state, ...(record.outputPath ? { outputPath: record.outputPath } : {}), message }, message);
}

export async function runBuildTool(deps: BuildToolDeps, args: z.infer<typeof BuildArgs>, extra: ToolExtra): Promise<CallToolResult> {
  const { service, reasons } = deps;
  const log = deps.log ?? (() => {});
  let input;
  try {
    input = buildInput(service, args, parseBuildOptions(args.options));
  } catch (e) {
    return resultForError(e, 'Cannot start the build');
  }

  const token = extra._meta?.progressToken;
  let notifier: ProgressNotifier | undefined;
  let id = '';
  const stop = new RunStop(reasons, {
    send: (_request, send) => {
      // The SDK drops notifications and the response of a cancelled request; only the build matters now.
      notifier?.stop();
      const accepted = send();
      log(`build ${id}: request cancelled by the client, cancel ${accepted ? 'sent' : 'not needed (already finished)'}`);
      return accepted;
    },
  });
  // Asked while the build is being started: sent once it has an id (no event would tell it).
  const onAbort = () => void stop.request('user', 'request');
  if (extra.signal.aborted) onAbort();
  else extra.signal.addEventListener('abort', onAbort, { once: true });

  let run;
  try {
    run = await runBuild(service, input, {
      stop,
      onStarted: (record) => {
        id = record.id;
        log(`build ${id} started for ${record.modelPath}`);
        // Without a progress token nothing is sent, but the notifier's build view still follows the
        // build: the result's phase summary and crash site come from it.
        notifier = new ProgressNotifier({
          ...deps.notifier,
          buildId: id,
          // Only a build that waits behind another says so: one that is merely starting its worker
          // (no other build running or queued before it) must not claim a wait.
          waitingBehind: () =>
            service.listBuilds().some((b) => b.id !== id && (b.state === 'running' || b.state === 'cancelling' || (b.state === 'queued' && b.queuedAt < record.queuedAt))),
          send: (u) =>
            token === undefined
              ? undefined
              : // The build id rides along in _meta so an agent can poll or cancel it by id.
                extra
                  .sendNotification({
                    method: 'notifications/progress',
                    params: { progressToken: token, ...u, _meta: { 'trt-build-studio/buildId': id } },
                  })
                  .catch((e: unknown) => log(`progress notification for ${id} not sent: ${(e as Error).message}`)),
        });
      },
      // The notifier's live view follows the build (apps/shared/live-view.ts): the snapshot first and
      // each event once, also when events arrive while subscribe() is still returning its snapshot.
      follow: () => {
        const live = notifier!.live.follow(service);
        if (token !== undefined) notifier!.start();
        return live;
      },
      onFollowError: (e) => {
        log(`cannot follow build ${id}: ${(e as Error).message}`);
        if (token !== undefined) notifier!.start();
      },
    }).finally(() => extra.signal.removeEventListener('abort', onAbort));
  } catch (e) {
    if (e instanceof StoppedBeforeStart) return errorResult('The request was cancelled before the build started.');
    notifier?.stop();
    return resultForError(e, id ? `Build ${id} could not be followed to its end` : 'Cannot start the build');
  }
  const { finished: outcome, reason } = run;
  const n = notifier!;
  n.ended(outcome); // done by the run when the view was followed; its outcome all the same when not
  const result = buildResult(service.getBuild(id), outcome, reason, args.timeBudgetSeconds, n.view);
  log(result.message);
  if (token === undefined) n.stop();
  else {
    await n.finish(result.message, outcome.status === 'succeeded');
    // The SDK client dispatches notifications a microtask late but responses at once, so a final
    // notification read in the same chunk as the response is dropped as "unknown token"
    // (modelcontextprotocol/typescript-sdk#2580). A short pause keeps them in separate reads.
    await new Promise((r) => setTimeout(r, FINAL_NOTIFICATION_GAP_MS));
  }
  if (outcome.status === 'failed' || outcome.status === 'crashed') return errorResult(result.message, result);
  return okResult(result, result.message);
}

/** The service's input for a build of these arguments (paths resolved as the user meant them). */
function buildInput(service: BuildServiceApi, args: z.infer<typeof BuildArgs>, options: ReturnType<typeof parseBuildOptions>): StartBuildInput {
  return {
    modelPath: resolveUserPath(args.modelPath),
    outputPath: args.outputPath === undefined ? undefined : resolveUserPath(args.outputPath),
    options,
    timeBudgetSeconds: args.timeBudgetSeconds,
    ...farmFields(service, args),
  };
}

/** target/retries only mean something to a build farm (mcp --queue); a local build refuses them. */
function farmFields(service: BuildToolDeps['service'], args: z.infer<typeof BuildArgs>): { target?: Record<string, string>; retries?: number } {
  return sharedFarmFields(service, args, 'start the MCP server with --queue redis://host:port');
}
