// A matrix on a build farm (MCP's build_matrix, the language server's trtBuildStudio.build with
// targets): one build per target, started together and followed to the end of every build, with
// the stop requests of one run (apps/surface/run-build.ts) reaching all of them.
import type { BuildServiceApi, StartBuildInput } from '../service/api.js';
import { RunStop, StoppedBeforeStart } from './run-build.js';
import { followMatrix, type MatrixEnding, type MatrixResult, type Target } from './farm-builds.js';

export type MatrixInput = Omit<StartBuildInput, 'target' | 'outputPath'> & { targets: Target[] };

export interface RunMatrixOptions {
  stop?: RunStop;
  /** The builds were accepted (ids in the targets' order), before they are followed. */
  onStarted?(ids: readonly string[]): void | Promise<void>;
  /** One build of the matrix has ended. */
  onEnded?(e: MatrixEnding): void;
}

/**
 * A matrix on a build farm: one build per target, started together and followed to the end of
 * every build (apps/surface/farm-builds.ts), each reported as a single build is. A stop stops
 * every build of it; one asked before the farm returned the ids is sent once it has. Rejects with
 * StoppedBeforeStart (a stop asked before anything was started), with what startMatrix throws,
 * or when a build cannot be followed.
 */
export async function runMatrix(service: BuildServiceApi, input: MatrixInput, opts: RunMatrixOptions = {}): Promise<{ ids: string[]; result: MatrixResult }> {
  if (!service.startMatrix) throw new Error('runMatrix needs a build farm (service.startMatrix)');
  const stop = opts.stop ?? new RunStop();
  if (stop.asked()) throw new StoppedBeforeStart();
  const records = await service.startMatrix(input);
  const ids = records.map((r) => r.id);
  await opts.onStarted?.(ids);
  stop.attach(service, ids);
  const result = await followMatrix({ service, reasons: stop.reasons }, ids, input.targets, {
    timeBudgetSeconds: input.timeBudgetSeconds,
    onEnded: opts.onEnded,
  });
  return { ids, result };
}
