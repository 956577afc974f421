// The one event protocol of TRT Build Studio. Every surface (CLI --json, SSE, Electron IPC, MCP)
// carries exactly these objects, and every process boundary validates them with these schemas.
// This module must stay free of Node and DOM imports: it runs in the renderer, the worker,
// the service and Electron main alike.
import { z } from 'zod';
import { BuildOptions } from './build-options.js';
import { OPTION_LIMITS } from './option-limits.js';
import { Precision } from './option-values.js';

export { OPTION_LIMITS };
export { BuildOptions, type BuildOptionsInput } from './build-options.js';
export { BackendChoice, formatShapeRange, parseShapeSpec, parseSimFault, Precision, ShapeRange, ShapeValueRange, SimFault, SimFaultKind } from './option-values.js';

/** Bumped on any incompatible change; carried by every event as `v`. */
export const PROTOCOL_VERSION = 1 as const;

// ───────────────────────────── building blocks ─────────────────────────────

export const BackendName = z.enum(['tensorrt', 'simulated']);
export type BackendName = z.infer<typeof BackendName>;

/**
 * What the TensorRT release a backend builds with can do, as the native layer computes it from its
 * one list of TensorRT facts (native/trt-facts.json, native/src/trt/trt_capabilities.h): for
 * tensorrt, of the release it drives (the older of the found library and the adapter's headers);
 * for the simulator, of the release it imitates. TypeScript reads these (trt-capabilities.ts) and
 * keeps no version gates of its own.
 */
export const BackendCapabilities = z.object({
  /** The release they were computed for, e.g. "10.3.0". */
  version: z.string(),
  /** Weakly typed precision flags (BuilderFlag kFP16 ...) it has; none once weak typing is removed (11). */
  precisions: z.array(Precision),
  /** Flags that exist but are deprecated themselves (kINT4/kFP4 only enable plugin I/O types, 10.12+). */
  deprecatedPrecisions: z.array(Precision),
  /** Every weakly typed precision flag is deprecated (10.12+); builds warn for each. */
  weakTypingDeprecated: z.boolean(),
  /** Weak typing is gone (11): every network is strongly typed. */
  stronglyTypedImplied: z.boolean(),
  /** The hardware compatibility levels it has. */
  hardwareCompatibility: z.array(BuildOptions.shape.hardwareCompatibility.unwrap()),
  /** IBuilderConfig::setBuildRoute (11.1+). */
  buildRoutes: z.boolean(),
  /** ITimingCache::queryKeys (10.8+), so timing-cache entry counts can be reported. */
  timingCacheKeyCount: z.boolean(),
  /** buildSerializedNetworkToStream (10.13+): the engine is not held in memory. */
  serializeToStream: z.boolean(),
  /** trtexec --best enables no INT8 on compute capability 10.3 (10.13+). */
  bestWithoutInt8OnCc103: z.boolean(),
});
export type BackendCapabilities = z.infer<typeof BackendCapabilities>;

