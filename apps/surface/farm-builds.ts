// What the agent and editor surfaces (MCP's build_engine/build_matrix, the language server's
// trtBuildStudio.build) share about builds on a farm: the target/retries check, and a matrix (one
// build per target) followed to the end of every build, each reported as a single build is
// (status, durations, engine, cache figures, slowest phases) with the target it ran for. The
// surfaces differ only in how they show progress and cancellation, which they pass in; a matrix
// is started and stopped through run-matrix.ts.
import { z } from 'zod';
import { ServiceError, type BuildServiceApi } from '../service/api.js';
import { BuildView } from '../shared/build-view.js';
import type { BuildFinished } from '../shared/protocol.js';
import type { CancelReasons } from './cancel-reasons.js';
import { buildResult } from './build-result.js';
import { BuildResultOut } from './schemas.js';

export type Target = Record<string, string>;

export const MatrixTargets = z
  .array(z.record(z.string(), z.string()))
  .min(1)
  .max(64)
  .describe('One build per target: labels the build machine must have, e.g. [{"gpu": "NVIDIA_L4"}, {"gpu": "NVIDIA_A100-SXM4-80GB"}].');

export const MatrixOut = z.object({
  message: z.string(),
  succeeded: z.number().int(),
  total: z.number().int(),
  builds: z.array(BuildResultOut.extend({ target: z.record(z.string(), z.string()) })),
});
export type MatrixResult = z.infer<typeof MatrixOut>;

export const formatTarget = (t: Target) =>
  Object.entries(t)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/**
 * target/retries only mean something to a build farm; a service that builds locally refuses
 * them. `startHint` says how to start this surface on a farm ("start the MCP server with --queue
 * redis://host:port").
 */
export function farmFields(service: BuildServiceApi, args: { target?: Target; retries?: number }, startHint: string): { target?: Target; retries?: number } {
  if ((args.target || args.retries !== undefined) && !service.startMatrix) {
    throw new ServiceError('bad_input', `${args.target ? 'target' : 'retries'}: only a build farm routes builds (${startHint})`);
  }
  return { ...(args.target ? { target: args.target } : {}), ...(args.retries !== undefined ? { retries: args.retries } : {}) };
}

/** One build of a matrix has ended (`ended` of `total` so far). */
export interface MatrixEnding {
  index: number;
  id: string;
  target: Target;
  finished: BuildFinished;
  ended: number;
  total: number;
}

export interface MatrixDeps {
  service: BuildServiceApi;
  reasons: CancelReasons;
}

/**
 * Follows the builds of a matrix (ids in the targets' order) to their ends: `onEnded` for each
 * ending as it comes, then every build's result. Rejects only when a build cannot be followed.
 */
export async function followMatrix(
  deps: MatrixDeps,
  ids: readonly string[],
  targets: readonly Target[],
  opts: { timeBudgetSeconds?: number; onEnded?: (e: MatrixEnding) => void } = {},
): Promise<MatrixResult> {
  const { service, reasons } = deps;
  // Cancel reasons come as events (a time budget, the host's memory): noted as each build says.
  const subs = ids.map((id) => {
    try {
      return service.subscribe(id, (events) => {
        for (const ev of events) if (ev.type === 'build.cancelling') reasons.note(id, ev.reason);
      });
    } catch {
      return undefined;
    }
  });
  let ended = 0;
  let outcomes: BuildFinished[];
  try {
    outcomes = await Promise.all(
      ids.map((id, index) =>
        service.waitForResult(id).then((finished) => {
          ended++;
          opts.onEnded?.({ index, id, target: targets[index], finished, ended, total: ids.length });
          return finished;
        }),
      ),
    );
  } finally {
    for (const s of subs) s?.unsubscribe();
  }
  const builds = ids.map((id, i) => {
    const view = service.getView?.(id);
    return { ...buildResult(service.getBuild(id), outcomes[i], reasons.get(id), opts.timeBudgetSeconds, view ? BuildView.fromSnapshot(view) : undefined), target: targets[i] };
  });
  const succeeded = builds.filter((b) => b.status === 'succeeded').length;
  const message = `${succeeded} of ${builds.length} builds succeeded: ${builds.map((b) => `${formatTarget(b.target)} ${b.status}`).join('; ')}`;
  return { message, succeeded, total: builds.length, builds };
}
