// TrtBackend::build drives IBuilder -> INetworkDefinition -> IParser -> IBuilderConfig ->
// buildSerializedNetwork(ToStream), reporting through the shared ProgressSink. Compiled once per
// TensorRT major (adapter_api.h); every feature some header release lacks is behind
// TBS_TRT_HEADERS_AT_LEAST, and every option is also gated on the loaded library's version
// (trt_options.cc, trt_version.h).
//
// WHAT COULD NOT BE RUN HERE: a real build needs libnvinfer, libnvonnxparser, a CUDA driver and
// an NVIDIA GPU, none of which exist on the development machines. This file is compile-checked
// against the headers of every TensorRT release from 10.0 to 11.1 and exercised end to end
// against scripted fake libraries built from those headers (native/test/trt/fake_full_*.cc);
// how a real libnvinfer behaves beyond the documented contracts the fakes imitate is untested.
#include "trt_backend.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../core/atomic_file.h"
#include "../gpu/cuda_driver.h"
#include "build_routes_cache.h"
#include "route_knobs.h"
#include "cuda_device.h"
#include "trt_headers.h"
#include "trt_int8.h"
#include "trt_layer_info.h"
#include "trt_loader.h"
#include "trt_logger.h"
#include "trt_monitor.h"
#include "trt_options.h"
#include "trt_plugins.h"
#include "trt_stream_writer.h"
#include "trt_timing_cache.h"
#include "trt_version.h"