export const BackendInfo = z.object({
  name: BackendName,
  available: z.boolean(),
  /** e.g. "10.16.1" for TensorRT, "sim-1" for the simulator. */
  version: z.string().optional(),
  /** Why it is unavailable ("libnvinfer.so.10 not found: ..."), when it is. */
  reason: z.string().optional(),
  /** Extra facts worth showing (library paths, compiled-against header version). */
  detail: z.record(z.string(), z.string()).optional(),
  /** tensorrt: the adapters this build of the addon can drive (one per TensorRT major). */
  adapters: z.array(z.object({ major: z.number().int(), headerVersion: z.string() })).optional(),
  /** tensorrt: the libnvinfer that was found, and its version (getInferLibVersion). */
  library: z.object({ path: z.string(), version: z.string() }).optional(),
  /** tensorrt: the ONNX parser library that was found. */
  parser: z.object({ path: z.string(), version: z.string() }).optional(),
  /** tensorrt: the adapter that drives the found library. */
  adapter: z.object({ major: z.number().int(), headerVersion: z.string(), path: z.string() }).optional(),
  /** tensorrt: libraries preloaded from TBS_TRT_LIB_DIR (CUDA runtime, builder resources). */
  preloaded: z.array(z.object({ path: z.string(), version: z.string().optional() })).optional(),
  /**
   * The GPU builds run on (device 0 unless a build asks for another), when known. `uuid`:
   * tensorrt, the CUDA driver's cuDeviceGetUuid(_v2) as nvidia-smi writes it ("GPU-…").
   */
  gpu: z.object({ name: z.string(), computeCapability: z.string(), device: z.number().int(), uuid: z.string().optional() }).optional(),
  /**
   * tensorrt: the CUDA driver (libcuda.so.1) and the newest CUDA version it supports
   * (cuDriverGetVersion, e.g. "13.0"). `problem` says when it is older than the CUDA runtime
   * TensorRT uses ("the CUDA driver is older than the library needs: ..."); the backend is then
   * unavailable when the major is older, and warns when only the minor is. `driverVersion`: the
   * NVIDIA driver's own version (NVML's nvmlSystemGetDriverVersion, "580.95.05"), when NVML is there.
   */
  cudaDriver: z.object({ path: z.string(), version: z.string(), problem: z.string().optional(), driverVersion: z.string().optional() }).optional(),
  /**
   * 11.1+: the knob database's allowed-value patterns ("-conv_use_long_w=[on|off]"), one per knob,
   * when the library lists them (the full JSON is detail.buildRoutesJson). Patterns, not routes: a
   * route picks one value per knob (apps/shared/build-routes.ts).
   */
  buildRoutes: z.array(z.string()).optional(),
  /**
   * The standard plugin library (libnvinfer_plugin.so.<major>) and the number of plugin creators
   * registered once it was initialized (initLibNvInferPlugins), when known.
   */
  plugins: z.object({ path: z.string().optional(), version: z.string().optional(), creators: z.number().int().optional() }).optional(),
  /**
   * simulated: the TensorRT version whose options it accepts and whose build it imitates
   * ("10.16.0" unless TBS_SIM_TRT_VERSION says otherwise), so version-dependent option handling
   * can be exercised without TensorRT.
   */
  emulates: z.string().optional(),
  /** What its TensorRT release can do (see BackendCapabilities); absent when no release is known. */
  capabilities: BackendCapabilities.optional(),
});
export type BackendInfo = z.infer<typeof BackendInfo>;

export const Severity = z.enum(['internal_error', 'error', 'warning', 'info', 'verbose']);
export type Severity = z.infer<typeof Severity>;

export const BuildStatus = z.enum(['succeeded', 'cancelled', 'failed', 'crashed']);
export type BuildStatus = z.infer<typeof BuildStatus>;

/** `memory`: the build passed its memory limit (maxHostMemory / maxGpuMemory) and was stopped. */
export const CancelReason = z.enum(['user', 'timeout', 'shutdown', 'memory']);
export type CancelReason = z.infer<typeof CancelReason>;

/** A dimension: a fixed size, or the symbolic name ONNX gives it ("batch"), or "?" when unnamed. */
export const Dim = z.union([z.number().int(), z.string()]);
export type Dim = z.infer<typeof Dim>;

export const TensorInfo = z.object({
  name: z.string(),
  /** ONNX element type name, lower case: "float32", "float16", "int64", ... */
  elemType: z.string(),
  shape: z.array(Dim),
  /**
   * The file declares no shape at all (not even a rank): `shape` is then [] without meaning a
   * scalar. Common for outputs left to shape inference; TensorRT builds such an input as 0-D.
   */
  rankUnknown: z.literal(true).optional(),
});
export type TensorInfo = z.infer<typeof TensorInfo>;

