// build_matrix (a build farm's MCP server only): one model and options, one build per target, all
// followed to their ends in one tool call. Each build is reported as build_engine reports one
// (status, durations, engine, cache figures, slowest phases), with the target it ran for; while
// they run, a progress notification says each ending ("2 of 3 ended: gpu=NVIDIA_L4 succeeded").
// Cancelling the request cancels every build of the matrix.
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../service/api.js';
import type { BuildToolDeps, ToolExtra } from './build-tool.js';
import { resolveUserPath } from '../surface/user-path.js';
import { formatTarget, MatrixTargets } from '../surface/farm-builds.js';
import { RunStop, StoppedBeforeStart } from '../surface/run-build.js';
import { runMatrix } from '../surface/run-matrix.js';
import { errorResult, okResult, resultForError } from './tool-results.js';
import { BuildArgs, parseBuildOptions } from '../surface/schemas.js';

export { MatrixOut } from '../surface/farm-builds.js';

export const MatrixArgs = BuildArgs.omit({ target: true, outputPath: true }).extend({ targets: MatrixTargets });

export async function runMatrixTool(deps: BuildToolDeps, args: z.infer<typeof MatrixArgs>, extra: ToolExtra): Promise<CallToolResult> {
  const { service } = deps;
  if (!service.startMatrix) return errorResult('targets: only a build farm routes builds (start the MCP server with --queue redis://host:port)');
  let options;
  try {
    options = parseBuildOptions(args.options);
  } catch (e) {
    return resultForError(e, 'Cannot start the builds');
  }
  const token = extra._meta?.progressToken;
  let ids: readonly string[] = [];
  const notify = (progress: number, message: string) =>
    token === undefined
      ? undefined
      : extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: ids.length, message, _meta: { 'trt-build-studio/buildIds': ids } },
          })
          .catch(() => undefined);
  // Cancelling the request cancels every build of the matrix, also while the farm is queueing them.
  const stop = new RunStop(deps.reasons);
  const onAbort = () => void stop.request('user', 'request');
  extra.signal.addEventListener('abort', onAbort, { once: true });
  let out;
  try {
    ({ result: out } = await runMatrix(
      service,
      {
        modelPath: resolveUserPath(args.modelPath),
        options,
        timeBudgetSeconds: args.timeBudgetSeconds,
        targets: args.targets,
        ...(args.retries !== undefined ? { retries: args.retries } : {}),
      },
      {
        stop,
        onStarted: (started) => {
          ids = started;
          deps.log?.(`matrix of ${ids.length} builds started: ${ids.join(', ')}`);
          void notify(0, `${ids.length} builds queued: ${args.targets.map(formatTarget).join('; ')}`);
        },
        onEnded: (e) => void notify(e.ended, `${e.ended} of ${e.total} ended: ${formatTarget(e.target)} ${e.finished.status}`),
      },
    ));
  } catch (e) {
    if (e instanceof StoppedBeforeStart) return errorResult('The request was cancelled before the builds started.');
    if (ids.length === 0) return resultForError(e, 'Cannot start the builds');
    return resultForError(e instanceof ServiceError ? e : new Error(String(e)), 'The builds could not be followed to their end');
  } finally {
    extra.signal.removeEventListener('abort', onAbort);
  }
  return out.succeeded === out.total ? okResult(out, out.message) : errorResult(out.message, out);
}