namespace tbs {
namespace {

using trt::ConfigPlan;
using trt::IOFormatSpec;
using trt::LayerTypeSpec;
using trt::Logger;
using trt::TrtLibraries;

constexpr int kMaxParserErrorsReported = 20;

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
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return "model file " + path + " does not exist";
  if (!S_ISREG(st.st_mode)) return "model file " + path + " is not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return "model file " + path + " is not readable";
  return {};
}

// True when both paths name one existing file (also through links or "./" spellings).
bool sameFile(std::string const& a, std::string const& b) {
  if (a.empty() || b.empty()) return false;
  if (a == b) return true;
  struct stat sa{}, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
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

// `plan` holds what needed translating; a request field TensorRT takes as it is (planBuilderConfig
// checked its bound, request_fields.def) is set here straight from the request.
bool applyPlan(ConfigPlan const& plan, BuildRequest const& request, nvinfer1::IBuilderConfig& config, std::string& error) {
  for (auto flag : plan.setFlags) config.setFlag(flag);
  for (auto flag : plan.clearFlags) config.clearFlag(flag);
  if (plan.optLevel >= 0) config.setBuilderOptimizationLevel(plan.optLevel);
  for (auto const& [pool, bytes] : plan.poolLimits) config.setMemoryPoolLimit(pool, bytes);
  if (plan.setProfilingVerbosity) config.setProfilingVerbosity(plan.profilingVerbosity);
  if (plan.setHardwareCompatibility) config.setHardwareCompatibilityLevel(plan.hardwareCompatibility);
#if NV_TENSORRT_MAJOR >= 11
  // 11.x reports whether it accepted the value.
  if (request.maxAuxStreams >= 0 && !config.setMaxAuxStreams(request.maxAuxStreams)) {
    error = withLastError("TensorRT rejected maxAuxStreams " + std::to_string(request.maxAuxStreams));
    return false;
  }
#else
  if (request.maxAuxStreams >= 0) config.setMaxAuxStreams(request.maxAuxStreams);
#endif
#if TBS_TRT_HEADERS_AT_LEAST(11, 1)
  if (!plan.buildRoute.empty() && !config.setBuildRoute(plan.buildRoute.c_str())) {
    error = withLastError("TensorRT rejected build route \"" + plan.buildRoute + "\"");
    return false;
  }
#endif
  if (plan.setTacticSources) config.setTacticSources((config.getTacticSources() | plan.enableTactics) & ~plan.disableTactics);
  if (plan.avgTiming > 0) config.setAvgTimingIterations(plan.avgTiming);
  for (auto const& [feature, on] : plan.preview) config.setPreviewFeature(feature, on);
  (void)error;
  return true;
}

// DLA (trtexec --useDLACore): refused where the GPU has none, as TensorRT would only fail later.
bool applyDla(ConfigPlan const& plan, nvinfer1::IBuilder& builder, nvinfer1::IBuilderConfig& config, std::string& error) {
  if (plan.dlaCore < 0) return true;
  int32_t const cores = builder.getNbDLACores();
  if (cores <= 0) {
    error = "dlaCore " + std::to_string(plan.dlaCore) +
            ": this GPU has no DLA (DLA cores are on Jetson and DRIVE platforms); leave --useDLACore out to build for the GPU";
    return false;
  }
  if (plan.dlaCore >= cores) {
    error = "dlaCore " + std::to_string(plan.dlaCore) + ": this GPU has " + std::to_string(cores) + " DLA core(s), 0.." +
            std::to_string(cores - 1);
    return false;
  }
  config.setDefaultDeviceType(nvinfer1::DeviceType::kDLA);
  config.setDLACore(plan.dlaCore);
  return true;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored \
    "-Wdeprecated-declarations"  // 10.x setType/setPrecision/setOutputType: deprecated with weak typing, as trtexec still uses them
// trtexec's --inputIOFormats/--outputIOFormats (one entry per tensor, in order) and, on 10.x,
// --layerPrecisions/--layerOutputTypes. A layer name the network lacks is a warning, as in trtexec.
bool applyNetworkSpecs(ConfigPlan const& plan, nvinfer1::INetworkDefinition& network, std::vector<std::string>& warnings,
                       std::string& error) {
  auto formats = [&](char const* option, std::vector<IOFormatSpec> const& specs, int32_t count, bool inputs) {
    if (specs.empty()) return true;
    if (static_cast<int32_t>(specs.size()) != count) {
      error = std::string(option) + " gives " + std::to_string(specs.size()) + " format(s) but the network has " + std::to_string(count) +
              (inputs ? " input(s)" : " output(s)") + ": give one per tensor, in order";
      return false;
    }
    for (int32_t i = 0; i < count; ++i) {
      nvinfer1::ITensor* t = inputs ? network.getInput(i) : network.getOutput(i);
      IOFormatSpec const& spec = specs[static_cast<std::size_t>(i)];
#if NV_TENSORRT_MAJOR >= 11
      // Strongly typed: a tensor's type comes from the model; only its formats can be chosen.
      if (t->getType() != spec.type) {
        error =
            std::string(option) + ": " + (inputs ? "input \"" : "output \"") + t->getName() +
            "\" has the model's type, which TensorRT 11 (strongly typed) keeps; give that type with the format, or cast the model offline";
        return false;
      }
#else
      t->setType(spec.type);
#endif
      t->setAllowedFormats(spec.formats);
    }
    return true;
  };
  if (!formats("inputIOFormats", plan.inputFormats, network.getNbInputs(), true)) return false;
  if (!formats("outputIOFormats", plan.outputFormats, network.getNbOutputs(), false)) return false;
#if NV_TENSORRT_MAJOR < 11
  auto matched = [&](std::vector<LayerTypeSpec> const& specs, auto&& apply) {
    if (specs.empty()) return;
    std::set<std::string> used;
    for (int32_t i = 0; i < network.getNbLayers(); ++i) {
      nvinfer1::ILayer* layer = network.getLayer(i);
      std::string const name = layer->getName();
      for (auto const& s : specs) {
        if (s.layer != name && s.layer != "*") continue;
        // "*" leaves layers alone whose outputs are not floating point (shapes, indices, masks), as trtexec does.
        if (s.layer == "*") {
          nvinfer1::DataType const t = layer->getNbOutputs() > 0 ? layer->getOutput(0)->getType() : nvinfer1::DataType::kFLOAT;
          if (t != nvinfer1::DataType::kFLOAT && t != nvinfer1::DataType::kHALF && t != nvinfer1::DataType::kBF16) continue;
        }
        apply(*layer, s);
        used.insert(s.layer);
        if (s.layer == name) break;
      }
    }
    for (auto const& s : specs) {
      if (s.layer != "*" && !used.count(s.layer))
        warnings.push_back("layer \"" + s.layer + "\" named in a layer precision/output type is not in the network");
    }
  };
  matched(plan.layerPrecisions, [](nvinfer1::ILayer& l, LayerTypeSpec const& s) { l.setPrecision(s.types.front()); });
  matched(plan.layerOutputTypes, [](nvinfer1::ILayer& l, LayerTypeSpec const& s) {
    int32_t const n = l.getNbOutputs();
    for (int32_t o = 0; o < n; ++o) l.setOutputType(o, s.types[std::min(static_cast<std::size_t>(o), s.types.size() - 1)]);
  });
#else
  (void)warnings;
#endif
  return true;
}
#pragma GCC diagnostic pop

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

// Shape-tensor values: setShapeValuesV2 (int64) where both the headers and the library have it
// (10.11+; the only form in 11.x), else the 32-bit setShapeValues of older releases.
bool setShapeValues(nvinfer1::IOptimizationProfile& p, trt::ProfileEntry const& e, int32_t libVersion, std::string& error) {
  std::vector<int64_t> const* sel[3] = {&e.minValues, &e.optValues, &e.maxValues};
  nvinfer1::OptProfileSelector which[3] = {nvinfer1::OptProfileSelector::kMIN, nvinfer1::OptProfileSelector::kOPT,
                                           nvinfer1::OptProfileSelector::kMAX};
  for (int s = 0; s < 3; ++s) {
    auto const& v = *sel[s];
    auto n = static_cast<int32_t>(v.size());
    bool ok = false;
#if TBS_TRT_HEADERS_AT_LEAST(10, 11)
    if (trt::libHas(libVersion, trt::kSinceShapeValuesV2)) {
      ok = p.setShapeValuesV2(e.input.c_str(), which[s], v.data(), n);
    } else
#endif
    {
#if NV_TENSORRT_MAJOR < 11
      std::vector<int32_t> narrow;
      for (int64_t x : v) {
        if (x < INT32_MIN || x > INT32_MAX) {
          error = "input \"" + e.input + "\": shape value " + std::to_string(x) + " does not fit in 32 bits, which TensorRT " +
                  trt::formatTrtVersion(libVersion) + " needs (setShapeValuesV2 came in 10.11)";
          return false;
        }
        narrow.push_back(static_cast<int32_t>(x));
      }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      ok = p.setShapeValues(e.input.c_str(), which[s], narrow.data(), n);
#pragma GCC diagnostic pop
#else
      (void)libVersion;
#endif
    }
    if (!ok) {
      error = withLastError("TensorRT rejected the shape values of input \"" + e.input + "\"");
      return false;
    }
  }
  return true;
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

// As trtexec builds a version-compatible engine: the plugin libraries the parser says the network
// uses (IParser::getUsedVCPluginLibraries) are loaded into the builder's registry and handed on
// to the runtime, and serialized into the engine unless its lean runtime is excluded (the caller
// does both with `out`). A parser that cannot say is a warning, as in trtexec.
bool usedVcPluginLibraries(nvonnxparser::IParser& parser, nvinfer1::IPluginRegistry& registry, bool excludeLeanRuntime, ProgressSink& sink,
                           std::vector<std::string>& out, std::string& error) {
  int64_t n = -1;
  char const* const* libs = parser.getUsedVCPluginLibraries(n);
  if (n < 0) {
    sink.log(Severity::kWarning, "the ONNX parser could not list the plugin libraries a version-compatible engine needs");
    return true;
  }
  for (int64_t i = 0; i < n && libs != nullptr; ++i) {
    if (libs[i] != nullptr && *libs[i] != '\0') out.emplace_back(libs[i]);
  }
  if (out.empty()) return true;
  std::string names;
  for (auto const& l : out) names += (names.empty() ? "" : ", ") + l;
  sink.log(Severity::kInfo,
           ("the ONNX parser names plugin libraries this version-compatible engine needs: " + names +
            (excludeLeanRuntime ? "; loaded (not serialized: the lean runtime is excluded)" : "; loaded and serialized into the engine"))
               .c_str());
  std::vector<std::string> log;
  bool ok = trt::loadDynamicPlugins(registry, out, "parser-named", log, error);
  for (auto const& line : log) sink.log(Severity::kInfo, line.c_str());
  return ok;
}

std::string parserErrors(nvonnxparser::IParser& parser, std::string const& modelPath, trt::StandardPlugins const& plugins) {
  int n = parser.getNbErrors();
  std::string out = "cannot parse " + modelPath;
  if (n <= 0) return withLastError(out);
  bool pluginMissing = false;
  for (int i = 0; i < n && i < kMaxParserErrorsReported; ++i) {
    nvonnxparser::IParserError const* e = parser.getError(i);
    if (e == nullptr) continue;
    out += "\n" + trt::formatParserError(e->code(), e->desc(), e->node(), e->nodeName(), e->nodeOperator());
    pluginMissing = pluginMissing || trt::isMissingPluginError(static_cast<int>(e->code()), e->desc() != nullptr ? e->desc() : "");
  }
  if (pluginMissing) out += "\n" + trt::missingPluginAdvice(plugins);
  if (n > kMaxParserErrorsReported) {
    out += "\n(" + std::to_string(n - kMaxParserErrorsReported) + " more parser errors not shown)";
  }
  return out;
}

// The file this adapter was loaded from (the test programs link it statically: their own path).
std::string selfPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void const*>(&selfPath), &info) != 0 && info.dli_fname != nullptr) {
    char resolved[PATH_MAX];
    if (realpath(info.dli_fname, resolved) != nullptr) return resolved;
    return info.dli_fname;
  }
  return {};
}

// How the CUDA runtime is named in a driver problem.
std::string runtimeName(trt::CudaRuntimeFact const& runtime) {
  return runtime.path.empty() ? std::string("TensorRT's CUDA runtime") : "the CUDA runtime " + runtime.path;
}

class TrtBackend final : public Backend {
 public:
  explicit TrtBackend(trt::LoaderConfig config) : config_(std::move(config)) {}