export const ModelSummary = z.object({
  path: z.string().optional(),
  fileName: z.string(),
  fileBytes: z.number().int().nonnegative(),
  irVersion: z.number().int(),
  opsetImports: z.array(z.object({ domain: z.string(), version: z.number().int() })),
  producer: z.object({ name: z.string(), version: z.string() }),
  graphName: z.string(),
  inputs: z.array(TensorInfo),
  outputs: z.array(TensorInfo),
  nodeCount: z.number().int().nonnegative(),
  opHistogram: z.record(z.string(), z.number().int()),
  /**
   * Weight bytes: initializers (inline and external), sparse initializers and Constant-node
   * tensors, also those inside If/Loop/Scan bodies.
   */
  initializerBytes: z.number().int().nonnegative(),
  externalData: z.object({
    files: z.array(z.string()),
    bytes: z.number().int().nonnegative(),
  }),
  /** Inputs with at least one non-fixed dimension; `dims` are the symbolic names (or "?"). */
  dynamicInputs: z.array(z.object({ name: z.string(), dims: z.array(z.string()) })),
  /**
   * Inputs that are probably shape tensors (int32/int64, rank 0 or 1, feeding a shape operand
   * such as Reshape's `shape`): they take values (shapeValues), not dims. A heuristic from the
   * graph; TensorRT decides for real at build time.
   */
  shapeTensorInputs: z.array(z.string()).optional(),
  /**
   * Operators of domains ONNX does not define ("com.example.MyOp"), first use order aside: sorted.
   * The model is not refused for them, but TensorRT builds them only with a plugin that
   * implements each one.
   */
  pluginOps: z.array(z.string()).optional(),
  /**
   * What the reader did that TensorRT's parser would do too, said so nobody is surprised: nodes
   * out of topological order sorted, model-local functions expanded (apps/service/model/model-check.ts).
   */
  notes: z.array(z.string()).optional(),
});
export type ModelSummary = z.infer<typeof ModelSummary>;

/** One layer as the simulated backend needs it (from the model reader). */
export const LayerInfo = z.object({ name: z.string(), op: z.string() });
export type LayerInfo = z.infer<typeof LayerInfo>;

// ─────────────────────────────── build options ──────────────────────────────
// The same camelCase names everywhere options travel: CLI flags map onto them, the HTTP body
// carries them, the MCP tool takes them, the options form edits them. BuildOptions is derived from
// the options table (build-options.ts); its value types live in option-values.ts.

// ──────────────────────────────── the phase tree ────────────────────────────

export const PhaseNode = z.object({
  id: z.number().int(),
  parentId: z.number().int().nullable(),
  name: z.string(),
  nbSteps: z.number().int(),
  /** n-th phase of this name under this parent (0-based). */
  instance: z.number().int(),
  stepsDone: z.number().int(),
  /** ms since build start. */
  startT: z.number(),
  endT: z.number().optional(),
  early: z.boolean().optional(),
});
export type PhaseNode = z.infer<typeof PhaseNode>;

// ─────────────────────────────────── events ─────────────────────────────────

const base = {
  v: z.literal(PROTOCOL_VERSION),
  buildId: z.string(),
  /** Rises by at least one per event of a build (gaps mean coalesced steps). */
  seq: z.number().int().nonnegative(),
  /** ms since build start, measured where the event originates (native layer for most). */
  t: z.number(),
};

export const CacheStats = z.object({
  entriesBefore: z.number().int(),
  entriesAfter: z.number().int(),
  added: z.number().int(),
  bytes: z.number().int(),
  /** Only where a backend can know them (the simulator can; TensorRT has no hit/miss API). */
  hits: z.number().int().optional(),
  misses: z.number().int().optional(),
  /** True when misses were inferred (e.g. counted "Autotuning op" log lines), not measured. */
  missesInferred: z.boolean().optional(),
  path: z.string().optional(),
  /** Why a cache file could not be used (corrupt, mismatched...): the build went on fresh. */
  warning: z.string().optional(),
  /**
   * Set when the lock on the cache file could not be had in time: the measured entries were kept
   * in this file beside the cache instead, and the next build that takes the lock merges them.
   */
  deferredPath: z.string().optional(),
  /** True when the build was cancelled (or ran out of time) and its measured entries were saved. */
  savedAfterCancel: z.boolean().optional(),
});
export type CacheStats = z.infer<typeof CacheStats>;

