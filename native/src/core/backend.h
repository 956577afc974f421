// The seam between build backends (tensorrt, simulated) and the shared event pipeline.
// Every backend reports through ProgressSink; everything behind the sink (phase tracking,
// event queue, cancel bookkeeping, delivery to JS) is shared code that the simulated backend
// exercises in tests, so the TensorRT-only code stays a thin adapter.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tbs {

enum class Severity : uint8_t { kInternalError = 0, kError, kWarning, kInfo, kVerbose };

// kMemory: the host stopped the build because it passed a memory limit (issue 21).
enum class CancelReason : uint8_t { kUser = 0, kTimeout, kShutdown, kMemory };

// Timing-cache figures; -1 means "not known" (TensorRT has no hit/miss API).
struct CacheStats {
  int64_t entriesBefore = -1;
  int64_t entriesAfter = -1;
  int64_t bytes = -1;
  int64_t hits = -1;
  int64_t misses = -1;
  bool missesInferred = false;
  std::string path;
  std::string warning;  // e.g. "timing cache file is corrupt; started with an empty cache"
  // The lock on the cache could not be had in time: this build's entries were written to this
  // sidecar instead, and the next build that saves the cache merges them (core/cache_store.h).
  std::string deferredPath;
  bool savedAfterCancel = false;  // cancelled (Stop or time budget) and its measured entries kept
};

// Called from any number of builder threads at once. Implementations must not block on JS,
// I/O, or each other for long: record and return.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // IProgressMonitor semantics (docs/tensorrt.md, "The progress monitor"): parent is null at the root.
  virtual void phaseStart(char const* name, char const* parent, int32_t nbSteps) noexcept = 0;
  // Returns false once cancel has been requested (the builder should stop early).
  virtual bool stepComplete(char const* name, int32_t step) noexcept = 0;
  virtual void phaseFinish(char const* name) noexcept = 0;
  virtual void log(Severity severity, char const* message) noexcept = 0;
  virtual void cacheStats(CacheStats const& stats) noexcept = 0;
  virtual bool cancelRequested() const noexcept = 0;
  // Waits up to `ms` or until cancel is requested, whichever comes first; returns
  // cancelRequested(). Lets a backend sleep (simulated silent stretches, injected hangs) without
  // delaying Stop. The default polls; the pipeline overrides it with a condition variable.
  virtual bool waitForCancel(double ms) noexcept {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
    while (!cancelRequested() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return cancelRequested();
  }
};

struct ShapeRange {
  std::vector<int64_t> min, opt, max;
};

// Values (not dimensions) of a shape-tensor input; may be zero or negative (e.g. -1 in a Reshape
// target), one entry per element of the shape tensor.
struct ShapeValueRange {
  std::vector<int64_t> min, opt, max;
};

struct LayerInfo {
  std::string name;
  std::string op;
};

enum class SimFaultKind : uint8_t { kNone = 0, kFail, kCrash, kHang };

// A build request as the addon receives it (converted from the JS object once, up front).
struct BuildRequest {
  std::string buildId;
  std::string backend;  // "tensorrt" | "simulated" (never "auto": JS resolves that)
  std::string modelPath;
  std::string outputPath;         // final path; backends write via AtomicFile (temp + rename)
  std::vector<LayerInfo> layers;  // from the model reader; drives the simulated tree

  std::string timingCachePath;  // empty = no cache file
  // Pinned build (--pinned-cache): fail at the first timing-cache miss and leave the cache file as
  // it was. TensorRT: BuilderFlag::kERROR_ON_TIMING_CACHE_MISS; the simulator fails the same way.
  bool errorOnCacheMiss = false;
  int32_t optLevel = -1;  // -1 = backend default (TensorRT: 3)
  int64_t workspaceBytes = -1;
  int64_t tacticDramBytes = -1;
  int64_t tacticSharedMemoryBytes = -1;
  std::map<std::string, ShapeRange> shapes;
  bool stronglyTyped = false;
  std::vector<std::string> precision;  // "fp16", "bf16", "int8", "fp8", "int4", "fp4"
  int32_t tf32 = -1;                   // -1 default, 0 off, 1 on
  std::string profilingVerbosity;      // "", "layer_names_only", "none", "detailed"
  std::string hardwareCompatibility;   // "", "none", "ampere_plus", "same_compute_capability"
  // Version-compatible engine (trtexec --versionCompatible): BuilderFlag::kVERSION_COMPATIBLE;
  // excludeLeanRuntime (kEXCLUDE_LEAN_RUNTIME) only counts with it, as in TensorRT.
  bool versionCompatible = false;
  bool excludeLeanRuntime = false;
  int32_t maxAuxStreams = -1;
  int32_t device = -1;                                 // CUDA device index; -1 = the current device (0)
  std::map<std::string, ShapeValueRange> shapeValues;  // shape-tensor inputs only
  std::string buildRoute;                              // TensorRT 11.1+ (IBuilderConfig::setBuildRoute)
  // User plugin libraries, as trtexec takes them: dlopened after the standard plugins
  // (--staticPlugins), loaded through IPluginRegistry::loadLibrary (--dynamicPlugins), and
  // serialized into the engine (--setPluginsToSerialize, IBuilderConfig::setPluginsToSerialize).
  std::vector<std::string> staticPlugins;
  std::vector<std::string> dynamicPlugins;
  std::vector<std::string> pluginsToSerialize;
  // Count "Autotuning op" lines as inferred timing-cache misses; turns on what that needs
  // (editable timing cache, detailed profiling verbosity, verbose logging).
  bool inferCacheMisses = false;
  // Forward the backend's VERBOSE log lines; the build itself is unchanged.
  bool verboseLog = false;
  // trtexec's build specs, kept as trtexec writes them (trt_options.cc parses them; the options
  // table in apps/shared/build-options.ts checks them first): "" = not given.
  std::string inputIOFormats;        // "fp16:chw,int8:chw4+hwc8", one entry per network input
  std::string outputIOFormats;       // the same per network output
  std::string precisionConstraints;  // "", "none", "prefer", "obey" (10.x only)
  std::string layerPrecisions;       // "conv1:fp16,*:fp32" (10.x only)
  std::string layerOutputTypes;      // "split:fp16+fp32" (10.x only)
  std::string sparsity;              // "", "disable", "enable" (kSPARSE_WEIGHTS)
  std::string tacticSources;         // "-CUBLAS,+CUDNN"
  std::string previewFeatures;       // "+aliasedPluginIO1003"
  int32_t avgTiming = -1;            // -1: TensorRT's default (1)
  int32_t compilationCache = -1;     // -1 default, 0 off (kDISABLE_COMPILATION_CACHE), 1 on
  int32_t dlaCore = -1;              // -1: no DLA
  bool allowGPUFallback = false;     // kGPU_FALLBACK (with dlaCore)