  BackendProbe probe() override {
    BackendProbe p;
    p.name = "tensorrt";
    p.detail["compiledAgainst"] = trt::formatTrtVersion(trt::kHeaderVersion);
    p.adapter.major = NV_TENSORRT_MAJOR;
    p.adapter.headerVersion = trt::formatTrtVersion(trt::kHeaderVersion);
    p.adapter.path = selfPath();
    trt::LoadError err;
    TrtLibraries* libs = libraries(err);
    if (libs == nullptr) {
      p.available = false;
      p.reason = err.message;
      return p;
    }
    int32_t lib = libs->inferLibVersion();
    p.available = true;
    p.version = libs->versionString();
    p.library = {libs->nvinferPath(), libs->versionString()};
    p.parser = {libs->onnxParserPath(), libs->onnxParserFileVersion()};
    p.detail["nvinfer"] = libs->nvinferPath();
    p.detail["onnxParser"] = libs->onnxParserPath();
    p.detail["onnxParserVersion"] = std::to_string(libs->onnxParserVersion());
    p.detail["timingCacheEntryCounts"] = timingCacheCountUsable(lib) ? "yes" : "no (needs TensorRT 10.8+)";
    p.detail["engineStreaming"] = streamBuildUsable(lib) ? "yes" : "no (needs TensorRT 10.13+)";
    if (trt::libHas(lib, trt::kSinceDeprecatedInt4Fp4) && NV_TENSORRT_MAJOR < 11) {
      p.detail["precisionNote"] = "int4/fp4 only enable plugins with INT4/FP4 I/O and are deprecated since 10.12";
    }
    if (!libs->parserReleaseKnown()) {
      p.detail["onnxParserCheck"] = "not made: neither getNvOnnxParserVersion() nor the file name of " + libs->onnxParserPath() +
                                    " says its release, so it cannot be compared with libnvinfer's";
    }
    // The GPU and the driver through the CUDA driver API: no context is created, no CUDA runtime
    // is started, nothing is allocated on the GPU.
    trt::CudaRuntimeFact runtime = trt::cudaRuntimeInProcess();
    if (!runtime.path.empty()) {
      p.detail["cudaRuntime"] = runtime.path + (runtime.version > 0 ? " (" + gpu::cudaVersionText(runtime.version) + ")" : "");
    }
    std::string cudaError;
    if (gpu::CudaDriver* driver = gpu::CudaDriver::get(cudaError)) {
      p.cudaDriver = {driver->path(), gpu::cudaVersionText(driver->version())};
      GpuFact g;
      if (driver->describe(0, g.name, g.computeCapability, cudaError)) {
        g.device = 0;
        g.cudaDriver = p.cudaDriver.version;
        p.gpu = g;
      } else {
        p.detail["gpu"] = cudaError;
      }
      bool fatal = false;
      p.cudaDriverProblem = gpu::driverVersionProblem(driver->version(), runtime.version, runtimeName(runtime), fatal);
      if (fatal) {
        p.available = false;
        p.reason = p.cudaDriverProblem;
      }
    } else {
      p.detail["gpu"] = "unknown: " + cudaError;
    }
    // As trtexec, before anything is parsed: the standard plugins, and how many creators the
    // registry then holds.
    trt::StandardPlugins plugins = trt::initStandardPlugins(libs->nvinferPath(), Logger::instance());
    p.pluginLibrary.path = plugins.library;
    p.pluginCreators = trt::registeredPluginCreators();
    if (!plugins.initialized) p.detail["plugins"] = plugins.error;
    cachedBuildRoutes(*libs, p);
    return p;
  }

