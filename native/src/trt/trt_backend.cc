// TrtBackend::build drives IBuilder -> INetworkDefinition -> IParser -> IBuilderConfig ->
// buildSerializedNetwork, reporting through the shared ProgressSink.
//
// WHAT COULD NOT BE RUN HERE: a real build needs libnvinfer.so.10, libnvonnxparser.so.10, a CUDA
// driver and an NVIDIA GPU, none of which exist on the development machines. This file is
// compile-checked against the TensorRT 10.16 headers and exercised end to end against scripted
// fake libraries (native/test/trt/fake_full_*.cc, test_full_fake.cc) that implement the API
// contracts it relies on; how a real libnvinfer behaves beyond those contracts is untested.
#include "trt_backend.h"

#include <NvInfer.h>
#include <NvOnnxParser.h>

#include <sys/stat.h>
#include <unistd.h>

#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../core/atomic_file.h"
#include "trt_loader.h"
#include "trt_logger.h"
#include "trt_monitor.h"
#include "trt_options.h"
#include "trt_timing_cache.h"
#include "trt_version.h"

namespace tbs {
namespace {

using trt::ConfigPlan;
using trt::Logger;
using trt::TrtLibraries;

constexpr int kMaxParserErrorsReported = 20;

std::string headerVersion() {
  return std::to_string(NV_TENSORRT_MAJOR) + "." + std::to_string(NV_TENSORRT_MINOR) + "." +
         std::to_string(NV_TENSORRT_PATCH);
}

BuildOutcome failed(std::string error) {
  BuildOutcome o;
  o.status = BuildOutcome::Status::kFailed;
  o.error = std::move(error);
  return o;
}

BuildOutcome cancelled() {
  BuildOutcome o;
  o.status = BuildOutcome::Status::kCancelled;
  o.error = "build cancelled";
  return o;
}

// The last error TensorRT logged, to explain a null result.
std::string withLastError(std::string what) {
  std::string last = Logger::instance().lastError();
  return last.empty() ? what : what + ": " + last;
}

std::string checkModelFile(std::string const& path) {
  if (path.empty()) return "no model file given";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "model file " + path + " does not exist";
  if (!S_ISREG(st.st_mode)) return "model file " + path + " is not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return "model file " + path + " is not readable";
  return {};
}

// True when both paths name one existing file (also through links or "./" spellings).
bool sameFile(std::string const& a, std::string const& b) {
  if (a.empty() || b.empty()) return false;
  if (a == b) return true;
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// Writing the engine or the timing cache over the model (or over each other) would destroy a
// file the user still needs.
std::string checkDistinctPaths(BuildRequest const& r) {
  if (sameFile(r.outputPath, r.modelPath)) return "output path " + r.outputPath + " is the model file itself";
  if (sameFile(r.timingCachePath, r.modelPath)) return "timing cache path " + r.timingCachePath + " is the model file";
  if (sameFile(r.timingCachePath, r.outputPath)) {
    return "timing cache path " + r.timingCachePath + " is the same file as the output path";
  }
  return {};
}

void applyPlan(ConfigPlan const& plan, nvinfer1::IBuilderConfig& config) {
  for (auto flag : plan.setFlags) config.setFlag(flag);
  for (auto flag : plan.clearFlags) config.clearFlag(flag);
  if (plan.optLevel >= 0) config.setBuilderOptimizationLevel(plan.optLevel);
  for (auto const& [pool, bytes] : plan.poolLimits) config.setMemoryPoolLimit(pool, bytes);
  if (plan.setProfilingVerbosity) config.setProfilingVerbosity(plan.profilingVerbosity);
  if (plan.setHardwareCompatibility) config.setHardwareCompatibilityLevel(plan.hardwareCompatibility);
  if (plan.maxAuxStreams >= 0) config.setMaxAuxStreams(plan.maxAuxStreams);
}

std::vector<trt::InputDesc> describeInputs(nvinfer1::INetworkDefinition& network) {
  std::vector<trt::InputDesc> inputs;
  for (int32_t i = 0; i < network.getNbInputs(); ++i) {
    nvinfer1::ITensor* t = network.getInput(i);
    if (t == nullptr) continue;
    trt::InputDesc d;
    d.name = t->getName() != nullptr ? t->getName() : "";
    nvinfer1::Dims dims = t->getDimensions();
    for (int32_t k = 0; k < dims.nbDims && k < nvinfer1::Dims::MAX_DIMS; ++k) d.dims.push_back(dims.d[k]);
    d.isShapeTensor = t->isShapeTensor();
    inputs.push_back(std::move(d));
  }
  return inputs;
}

// Successfully loaded libraries stay loaded for the life of the process, keyed by the paths they
// were loaded from (the addon makes a new backend object per probe and per build; unloading
// libnvinfer between builds would tear down its CUDA state and threads under us). Failed loads
// are not cached, so installing TensorRT (or fixing TBS_TRT_LIB_DIR) needs no restart.
TrtLibraries* sharedLibraries(trt::LoaderConfig const& config, trt::LoadError& err) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, std::unique_ptr<TrtLibraries>>();  // never freed
  std::string key = config.nvinferLib + '\n' + config.onnxParserLib;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded->find(key);
  if (it != loaded->end()) return it->second.get();
  std::unique_ptr<TrtLibraries> libs = TrtLibraries::load(config, err);
  if (!libs) return nullptr;
  TrtLibraries* raw = libs.get();
  loaded->emplace(key, std::move(libs));
  return raw;
}

// One TensorRT build per process at a time, across backend objects: TensorRT keeps one logger per
// process, and it is routed to one build's sink.
std::mutex& processBuildMutex() {
  static auto* mu = new std::mutex();  // never destroyed: a build thread may outlive static teardown
  return *mu;
}

std::string parserErrors(nvonnxparser::IParser& parser, std::string const& modelPath) {
  int n = parser.getNbErrors();
  std::string out = "cannot parse " + modelPath;
  if (n <= 0) return withLastError(out);
  for (int i = 0; i < n && i < kMaxParserErrorsReported; ++i) {
    nvonnxparser::IParserError const* e = parser.getError(i);
    if (e == nullptr) continue;
    out += "\n" + trt::formatParserError(e->code(), e->desc(), e->node(), e->nodeName(), e->nodeOperator());
  }
  if (n > kMaxParserErrorsReported) {
    out += "\n(" + std::to_string(n - kMaxParserErrorsReported) + " more parser errors not shown)";
  }
  return out;
}

class TrtBackend final : public Backend {
 public:
  BackendProbe probe() override {
    BackendProbe p;
    p.name = "tensorrt";
    p.detail["compiledAgainst"] = headerVersion();
    trt::LoadError err;
    TrtLibraries* libs = libraries(err);
    if (libs == nullptr) {
      p.available = false;
      p.reason = err.message;
      return p;
    }
    p.available = true;
    p.version = libs->versionString();
    p.detail["nvinfer"] = libs->nvinferPath();
    p.detail["onnxParser"] = libs->onnxParserPath();
    p.detail["onnxParserVersion"] = std::to_string(libs->onnxParserVersion());
    p.detail["timingCacheEntryCounts"] =
        trt::runtimeHasTimingCacheQueryKeys(libs->inferLibVersion()) ? "yes" : "no (needs TensorRT 10.8+)";
    return p;
  }