  // Simulated backend only.
  double simDurationMs = 2000;
  uint64_t simSeed = 1;
  int32_t simThreads = 4;
  SimFaultKind simFault = SimFaultKind::kNone;
  std::string simFaultPhase;   // empty = a phase chosen by the seed
  double simHangMs = 60000;    // how long a "hang" step blocks unless cancelled
  int64_t simMemoryBytes = 0;  // host memory held at the peak (sim_memory.h); 0 = none

  int32_t heartbeatMs = 1000;  // cadence of heartbeat events
  // A file the pipeline keeps the open phase path in, memory-mapped so that it survives the
  // process (crash_record.h). Empty = none.
  std::string crashRecordPath;
};

struct BuildOutcome {
  enum class Status : uint8_t { kSucceeded = 0, kCancelled, kFailed };
  Status status = Status::kFailed;
  std::string error;  // user-facing; names the node/phase/file involved
  int64_t engineBytes = -1;
  std::string outputPath;  // set when a file was written
};

struct LibraryFact {
  std::string path;
  std::string version;  // may be empty (unknown)
};

// The GPU a backend builds on, when known (TensorRT: from the CUDA runtime).
struct GpuFact {
  std::string name;
  std::string computeCapability;  // "8.6"
  int32_t device = -1;            // -1: not known
  std::string cudaDriver;         // newest CUDA version the driver supports ("13.0"); "" unknown
};

struct AdapterFact {
  int32_t major = 0;
  std::string headerVersion;  // "10.3.0"
  std::string path;           // the adapter library file (empty in "what this build has" lists)
};

struct BackendProbe {
  std::string name;
  bool available = false;
  std::string version;  // "10.16.1", "sim-1"
  std::string reason;   // why unavailable
  std::map<std::string, std::string> detail;
  // tensorrt (see BackendInfo in apps/shared/protocol.ts): what this build can drive, what was
  // found and which adapter drives it.
  std::vector<AdapterFact> adapters;
  LibraryFact library;  // empty path: none found
  LibraryFact parser;
  AdapterFact adapter;  // major 0: none in use
  std::vector<LibraryFact> preloaded;
  GpuFact gpu;  // device -1: unknown
  // tensorrt: the CUDA driver (libcuda.so.1) and the newest CUDA version it supports
  // (cuDriverGetVersion); empty path: not found. cudaDriverProblem: the driver against the CUDA
  // runtime TensorRT uses ("the CUDA driver is older than the library needs: ..."), if any.
  LibraryFact cudaDriver;
  std::string cudaDriverProblem;
  bool hasBuildRoutes = false;
  std::vector<std::string> buildRoutes;
  // The standard plugin library (libnvinfer_plugin.so.<major>) and how many plugin creators the
  // registry holds after initLibNvInferPlugins; path empty / -1 when not known.
  LibraryFact pluginLibrary;
  int32_t pluginCreators = -1;
  std::string emulates;  // simulated: the TensorRT version it imitates
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendProbe probe() = 0;
  // Runs the whole build on the calling thread (which is not the JS thread) and reports through
  // sink. Must honour sink.cancelRequested() / stepComplete()==false, and must never leave a
  // partial output file behind.
  virtual BuildOutcome build(BuildRequest const& request, ProgressSink& sink) = 0;
  // Facts for build.started: backend version and GPU name when known.
  virtual std::string version() = 0;
  virtual std::string gpuName() { return {}; }
  // TensorRT 11.1+: the library's build-route list as getAllBuildRoutes() returns it (JSON),
  // read when asked (it needs a builder) and kept on disk (trt/build_routes_cache.h). Runs on
  // the calling thread, never the JS thread. False with `error` when there is none to read.
  virtual bool buildRoutes(std::string& json, std::string& error) {
    (void)json;
    error = "this backend has no build routes";
    return false;
  }
  // GPU facts for build.started (name, compute capability, device index); device -1 = unknown.
  virtual GpuFact gpuFor(BuildRequest const& request) {
    (void)request;
    GpuFact g;
    g.name = gpuName();
    return g;
  }
};

}  // namespace tbs