  std::string version() override {
    trt::LoadError err;
    TrtLibraries* libs = libraries(err);
    return libs != nullptr ? libs->versionString() : std::string();
  }

  GpuFact gpuFor(BuildRequest const& request) override {
    GpuFact g;
    std::string error;
    gpu::CudaDriver* driver = gpu::CudaDriver::get(error);
    if (driver == nullptr) return g;
    g.cudaDriver = gpu::cudaVersionText(driver->version());
    int32_t device = request.device >= 0 ? request.device : 0;
    if (driver->describe(device, g.name, g.computeCapability, error)) g.device = device;
    return g;
  }

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
  TrtLibraries* libraries(trt::LoadError& err) const { return sharedLibraries(config_, err); }

  // Both need the call in the adapter's headers AND in the library (an adapter built against older
  // headers than the library cannot make the call, whatever the library offers).
  static bool timingCacheCountUsable(int32_t lib) {
#if TBS_TRT_HEADERS_AT_LEAST(10, 8)
    return trt::runtimeHasTimingCacheQueryKeys(lib);
#else
    (void)lib;
    return false;
#endif
  }

  static bool streamBuildUsable(int32_t lib) {
#if TBS_TRT_HEADERS_AT_LEAST(10, 13)
    return trt::libHas(lib, trt::kSinceStreamBuild);
#else
    (void)lib;
    return false;
#endif
  }