  std::string version() override {
    trt::LoadError err;
    TrtLibraries* libs = libraries(err);
    return libs != nullptr ? libs->versionString() : std::string();
  }

  // gpuName(): not overridden. TensorRT's API exposes no device name, and we do not link the
  // CUDA runtime (cudaGetDeviceProperties) — left empty rather than guessed.

  BuildOutcome build(BuildRequest const& request, ProgressSink& sink) override {
    std::unique_lock<std::mutex> one(processBuildMutex(), std::try_to_lock);
    if (!one.owns_lock()) return failed("another TensorRT build is already running in this process");
    try {
      return buildLocked(request, sink);
    } catch (std::exception const& e) {
      return failed(std::string("internal error in the TensorRT backend: ") + e.what());
    } catch (...) {
      return failed("internal error in the TensorRT backend");
    }
  }

 private:
  // Resolved on every call so that TBS_* environment changes take effect without a restart.
  static TrtLibraries* libraries(trt::LoadError& err) {
    return sharedLibraries(trt::loaderConfigFromEnv(NV_TENSORRT_MAJOR), err);
  }

  BuildOutcome buildLocked(BuildRequest const& request, ProgressSink& sink) {
    Logger& logger = Logger::instance();
    trt::LoggerRoute route(logger, sink, /*forwardVerbose=*/false);

    // Everything that can be checked without TensorRT is checked first, so a typo fails in
    // milliseconds instead of after a model parse.
    ConfigPlan plan;
    std::string error;
    if (!trt::planBuilderConfig(request, plan, error)) return failed(error);
    if (std::string e = checkModelFile(request.modelPath); !e.empty()) return failed(e);
    if (std::string e = checkDistinctPaths(request); !e.empty()) return failed(e);
    AtomicWriteResult target = checkWritableTarget(request.outputPath);
    if (!target.ok) return failed(target.error);

    trt::LoadError loadError;
    TrtLibraries* libs = libraries(loadError);
    if (libs == nullptr) return failed(loadError.message);
    if (sink.cancelRequested()) return cancelled();

    // Declaration order is destruction order in reverse: the monitor and the timing cache must
    // outlive the builder and config that use them; the parser goes before its network.
    trt::ProgressMonitor monitor(sink);
    CacheStats stats;
    trt::TimingCacheSession cacheSession(trt::runtimeHasTimingCacheQueryKeys(libs->inferLibVersion()));
    bool cacheUsed = !request.timingCachePath.empty();
    auto finish = [&](BuildOutcome outcome) {
      if (cacheUsed) sink.cacheStats(stats);
      return outcome;
    };

    std::unique_ptr<nvinfer1::IBuilder> builder(static_cast<nvinfer1::IBuilder*>(
        libs->createInferBuilder(static_cast<nvinfer1::ILogger*>(&logger), NV_TENSORRT_VERSION)));
    if (!builder) {
      return failed(withLastError("TensorRT " + libs->versionString() +
                                  " could not create a builder (no usable CUDA device or driver?)"));
    }
    std::unique_ptr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(plan.networkFlags));
    if (!network) return failed(withLastError("TensorRT could not create a network definition"));

