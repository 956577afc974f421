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

/** One reading of the GPU's utilisation, or why there is none (`permanent`: asking again will not help). */
export type GpuSample = { gpuPercent: number; memoryPercent: number } | { error: string; permanent: boolean };

/** A GPU probe through NVML (native/src/gpu/gpu_probe.h), or why there is none. */
export type GpuProbeOpen =
  | { ok: true; busId: string; sample(): GpuSample; close(): void }
  | { ok: false; reason: string };

export interface NativeAddonApi {
  /** Runs the probe off the JS thread. */
  listBackends(): Promise<BackendInfo[]>;
  /** `onEvents` receives batches in seq order; the last batch ends with build.finished. */
  startBuild(request: NativeBuildRequest, onEvents: (events: BuildEvent[]) => void): NativeBuildHandle;
  /** The GPU utilisation of CUDA device `device` (absent from addons built before it existed). */
  openGpuProbe?(device: number): GpuProbeOpen;
  /** Makes fd 2 of this process the given file (see native/src/addon/stderr_file.h). */
  redirectStderrToFile?(path: string): void;
}
