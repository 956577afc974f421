// build_matrix (a build farm's MCP server only): one model and options, one build per target, all
// followed to their ends in one tool call. Each build is reported as build_engine reports one
// (status, durations, engine, cache figures, slowest phases), with the target it ran for; while
// they run, a progress notification says each ending ("2 of 3 ended: gpu=NVIDIA_L4 succeeded").
// Cancelling the request cancels every build of the matrix.
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../service/api.js';
import { BuildView } from '../shared/build-view.js';
import type { BuildFinished } from '../shared/protocol.js';
import type { BuildToolDeps, ToolExtra } from './build-tool.js';
import { resolveUserPath } from '../surface/user-path.js';
import { buildResult } from '../surface/build-result.js';
import { errorResult, okResult, resultForError } from './tool-results.js';
import { BuildArgs, BuildResultOut, parseBuildOptions } from '../surface/schemas.js';

export const MatrixArgs = BuildArgs.omit({ target: true, outputPath: true }).extend({
  targets: z
    .array(z.record(z.string(), z.string()))
    .min(1)
    .max(64)
    .describe('One build per target: labels the build machine must have, e.g. [{"gpu": "NVIDIA_L4"}, {"gpu": "NVIDIA_A100-SXM4-80GB"}].'),
});

export const MatrixOut = z.object({
  message: z.string(),
  succeeded: z.number().int(),
  total: z.number().int(),
  builds: z.array(BuildResultOut.extend({ target: z.record(z.string(), z.string()) })),
});

const formatTarget = (t: Record<string, string>) =>
  Object.entries(t)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

export async function runMatrixTool(deps: BuildToolDeps, args: z.infer<typeof MatrixArgs>, extra: ToolExtra): Promise<CallToolResult> {
  const { service, reasons } = deps;
  if (!service.startMatrix) return errorResult('targets: only a build farm routes builds (start the MCP server with --queue redis://host:port)');
  let records;
  try {
    records = await service.startMatrix({
      modelPath: resolveUserPath(args.modelPath),
      options: parseBuildOptions(args.options),
      timeBudgetSeconds: args.timeBudgetSeconds,
      targets: args.targets,
      ...(args.retries !== undefined ? { retries: args.retries } : {}),
    });
  } catch (e) {
    return resultForError(e, 'Cannot start the builds');
  }
  const ids = records.map((r) => r.id);
  deps.log?.(`matrix of ${ids.length} builds started: ${ids.join(', ')}`);
  const token = extra._meta?.progressToken;
  let ended = 0;
  const notify = (message: string) =>
    token === undefined
      ? undefined
      : extra
          .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ended, total: ids.length, message, _meta: { 'trt-build-studio/buildIds': ids } } })
          .catch(() => undefined);
  void notify(`${ids.length} builds queued: ${args.targets.map(formatTarget).join('; ')}`);
  const onAbort = () => {
    for (const id of ids) {
      reasons.note(id, 'user');
      service.cancelBuild(id, 'user');
    }
  };
  extra.signal.addEventListener('abort', onAbort, { once: true });
  const subs = ids.map((id) => {
    try {
      return service.subscribe(id, (events) => {
        for (const ev of events) if (ev.type === 'build.cancelling') reasons.note(id, ev.reason);
      });
    } catch {
      return undefined;
    }
  });
  let outcomes: BuildFinished[];
  try {
    outcomes = await Promise.all(
      ids.map((id, i) =>
        service.waitForResult(id).then((f) => {
          ended++;
          void notify(`${ended} of ${ids.length} ended: ${formatTarget(args.targets[i])} ${f.status}`);
          return f;
        }),
      ),
    );
  } catch (e) {
    return resultForError(e instanceof ServiceError ? e : new Error(String(e)), 'The builds could not be followed to their end');
  } finally {
    extra.signal.removeEventListener('abort', onAbort);
    for (const s of subs) s?.unsubscribe();
  }
  const builds = ids.map((id, i) => {
    const view = service.getView?.(id);
    return { ...buildResult(service.getBuild(id), outcomes[i], reasons.get(id), args.timeBudgetSeconds, view ? BuildView.fromSnapshot(view) : undefined), target: args.targets[i] };
  });
  const succeeded = builds.filter((b) => b.status === 'succeeded').length;
  const message = `${succeeded} of ${builds.length} builds succeeded: ${builds.map((b) => `${formatTarget(b.target)} ${b.status}`).join('; ')}`;
  const out = { message, succeeded, total: builds.length, builds };
  return succeeded === builds.length ? okResult(out, message) : errorResult(message, out);
}
