// Types of the native addon's JS API (implemented in ./addon.ts). Only the worker process loads
// the addon; everything else talks to a worker.
import type { WireEvent } from '../shared/event-lines.js';
import type { BackendInfo, BackendName, BuildEvent, BuildFinished, BuildOptions, CancelReason, LayerInfo, ModelSummary, PhaseNode } from '../shared/protocol.js';

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

export interface NativeBackPressure {
  outboxBytes: number;
  outboxPeakBytes: number;
  outboxHighBytes: number;
  /** What may still arrive once the bound is passed (bounded_outbox.h's inFlightBytes). */
  inFlightBytes: number;
  gateClosings: number;
  builderWaitedMs: number;
}

export interface NativeBuildHandle {
  readonly buildId: string;
  /** Sets the cancel flag; stepComplete returns false at the next step. Idempotent. */
  cancel(reason?: CancelReason): void;
  /** The current phase tree (from the native tracker). */
  snapshot(): PhaseNode[];
  /**
   * Back-pressure: while held, the native layer keeps events in its outbox (steps coalescing,
   * the rest compact in native memory) and delivers nothing, the final batch included.
   * Absent from addons built before it existed.
   */
  hold?(on: boolean): void;
  /**
   * The native hop's bound (native/src/core/bounded_outbox.h): what the outbox holds now and at
   * most, its bound in bytes, how often the builder threads were made to wait at it and for how
   * long in all. Absent from addons built before it existed.
   */
  backPressure?(): NativeBackPressure;
  /** Resolves with the final event once the builder has unwound; never rejects. */
  readonly result: Promise<BuildFinished>;
}

/** One reading of the GPU's utilisation, or why there is none (`permanent`: asking again will not help). */
export type GpuSample =
  | {
      gpuPercent: number;
      memoryPercent: number;
      /** Device memory this process holds (NVML's compute-process list); absent when NVML cannot say. */
      processMemoryBytes?: number;
      /** Why processMemoryBytes is absent (NVML does not list this process in its PID namespace, …). */
      processMemoryUnknown?: string;
      /** Used without the driver's reserve where memoryInfoVersion is 2 (as nvidia-smi shows it). */
      deviceUsedBytes?: number;
      deviceTotalBytes?: number;
      deviceReservedBytes?: number;
      /** deviceUsedBytes minus its value at the probe's first sample (everyone's allocations), floored at 0. */
      deviceUsedDeltaBytes?: number;
      /** Which nvmlDeviceGetMemoryInfo gave the device figures: 2 (_v2) or 1 (older drivers). */
      memoryInfoVersion?: number;
      /** Counts the sampler thread's samples (sample() returns the latest; NVML is not called). */
      sampleNumber?: number;
      smClockMhz?: number;
      temperatureC?: number;
    }
  | { error: string; permanent: boolean };

/** A GPU probe through NVML (native/src/gpu/gpu_probe.h), or why there is none. */
export type GpuProbeOpen = { ok: true; busId: string; sample(): GpuSample; close(): void } | { ok: false; reason: string };

export interface NativeAddonApi {
  /** Runs the probe off the JS thread. */
  listBackends(): Promise<BackendInfo[]>;
  /** `onEvents` receives batches in seq order; the last batch ends with build.finished. */
  startBuild(request: NativeBuildRequest, onEvents: (events: BuildEvent[]) => void): NativeBuildHandle;
  /**
   * startBuild in the build worker's wire form (apps/shared/event-lines.ts): phase.start,
   * phase.step and phase.finish arrive as their JSON text, written by the addon, the rest as
   * objects. What the worker sends its host is the same either way.
   */
  startWireBuild?(request: NativeBuildRequest, onEvents: (events: WireEvent[]) => void): NativeBuildHandle;
  /** The GPU utilisation of CUDA device `device` (absent from addons built before it existed). */
  openGpuProbe?(device: number, periodMs?: number): GpuProbeOpen;
  /**
   * TensorRT 11.1+: the library's build-route list, the JSON of IBuilderConfig::getAllBuildRoutes
   * as TensorRT returns it. Read only when asked (it creates a builder: seconds and GBs), off the
   * JS thread, and kept on disk keyed by the library file and GPU, so the next listBackends()
   * reports the routes without a builder. Rejects with the reason when there are none.
   */
  readBuildRoutes?(): Promise<string>;
  /** Makes fd 2 of this process the given file (see native/src/addon/stderr_file.h). */
  redirectStderrToFile?(path: string): void;
}