/** How much host memory the build will need, said before it starts (memory-estimate.ts). */
export const MemoryEstimate = z.object({
  peakHostBytes: z.number().int().nonnegative(),
  /** What it rests on, in words ("the peak of 3 earlier builds of this model with these options"). */
  basis: z.string(),
  /** What the worker may use now: the lower of its cgroup limit and MemAvailable, when known. */
  availableBytes: z.number().int().nonnegative().optional(),
  /** Set when the estimate is above what is available. */
  warning: z.string().optional(),
});
export type MemoryEstimate = z.infer<typeof MemoryEstimate>;

/**
 * A build this product did not start: a probe inside the user's program reported it (`watch`,
 * the drop-in monitors; docs/watch.md). What the probe could read, and nothing more: the model
 * file and most options are unknown to it.
 */
export const WatchedBuild = z.object({
  /** The program's executable or first argument, as the probe saw it. */
  program: z.string(),
  pid: z.number().int(),
  argv: z.array(z.string()),
  /** Which probe reported it: python-hook, python, cpp-shim, cpp. */
  probe: z.string(),
  /** The TensorRT call that built it ("Builder.build_serialized_network"). */
  api: z.string().optional(),
  /** The network as TensorRT handed it to the build, when the probe could read it. */
  network: z
    .object({
      name: z.string().optional(),
      layers: z.number().int().optional(),
      inputs: z.array(z.object({ name: z.string(), shape: z.array(Dim), dtype: z.string() })).optional(),
      outputs: z.array(z.object({ name: z.string(), shape: z.array(Dim), dtype: z.string() })).optional(),
    })
    .optional(),
  /** The builder config's facts the probe read (flags by name, optimization level, ...). */
  config: z
    .object({
      flags: z.array(z.string()).optional(),
      optimizationLevel: z.number().int().optional(),
      workspaceBytes: z.number().optional(),
      profilingVerbosity: z.string().optional(),
    })
    .optional(),
  timingCache: z.object({ entries: z.number().int().optional(), bytes: z.number().int().optional() }).optional(),
  /** The program had a progress monitor of its own, which the probe chained. */
  chained: z.boolean().optional(),
});
export type WatchedBuild = z.infer<typeof WatchedBuild>;

