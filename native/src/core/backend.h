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

#include "request_fields.h"

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

// A build request as the addon receives it (converted from the JS object once, up front). Its
// fields are declared once, in request_fields.def, which also gives the addon its reader, its echo
// and the list it exports; members here are the ones no JS key sets.
struct BuildRequest {
#define TBS_REQUEST_FIELD(member, Kind, unset, unit, origin, since, before, min) request_kind::Kind::type member = unset;
#include "request_fields.def"
#undef TBS_REQUEST_FIELD

  // Pinned build (pinnedCachePath): fail at the first timing-cache miss and leave the cache file as
  // it was. TensorRT: BuilderFlag::kERROR_ON_TIMING_CACHE_MISS; the simulator fails the same way.
  bool errorOnCacheMiss = false;
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