  // Listing backends creates no builder: routes are reported only when the on-disk cache has
  // them for this very library and GPU (buildRoutes() fills it when a user asks).
  static void cachedBuildRoutes(TrtLibraries& libs, BackendProbe& p) {
    if (!trt::libHas(libs.inferLibVersion(), trt::kSinceBuildRoutes) || !TBS_TRT_HEADERS_AT_LEAST(11, 1)) return;
    trt::RoutesCacheKey key;
    std::string error, json;
    if (trt::routesCacheKey(libs.nvinferPath(), p.gpu.name, key, error) && trt::readCachedRoutes(key, json)) {
      p.hasBuildRoutes = true;
      p.buildRoutes = trt::routeKnobPatterns(json);
      p.detail["buildRoutesJson"] = json;
      if (json.empty()) p.detail["buildRoutes"] = "none: TensorRT " + libs.versionString() + " lists no build routes";
    } else {
      p.detail["buildRoutes"] =
          "not read yet (reading them creates a TensorRT builder; they are read when asked, "
          "e.g. trtexec --helpBuildRoute, and kept on disk)";
    }
  }

 public:
  bool buildRoutes(std::string& json, std::string& error) override {
    trt::LoadError err;
    TrtLibraries* libs = libraries(err);
    if (libs == nullptr) {
      error = err.message;
      return false;
    }
#if TBS_TRT_HEADERS_AT_LEAST(11, 1)
    if (!trt::libHas(libs->inferLibVersion(), trt::kSinceBuildRoutes)) {
      error = "build routes need TensorRT " + trt::sinceText(trt::kSinceBuildRoutes) + "; this is TensorRT " + libs->versionString();
      return false;
    }
    std::string gpuName, cc, ignored;
    if (gpu::CudaDriver* driver = gpu::CudaDriver::get(ignored)) driver->describe(0, gpuName, cc, ignored);
    trt::RoutesCacheKey key;
    bool keyed = trt::routesCacheKey(libs->nvinferPath(), gpuName, key, ignored);
    if (keyed && trt::readCachedRoutes(key, json)) return true;
    {
      std::unique_lock<std::mutex> one(processBuildMutex(), std::try_to_lock);
      if (!one.owns_lock()) {
        error = "a TensorRT build is running in this process; build routes are read when it is over";
        return false;
      }
      Logger& logger = Logger::instance();
      std::unique_ptr<nvinfer1::IBuilder> builder(static_cast<nvinfer1::IBuilder*>(libs->createInferBuilder(
          static_cast<nvinfer1::ILogger*>(&logger), trt::factoryVersion(trt::kHeaderVersion, libs->inferLibVersion()))));
      if (!builder) {
        error = withLastError("TensorRT " + libs->versionString() + " could not create a builder to read build routes");
        return false;
      }
      std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
      char const* routes = config ? config->getAllBuildRoutes() : nullptr;
      if (routes == nullptr) {
        error = withLastError("TensorRT " + libs->versionString() + " listed no build routes");
        return false;
      }
      json = routes;
    }
    std::string writeError;
    if (keyed) trt::writeCachedRoutes(key, json, writeError);  // only saves time next time
    return true;
#else
    (void)json;
    error = "this adapter was compiled against TensorRT " + trt::formatTrtVersion(trt::kHeaderVersion) +
            " headers, which have no build routes (11.1+)";
    return false;
#endif
  }