    // The parser's inline wrapper (NvOnnxParser.h) passes NV_ONNX_PARSER_VERSION, not
    // NV_TENSORRT_VERSION; do exactly what it does.
    std::unique_ptr<nvonnxparser::IParser> parser(static_cast<nvonnxparser::IParser*>(libs->createOnnxParser(
        static_cast<nvinfer1::INetworkDefinition*>(network.get()), static_cast<nvinfer1::ILogger*>(&logger),
        NV_ONNX_PARSER_VERSION)));
    if (!parser) return failed(withLastError("TensorRT could not create an ONNX parser"));
    if (!parser->parseFromFile(request.modelPath.c_str(),
                               static_cast<int>(nvinfer1::ILogger::Severity::kWARNING))) {
      return failed(parserErrors(*parser, request.modelPath));
    }
    if (sink.cancelRequested()) return cancelled();

    std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
    if (!config) return failed(withLastError("TensorRT could not create a builder config"));
    applyPlan(plan, *config);

    std::vector<trt::ProfileEntry> profile;
    if (!trt::planOptimizationProfile(describeInputs(*network), request.shapes, profile, error)) {
      return failed(error);
    }
    if (!profile.empty()) {
      nvinfer1::IOptimizationProfile* p = builder->createOptimizationProfile();  // owned by builder
      if (p == nullptr) return failed(withLastError("TensorRT could not create an optimization profile"));
      for (auto const& e : profile) {
        if (!p->setDimensions(e.input.c_str(), nvinfer1::OptProfileSelector::kMIN, e.min) ||
            !p->setDimensions(e.input.c_str(), nvinfer1::OptProfileSelector::kOPT, e.opt) ||
            !p->setDimensions(e.input.c_str(), nvinfer1::OptProfileSelector::kMAX, e.max)) {
          return failed(withLastError("TensorRT rejected the shapes of input \"" + e.input + "\""));
        }
      }
      if (config->addOptimizationProfile(p) < 0) {
        return failed(withLastError("TensorRT rejected the optimization profile"));
      }
    }

    trt::BuilderConfigCaches caches(*config);
    if (cacheUsed) {
      cacheSession.load(caches, request.timingCachePath, stats);
      if (plan.optLevel == 0) {
        stats.warning += std::string(stats.warning.empty() ? "" : "; ") +
                         "builder optimization level 0 does not use the timing cache";
      }
    }
    config->setProgressMonitor(&monitor);
    if (sink.cancelRequested()) return finish(cancelled());

    std::unique_ptr<nvinfer1::IHostMemory> engine(builder->buildSerializedNetwork(*network, *config));
    config->setProgressMonitor(nullptr);

    // What buildSerializedNetwork returns after a cancel is undocumented: any result while the
    // cancel flag is set counts as cancelled, and nothing is written.
    if (sink.cancelRequested() || monitor.stopAsked()) return finish(cancelled());
    if (!engine || engine->data() == nullptr || engine->size() == 0) {
      return finish(failed(withLastError("TensorRT could not build the engine")));
    }

    if (cacheUsed) {
      stats.entriesAfter = cacheSession.entryCount(caches);
      int64_t autotuned = logger.autotuningLines();
      if (autotuned > 0) {
        stats.misses = autotuned;
        stats.missesInferred = true;
      }
      cacheSession.save(caches, stats);  // failure is a warning in stats, not a failed build
    }

    AtomicWriteResult written = atomicWriteFile(request.outputPath, engine->data(), engine->size());
    if (!written.ok) return finish(failed(written.error));
    BuildOutcome ok;
    ok.status = BuildOutcome::Status::kSucceeded;
    ok.engineBytes = static_cast<int64_t>(engine->size());
    ok.outputPath = request.outputPath;
    return finish(ok);
  }
};

}  // namespace

std::unique_ptr<Backend> makeTensorRtBackend() { return std::make_unique<TrtBackend>(); }

}  // namespace tbs
