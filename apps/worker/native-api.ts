// Types of the native addon's JS API (implemented in ./addon.ts). Only the worker process loads
// the addon; everything else talks to a worker.
import type {
  BackendInfo,
  BackendName,
  BuildEvent,
  BuildFinished,
  BuildOptions,
  CancelReason,
  LayerInfo,
  ModelSummary,
  PhaseNode,
} from '../shared/protocol.js';

export interface NativeBuildRequest {
  buildId: string;
  /** Resolved backend (never "auto"). */
  backend: BackendName;
  modelPath: string;
  /** Final engine path; written atomically (temp file + rename). Nothing on cancel/failure. */
  outputPath: string;
  options: BuildOptions;
  /** Layer list from the model reader: drives the simulated tree's size and names. */
  layers: LayerInfo[];
  /** Passed through into build.started. */
  model?: ModelSummary;
  /** Simulated backend: builder threads (default 4). */
  simThreads?: number;
  /** Simulated backend: how long a `hang` fault blocks a step unless cancelled (default 60 s). */
  simHangMs?: number;
  /** Heartbeat cadence in ms (default 1000). */
  heartbeatMs?: number;
  /**
   * A file the native layer keeps the open phase path in while the build runs (memory-mapped,
   * so it survives the worker's death); the host reads it when the worker crashes.
   */
  crashRecordPath?: string;
}

export interface NativeBuildHandle {
  readonly buildId: string;
  /** Sets the cancel flag; stepComplete returns false at the next step. Idempotent. */
  cancel(reason?: CancelReason): void;
  /** The current phase tree (from the native tracker). */
  snapshot(): PhaseNode[];
  /** Resolves with the final event once the builder has unwound; never rejects. */
  readonly result: Promise<BuildFinished>;
}

export interface NativeAddonApi {
  /** Runs the probe off the JS thread. */
  listBackends(): Promise<BackendInfo[]>;
  /** `onEvents` receives batches in seq order; the last batch ends with build.finished. */
  startBuild(request: NativeBuildRequest, onEvents: (events: BuildEvent[]) => void): NativeBuildHandle;
}