 private:
  BuildOutcome buildLocked(BuildRequest const& request, ProgressSink& sink) {
    // Everything that can be checked without TensorRT is checked first, so a typo fails in
    // milliseconds instead of after a model parse.
    if (std::string e = checkModelFile(request.modelPath); !e.empty()) return failed(e);
    if (std::string e = checkDistinctPaths(request); !e.empty()) return failed(e);
    AtomicWriteResult target = checkWritableTarget(request.outputPath);
    if (!target.ok) return failed(target.error);

    trt::LoadError loadError;
    TrtLibraries* libs = libraries(loadError);
    if (libs == nullptr) return failed(loadError.message);
    int32_t const lib = libs->inferLibVersion();
    ConfigPlan plan;
    std::string error;
    if (!trt::planBuilderConfig(request, lib, plan, error)) return failed(error);
    if (sink.cancelRequested()) return cancelled();

    Logger& logger = Logger::instance();
    trt::LoggerRoute route(logger, sink, plan.forwardVerbose);
    for (auto const& w : plan.warnings) sink.log(Severity::kWarning, w.c_str());

    // The driver before any builder: a driver too old for TensorRT's CUDA runtime is said in
    // those words instead of a builder that fails to appear.
    std::string driverError;
    gpu::CudaDriver* driver = gpu::CudaDriver::get(driverError);
    if (driver != nullptr) {
      trt::CudaRuntimeFact runtime = trt::cudaRuntimeInProcess();
      bool fatal = false;
      std::string problem = gpu::driverVersionProblem(driver->version(), runtime.version, runtimeName(runtime), fatal);
      if (fatal) return failed(problem);
      if (!problem.empty()) sink.log(Severity::kWarning, problem.c_str());
    }
    if (request.device >= 0) {
      // The builder uses the calling thread's current device (trtexec --device does the same with
      // cudaSetDevice). Through the driver: device N's primary context made current on this
      // thread is what every CUDA runtime instance in the process adopts.
      if (driver == nullptr) return failed("cannot choose device " + std::to_string(request.device) + ": " + driverError);
      if (!driver->selectOnThisThread(request.device, error)) return failed(error);
    }

    // Declaration order is destruction order in reverse: the monitor and the timing cache must
    // outlive the builder and config that use them; the parser goes before its network.
    trt::ProgressMonitor monitor(sink);
    CacheStats stats;
    trt::TimingCacheSession cacheSession(lib);
    bool cacheUsed = !request.timingCachePath.empty();
    bool cacheLoaded = false;
    auto finish = [&](BuildOutcome outcome) {
      if (cacheLoaded) sink.cacheStats(stats);
      return outcome;
    };

    // Plugins before the parse, as trtexec: the standard library once per process (a model
    // without plugin ops builds without it, so its absence is a warning), then the user's.
    trt::StandardPlugins plugins = trt::initStandardPlugins(libs->nvinferPath(), logger);
    if (!plugins.initialized) sink.log(Severity::kWarning, (plugins.error + "; models with plugin ops will not parse").c_str());
    // Static plugin libraries next, before any builder exists (trtexec's order).
    std::vector<std::string> pluginLog;
    if (!trt::loadStaticPlugins(request, pluginLog, error)) return failed(error);
    for (auto const& line : pluginLog) sink.log(Severity::kInfo, line.c_str());

    std::unique_ptr<nvinfer1::IBuilder> builder(static_cast<nvinfer1::IBuilder*>(
        libs->createInferBuilder(static_cast<nvinfer1::ILogger*>(&logger), trt::factoryVersion(trt::kHeaderVersion, lib))));
    if (!builder) {
      return failed(withLastError("TensorRT " + libs->versionString() + " could not create a builder (no usable CUDA device or driver?)"));
    }
    {
      pluginLog.clear();
      bool ok = trt::loadDynamicPlugins(builder->getPluginRegistry(), request.dynamicPlugins, "dynamic", pluginLog, error) &&
                trt::checkPluginsToSerialize(request.pluginsToSerialize, error);
      for (auto const& line : pluginLog) sink.log(Severity::kInfo, line.c_str());
      if (!ok) return failed(error);
    }
    // The libraries the runtime that loads the engine needs (trtexec hands the same list on).
    std::vector<std::string> runtimePlugins = request.dynamicPlugins;
    std::vector<std::string> serializePlugins = request.pluginsToSerialize;
    std::unique_ptr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(plan.networkFlags));
    if (!network) return failed(withLastError("TensorRT could not create a network definition"));

