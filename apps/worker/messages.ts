// Messages between a build worker and its host (Electron utilityProcess or a Node child process).
// Both sides validate what they receive: a worker is a separate process that may be mid-crash,
// and the host may be a different build of the app than the worker.
import { z } from 'zod';
import { BackendInfo, BackendName, BuildEvent, BuildFinishedEvent, BuildOptions, CancelReason, LayerInfo, ModelSummary } from '../shared/protocol.js';
import type { NativeBuildRequest } from './native-api.js';

export const NativeBuildRequestSchema = z.object({
  buildId: z.string().min(1),
  backend: BackendName,
  modelPath: z.string().min(1),
  outputPath: z.string().min(1),
  options: BuildOptions,
  layers: z.array(LayerInfo),
  model: ModelSummary.optional(),
  simThreads: z.number().int().positive().optional(),
  simHangMs: z.number().int().nonnegative().optional(),
  heartbeatMs: z.number().int().positive().optional(),
  crashRecordPath: z.string().min(1).optional(),
});

export const ParentToWorker = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), request: NativeBuildRequestSchema }),
  z.object({ type: z.literal('cancel'), reason: CancelReason }),
  z.object({ type: z.literal('backends') }),
  /**
   * The TensorRT library's knob database (getAllBuildRoutes(), 11.1+), read by the addon off the
   * JS thread and kept on disk: the worker answers `buildRoutes` or `error`, then exits on release.
   */
  z.object({ type: z.literal('buildRoutes') }),
  /** The host has the result (or backend list): the worker may exit now. */
  z.object({ type: z.literal('release') }),
  /**
   * The host took the last `events` message in and its pacing subscribers (a --json stdout) are
   * below their byte bounds. At most a few messages (the worker's ACK_WINDOW) go unacknowledged;
   * steps coalesce in the worker meanwhile (explicit back-pressure, not a growing channel queue).
   */
  z.object({ type: z.literal('ack') }),
]);
export type ParentToWorker = z.infer<typeof ParentToWorker>;

export const WorkerToParent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), pid: z.number().int() }),
  /** Batched in the worker (one batch per pacing budget, PACING_BUDGET_MS = 8 ms, or 500 events), in seq order. */
  z.object({ type: z.literal('events'), events: z.array(BuildEvent) }),
  /**
   * The same batch as JSON, one string per event (event-lines.ts): what the worker sends. The
   * host validates each event when it parses them (decodeEventLines), as it does `events`.
   */
  z.object({ type: z.literal('eventLines'), lines: z.array(z.string()) }),
  z.object({ type: z.literal('result'), finished: BuildFinishedEvent }),
  z.object({ type: z.literal('backends'), list: z.array(BackendInfo) }),
  /** getAllBuildRoutes()' JSON as the library returned it (the answer to `buildRoutes`). */
  z.object({ type: z.literal('buildRoutes'), json: z.string() }),
  /** The worker could not run the build at all (addon failed to load, bad request...). */
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type WorkerToParent = z.infer<typeof WorkerToParent>;

// Keeps the schema and the addon's TypeScript request type from drifting apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const requestMatches: Same<z.infer<typeof NativeBuildRequestSchema>, NativeBuildRequest> = true;
void requestMatches;

/**
 * The environment variable a host sets to the file the worker's stderr should go to as well
 * (stderr-file.ts: the Electron launcher needs it). Part of the host contract, with the messages.
 */
export const WORKER_STDERR_FILE_ENV = 'TBS_WORKER_STDERR_FILE';