export const BuildStartedEvent = z.object({
  ...base,
  type: z.literal('build.started'),
  backend: BackendName,
  backendVersion: z.string(),
  simulated: z.boolean(),
  gpu: z.string().nullable().optional(),
  /** e.g. "8.6", when TensorRT is present. */
  computeCapability: z.string().optional(),
  /** CUDA device index the build ran on, when TensorRT is present. */
  device: z.number().int().optional(),
  /** Newest CUDA version the CUDA driver supports ("13.0"), when TensorRT is present. */
  cudaDriver: z.string().optional(),
  model: ModelSummary.optional(),
  options: BuildOptions.optional(),
  outputPath: z.string().optional(),
  /**
   * Wall-clock time (ms since the Unix epoch, fractions allowed) of the native build start, the
   * instant t = 0. `startedAtMs + t` is then any event's wall time, so a consumer on the same
   * machine can measure delivery latency (bench:pipeline). Filled by the addon where it can.
   */
  startedAtMs: z.number().optional(),
  /** Build farm (`serve --queue`): the machine's worker that ran the build, and its labels. */
  worker: z.object({ id: z.string(), labels: z.record(z.string(), z.string()) }).optional(),
  /** The host memory the build is expected to need, and whether that is more than there is. */
  memoryEstimate: MemoryEstimate.optional(),
  /** A build inside the user's own program (`watch`, docs/watch.md): whose, and what is known. */
  watched: WatchedBuild.optional(),
  /**
   * What earlier builds (of any model) spent in each phase kind, as shares of what was left
   * (build-estimate.ts, PhaseShareRecorder), with the built-in prior for the kinds they lack: the
   * weights of the percentage. Added by the service.
   */
  phaseShares: z.record(z.string(), z.number().min(0).max(1)).optional(),
  /**
   * Where phaseShares came from: `history` (earlier builds), `prior` (the built-in shares of
   * TensorRT's phase kinds, build-estimate.ts PHASE_SHARE_PRIOR: a judgement, no build timed), or
   * `mixed`. Surfaces say when the percentage rests on the prior alone.
   */
  phaseSharesSource: z.enum(['history', 'prior', 'mixed']).optional(),
});
export const PhaseStartEvent = z.object({
  ...base,
  type: z.literal('phase.start'),
  id: z.number().int(),
  parentId: z.number().int().nullable(),
  name: z.string(),
  nbSteps: z.number().int(),
  instance: z.number().int(),
});
export const PhaseStepEvent = z.object({
  ...base,
  type: z.literal('phase.step'),
  id: z.number().int(),
  step: z.number().int(),
  stepsDone: z.number().int(),
});
export const PhaseFinishEvent = z.object({
  ...base,
  type: z.literal('phase.finish'),
  id: z.number().int(),
  stepsDone: z.number().int(),
  early: z.boolean(),
});
export const LogEvent = z.object({
  ...base,
  type: z.literal('log'),
  severity: Severity,
  message: z.string(),
});
export const CacheStatsEvent = z.object({ ...base, type: z.literal('cache.stats'), ...CacheStats.shape });
/** A predicted end, from earlier builds of the same model, options and backend (build-estimate.ts). */
export const Estimate = z.object({
  /** Best guess of the time left, ms. */
  remainingMs: z.number().nonnegative(),
  /** The spread of the earlier builds it rests on, ms. */
  lowMs: z.number().nonnegative(),
  highMs: z.number().nonnegative(),
  /**
   * How many earlier builds it rests on; 0 for a first build, whose estimate is extrapolated from
   * its own progress so far (`source: "progress"`).
   */
  basis: z.number().int().nonnegative(),
  /** `history`: earlier builds of the same kind; `progress`: this build's own pace (no history). */
  source: z.enum(['history', 'progress']).optional(),
});
export type Estimate = z.infer<typeof Estimate>;