    // The parser's inline wrapper (NvOnnxParser.h) passes NV_ONNX_PARSER_VERSION, not
    // NV_TENSORRT_VERSION; do exactly what it does.
    std::unique_ptr<nvonnxparser::IParser> parser(static_cast<nvonnxparser::IParser*>(libs->createOnnxParser(
        static_cast<nvinfer1::INetworkDefinition*>(network.get()), static_cast<nvinfer1::ILogger*>(&logger), NV_ONNX_PARSER_VERSION)));
    if (!parser) return failed(withLastError("TensorRT could not create an ONNX parser"));
    if (!parser->parseFromFile(request.modelPath.c_str(), static_cast<int>(nvinfer1::ILogger::Severity::kWARNING))) {
      return failed(parserErrors(*parser, request.modelPath, plugins));
    }
    if (sink.cancelRequested()) return cancelled();
    if (request.versionCompatible) {
      std::vector<std::string> vcLibs;
      if (!usedVcPluginLibraries(*parser, builder->getPluginRegistry(), request.excludeLeanRuntime, sink, vcLibs, error)) {
        return failed(error);
      }
      runtimePlugins.insert(runtimePlugins.end(), vcLibs.begin(), vcLibs.end());
      if (!request.excludeLeanRuntime) serializePlugins.insert(serializePlugins.end(), vcLibs.begin(), vcLibs.end());
    }
#if NV_TENSORRT_MAJOR < 11
    if (plan.int8 && !trt::hasQdqLayers(*network)) {
      if (!trt::setPlaceholderDynamicRanges(*network, error)) return failed(withLastError(error));
      sink.log(Severity::kWarning, trt::kInt8PlaceholderWarning);
    }
#endif

    std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
    if (!config) return failed(withLastError("TensorRT could not create a builder config"));
    if (!applyPlan(plan, request, *config, error)) return failed(error);
    if (!applyDla(plan, *builder, *config, error)) return failed(error);
    {
      std::vector<std::string> specWarnings;
      if (!applyNetworkSpecs(plan, *network, specWarnings, error)) return failed(error);
      for (auto const& w : specWarnings) sink.log(Severity::kWarning, w.c_str());
    }
    trt::setPluginsToSerialize(*config, serializePlugins);

    std::vector<trt::ProfileEntry> profile;
    if (!trt::planOptimizationProfile(describeInputs(*network), request.shapes, request.shapeValues, profile, error)) {
      return failed(error);
    }
    if (!profile.empty()) {
      nvinfer1::IOptimizationProfile* p = builder->createOptimizationProfile();  // owned by builder
      if (p == nullptr) return failed(withLastError("TensorRT could not create an optimization profile"));
      for (auto const& e : profile) {
        if (e.setDims && (!p->setDimensions(e.input.c_str(), nvinfer1::OptProfileSelector::kMIN, e.min) ||
                          !p->setDimensions(e.input.c_str(), nvinfer1::OptProfileSelector::kOPT, e.opt) ||
                          !p->setDimensions(e.input.c_str(), nvinfer1::OptProfileSelector::kMAX, e.max))) {
          return failed(withLastError("TensorRT rejected the shapes of input \"" + e.input + "\""));
        }
        if (e.setValues && !setShapeValues(*p, e, lib, error)) return failed(error);
      }
      if (config->addOptimizationProfile(p) < 0) {
        return failed(withLastError("TensorRT rejected the optimization profile"));
      }
    }

    trt::BuilderConfigCaches caches(*config);
    if (cacheUsed) {
      if (!cacheSession.load(caches, request.timingCachePath, stats, error, plan.pinnedCache)) return finish(failed(error));
      cacheLoaded = true;
      if (plan.pinnedCache) {
        sink.log(Severity::kInfo, ("pinned build: timing cache " + request.timingCachePath +
                                   " is read only, and a tactic it lacks fails the build (kERROR_ON_TIMING_CACHE_MISS)")
                                      .c_str());
      }
      if (plan.optLevel == 0) {
        stats.warning += std::string(stats.warning.empty() ? "" : "; ") + "builder optimization level 0 does not use the timing cache";
      }
    }
    config->setProgressMonitor(&monitor);
    if (sink.cancelRequested()) return finish(cancelled());

    AtomicFile engineFile(request.outputPath);
    std::unique_ptr<nvinfer1::IHostMemory> engine;
    bool built = false;
    bool streamed = false;
    std::string streamError;
#if TBS_TRT_HEADERS_AT_LEAST(10, 13)
    if (streamBuildUsable(lib)) {
      streamed = true;
      if (!engineFile.open()) return finish(failed(engineFile.error()));
      trt::EngineStreamWriter writer(engineFile);
      built = builder->buildSerializedNetworkToStream(*network, *config, writer);
      if (writer.failed()) streamError = engineFile.error();
    }
#endif
    if (!streamed) {
      engine.reset(builder->buildSerializedNetwork(*network, *config));
      built = engine != nullptr && engine->data() != nullptr && engine->size() > 0;
    }
    config->setProgressMonitor(nullptr);

    // What the build returns after a cancel is undocumented: any result while the cancel flag
    // is set counts as cancelled, and no engine is written. The entries the builder measured
    // before it stopped are in the config's cache now and are worth keeping.
    if (sink.cancelRequested() || monitor.stopAsked()) {
      if (cacheLoaded && !plan.pinnedCache) {
        stats.entriesAfter = cacheSession.entryCount(caches);
        bool grew = stats.entriesAfter < 0 || stats.entriesBefore < 0 || stats.entriesAfter > stats.entriesBefore;
        if (grew && cacheSession.save(caches, stats)) stats.savedAfterCancel = true;
      }
      return finish(cancelled());
    }
    // A pinned build measures nothing: a cache that grew means TensorRT timed a tactic the pinned
    // cache lacked, which is a cache miss whatever the builder returned (10.8+: entry counts).
    if (cacheLoaded && plan.pinnedCache) {
      stats.entriesAfter = cacheSession.entryCount(caches);
      if (stats.entriesBefore >= 0 && stats.entriesAfter > stats.entriesBefore) {
        std::string const miss = "pinned build: timing cache miss: the pinned timing cache " + request.timingCachePath + " grew from " +
                                 std::to_string(stats.entriesBefore) + " to " + std::to_string(stats.entriesAfter) +
                                 " entries during the build, so TensorRT timed tactics it lacks" +
                                 (built ? " although it returned an engine; no engine is written" : "") +
                                 " (build once with timingCache to fill it; the file is left untouched)";
        return finish(failed(built ? miss : withLastError(miss)));
      }
    }
    if (!built) {
      if (!streamError.empty()) return finish(failed("cannot write the engine: " + streamError));
      if (plan.pinnedCache) {
        return finish(failed(withLastError("TensorRT could not build the engine from the pinned timing cache " + request.timingCachePath +
                                           " (a tactic it lacks fails a pinned build; build once with timingCache to fill it)")));
      }
      return finish(failed(withLastError("TensorRT could not build the engine")));
    }

    if (cacheLoaded) {
      stats.entriesAfter = cacheSession.entryCount(caches);
      if (plan.inferCacheMisses) {
        stats.misses = logger.autotuningLines();
        stats.missesInferred = true;
      }
      // A pinned cache is read only: the file stays byte for byte what the build was pinned to.
      if (!plan.pinnedCache) cacheSession.save(caches, stats);  // failure is a warning in stats, not a failed build
    }

    BuildOutcome ok;
    ok.status = BuildOutcome::Status::kSucceeded;
    if (streamed) {
      ok.engineBytes = engineFile.bytesWritten();
      if (ok.engineBytes <= 0) return finish(failed(withLastError("TensorRT wrote an empty engine")));
      if (!engineFile.commit()) return finish(failed(engineFile.error()));
    } else {
      AtomicWriteResult written = atomicWriteFile(request.outputPath, engine->data(), engine->size());
      if (!written.ok) return finish(failed(written.error));
      ok.engineBytes = static_cast<int64_t>(engine->size());
    }
    ok.outputPath = request.outputPath;
    // The engine is in place: nothing from here on can fail the build, a problem is a warning.
    try {
      // The engine's layer information beside it, as trtexec --exportLayerInfo (trt_layer_info.h).
      // A streamed engine is read from its file through a stream: the builder kept no copy, and
      // it is never read back whole into memory.
      trt::LayerInfoRequest info;
      info.path = trt::layerInfoPathFor(request.outputPath);
      info.factoryVersion = trt::factoryVersion(trt::kHeaderVersion, lib);
      info.versionCompatible = request.versionCompatible;
      info.dynamicPlugins = runtimePlugins;
      std::string const problem = streamed ? trt::saveLayerInformationFromFile(*libs, request.outputPath, info)
                                           : trt::saveLayerInformation(*libs, engine->data(), engine->size(), info);
      if (!problem.empty()) sink.log(Severity::kWarning, problem.c_str());
    } catch (std::exception const& e) {
      sink.log(Severity::kWarning, (std::string("no layer information saved: ") + e.what()).c_str());
    } catch (...) {
      sink.log(Severity::kWarning, "no layer information saved: internal error");
    }
    return finish(ok);
  }

  trt::LoaderConfig config_;
};

}  // namespace

std::unique_ptr<Backend> makeTensorRtBackend(trt::AdapterContext const& context) {
  trt::LoaderConfig c;
  c.nvinferLib = context.nvinferPath;
  c.onnxParserLib = context.onnxParserPath;
  c.expectedMajor = NV_TENSORRT_MAJOR;
  return std::make_unique<TrtBackend>(std::move(c));
}

std::unique_ptr<Backend> makeTensorRtBackend() { return std::make_unique<TrtBackend>(trt::loaderConfigFromEnv(NV_TENSORRT_MAJOR)); }

}  // namespace tbs