export const HeartbeatEvent = z.object({
  ...base,
  type: z.literal('heartbeat'),
  sinceLastCallbackMs: z.number(),
  cancelRequested: z.boolean(),
  /**
   * The predicted end at this moment, added by the service once a second (the heartbeat's
   * cadence) when earlier builds give a basis; absent otherwise.
   */
  estimate: Estimate.optional(),
  /** CPU time (ms) the build worker process has used so far: rising while the builder works. */
  workerCpuMs: z.number().nonnegative().optional(),
  /**
   * The build's GPU utilisation (percent of NVML's last sample period with a kernel running;
   * device-wide). Only where NVML is present, for TensorRT builds.
   */
  gpuUtilPercent: z.number().min(0).max(100).optional(),
  /** Why there is no GPU figure (no NVML, the device does not report it); sent once. */
  gpuNote: z.string().max(1000).optional(),
  /** The build worker's resident host memory (RSS from /proc), bytes. */
  hostMemoryBytes: z.number().int().nonnegative().optional(),
  /**
   * Device memory the build worker's process holds on its GPU (NVML's compute-process list),
   * bytes. Only where NVML is present and reports it.
   */
  gpuMemoryBytes: z.number().int().nonnegative().optional(),
  /**
   * How gpuMemoryBytes was measured: 'process' (NVML's compute-process list, this process's own)
   * or 'device-delta' (NVML did not list this process, e.g. in a container's PID namespace: the
   * device's used memory since the worker's first GPU sample, other processes' allocations
   * included). Absent from workers older than the field: read as 'process'.
   */
  gpuMemorySource: z.enum(['process', 'device-delta']).optional(),
  /** Why this process's own GPU memory is unknown (with a 'device-delta' figure or none). */
  gpuMemoryUnknown: z.string().max(1000).optional(),
  /** gpuUtilPercent as a fraction, 0–1. */
  gpuUtilization: z.number().min(0).max(1).optional(),
  /** The GPU's SM clock (MHz) and temperature (°C), where NVML reports them. */
  gpuClockMhz: z.number().int().nonnegative().optional(),
  gpuTemperatureC: z.number().int().optional(),
});
export const BuildCancellingEvent = z.object({
  ...base,
  type: z.literal('build.cancelling'),
  /** ms since build start when Stop was requested. */
  requestedAt: z.number(),
  reason: CancelReason,
});
/** Peak memory of one phase row (a name path), sampled at the heartbeats while it was open. */
export const PhaseMemory = z.object({
  path: z.array(z.string()),
  peakHostBytes: z.number().int().nonnegative(),
  peakGpuBytes: z.number().int().nonnegative().nullable(),
});
export type PhaseMemory = z.infer<typeof PhaseMemory>;

/**
 * The build worker's memory over the build (apps/shared/memory-track.ts). `peakGpuBytes` is null
 * where NVML gave no per-process figure (no NVML, a simulated build).
 */
export const BuildMemory = z.object({
  peakHostBytes: z.number().int().nonnegative(),
  peakGpuBytes: z.number().int().nonnegative().nullable(),
  /** 'device-delta' when some of peakGpuBytes's samples were the device delta (heartbeat gpuMemorySource); absent: the process's own. */
  peakGpuSource: z.enum(['process', 'device-delta']).optional(),
  byPhase: z.array(PhaseMemory),
});
export type BuildMemory = z.infer<typeof BuildMemory>;

/** A memory limit the build passed (the build was stopped: build.cancelling reason "memory"). */
export const MemoryStop = z.object({
  kind: z.enum(['host', 'gpu']),
  usedBytes: z.number().int().nonnegative(),
  limitBytes: z.number().int().nonnegative(),
  /** The phase path open when the limit was passed, outermost first. */
  phasePath: z.array(z.string()),
});
export type MemoryStop = z.infer<typeof MemoryStop>;

/** The kernel's out-of-memory killer ended the build worker (its cgroup's oom_kill counter rose). */
export const OomKill = z.object({
  /** The cgroup's memory limit, bytes; absent when it has none. */
  limitBytes: z.number().int().nonnegative().optional(),
  peakHostBytes: z.number().int().nonnegative().optional(),
  phasePath: z.array(z.string()).optional(),
});
export type OomKill = z.infer<typeof OomKill>;

export const BuildFinishedEvent = z.object({
  ...base,
  type: z.literal('build.finished'),
  status: BuildStatus,
  durationMs: z.number(),
  /** Stop request → first stepComplete that returned false. */
  cancelLatencyMs: z.number().optional(),
  /** Stop request → build.finished (the builder has unwound). */
  stopToFinishMs: z.number().optional(),
  engineBytes: z.number().int().optional(),
  outputPath: z.string().optional(),
  error: z.string().optional(),
  cache: CacheStats.optional(),
  /**
   * crashed: where the builder was when the worker died, outermost phase first, the phase that
   * was open deepest last (from a record that survives the worker). Absent when unknown.
   */
  lastPhasePath: z.array(z.string()).optional(),
  /** Memory over the build: peaks overall and per phase row (sampled at the heartbeats). */
  memory: BuildMemory.optional(),
  /** cancelled with reason "memory": which limit, by how much, where. */
  memoryStop: MemoryStop.optional(),
  /** crashed: the out-of-memory killer did it. */
  oomKill: OomKill.optional(),
  /** succeeded: the engine's manifest, written beside it before this event (docs/engines.md). */
  manifestPath: z.string().optional(),
  /** succeeded, but the manifest could not be written (why): check calls the engine "unknown". */
  manifestError: z.string().optional(),
  /**
   * succeeded without building (reuse): a stored engine's manifest key matched, so its bytes were
   * copied to the output path. Names the build that made them and the key.
   */
  reused: z.object({ fromBuildId: z.string(), key: z.string() }).optional(),
  /**
   * succeeded: what the engine's layer information says (apps/shared/build-layers.ts): layers per
   * precision, and the compute layers that run wider than the build asked for (`expected`: the
   * precision flags, or the model's own float type when strongly typed). `widerNames`: at most 20.
   */
  layers: z
    .object({
      count: z.number().int().nonnegative(),
      byPrecision: z.record(z.string(), z.number().int()),
      expected: z.string().optional(),
      checked: z.number().int().nonnegative().optional(),
      asAsked: z.number().int().nonnegative().optional(),
      wider: z.number().int().nonnegative().optional(),
      widerByPrecision: z.record(z.string(), z.number().int()).optional(),
      widerNames: z.array(z.string()).max(20).optional(),
    })
    .optional(),
});

export const BuildEvent = z.discriminatedUnion('type', [
  BuildStartedEvent,
  PhaseStartEvent,
  PhaseStepEvent,
  PhaseFinishEvent,
  LogEvent,
  CacheStatsEvent,
  HeartbeatEvent,
  BuildCancellingEvent,
  BuildFinishedEvent,
]);
export type BuildEvent = z.infer<typeof BuildEvent>;
export type BuildEventType = BuildEvent['type'];
export type EventOf<T extends BuildEventType> = Extract<BuildEvent, { type: T }>;
export type BuildStarted = EventOf<'build.started'>;
export type BuildFinished = EventOf<'build.finished'>;

/** Everything except the fields every event has; what producers fill in before stamping. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type EventBody = DistributiveOmit<BuildEvent, 'v' | 'buildId' | 'seq' | 't'>;

// ───────────────────────────── build records (service) ─────────────────────

export const BuildState = z.enum(['queued', 'running', 'cancelling', 'succeeded', 'cancelled', 'failed', 'crashed']);
export type BuildState = z.infer<typeof BuildState>;

/** What `GET /api/builds/{id}` and `GET /api/builds` return: a build's facts, without its phases. */
export const BuildRecord = z.object({
  id: z.string(),
  state: BuildState,
  modelPath: z.string(),
  outputPath: z.string().optional(),
  options: BuildOptions,
  queuedAt: z.string(), // ISO time
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  backend: BackendName.optional(),
  backendVersion: z.string().optional(),
  simulated: z.boolean().optional(),
  model: ModelSummary.optional(),
  outcome: BuildFinishedEvent.optional(),
  cache: CacheStats.optional(),
  /**
   * Highest event seq of the build so far; the live stream resumes after it. The phase tree is
   * not part of the record (a list of builds must not carry thousands of phases each): it is in
   * the build view (`GET /api/builds/{id}/view`, the stream's `reset`), apps/shared/build-view.ts.
   */
  lastSeq: z.number().int(),
  /** Engine file available for download/saving. */
  engineAvailable: z.boolean(),
  /** A build inside the user's own program (docs/watch.md); modelPath is then a label, not a file. */
  watched: WatchedBuild.optional(),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

// ───────────────────────────────── helpers ──────────────────────────────────

/** Human-readable message for a zod error, naming the offending field paths. */
export function describeZodError(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}
