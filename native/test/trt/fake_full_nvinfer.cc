// A scripted stand-in for libnvinfer.so.<major> (test-only, our own code; not NVIDIA's library),
// compiled against each header set under test and reporting FAKE_TRT_VERSION (which may be older
// than the headers, like a 10.3 library driven by a 10.16-built adapter). It validates what
// TensorRT validates: a BuilderFlag, hardware level or method the reported version does not have
// is an error in the journal ("invalid ...") and fails the build; caches of another version are
// never combined, of another device only with ignoreMismatch. It
// returns working IBuilder / INetworkDefinition / IBuilderConfig / IOptimizationProfile /
// ITimingCache / IHostMemory objects built on the headers' implementation interfaces (apiv::V*,
// with do-nothing stubs generated from the headers by gen_stubs.py), records every setting the
// backend makes in a journal, and "builds" by driving the attached IProgressMonitor from several
// threads as TensorRT does. What it cannot tell us: anything about real TensorRT behaviour
// beyond the documented API contracts it imitates.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_full_script.h"
#include "fake_objects.h"
#include "fake_plugin_registry.h"
#include "trt_stubs.h"  // generated at configure time by gen_stubs.py

#define FAKE_HEADERS_AT_LEAST(maj, min) (NV_TENSORRT_MAJOR > (maj) || (NV_TENSORRT_MAJOR == (maj) && NV_TENSORRT_MINOR >= (min)))

namespace {

constexpr int32_t kVersion = FAKE_TRT_VERSION;
bool versionAtLeast(int major, int minor) { return kVersion >= major * 10000 + minor * 100; }
std::string const kCacheTag = std::to_string(kVersion) + "/dev0";
std::atomic<bool> invalidCall{false};

std::mutex journalMu;
std::string journal;

void note(std::string const& line) {
  std::lock_guard<std::mutex> lock(journalMu);
  journal += line + "\n";
}

// What a real library of kVersion would reject (an enum value it does not know, a method past
// the end of its vtable): noted, and the build then fails.
void invalid(std::string const& what) {
  note("invalid " + what);
  invalidCall = true;
}

// Empty until a plugin library registers creators (fake_plugin_registry.h).
tbs_fake::FakePluginRegistry& registry() {
  static auto* r = [] {
    auto* made = new tbs_fake::FakePluginRegistry();
    made->journal = note;
    return made;
  }();
  return *r;
}

// What IRuntime::getPluginRegistry() answers: a registry of its own here, so that a test sees
// which libraries were loaded for the runtime (real TensorRT's may be the process's registry).
tbs_fake::FakePluginRegistry& runtimeRegistry() {
  static auto* r = [] {
    auto* made = new tbs_fake::FakePluginRegistry();
    made->journal = note;
    made->label = "runtime registry";
    return made;
  }();
  return *r;
}

bool flagKnown(nvinfer1::BuilderFlag f) {
  int v = static_cast<int>(f);
  if (v < 0 || v >= nvinfer1::EnumMax<nvinfer1::BuilderFlag>()) return false;
#if NV_TENSORRT_MAJOR == 10
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#if FAKE_HEADERS_AT_LEAST(10, 1)
  if (f == nvinfer1::BuilderFlag::kINT4 && !versionAtLeast(10, 1)) return false;
#endif
#if FAKE_HEADERS_AT_LEAST(10, 8)
  if ((f == nvinfer1::BuilderFlag::kFP4 || f == nvinfer1::BuilderFlag::kEDITABLE_TIMING_CACHE) && !versionAtLeast(10, 8)) {
    return false;
  }
#endif
#pragma GCC diagnostic pop
#endif
  return true;
}

std::string dimsText(nvinfer1::Dims const& d) {
  std::string s;
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "," : "") + std::to_string(d.d[i]);
  return s;
}

class FakeTensor final : public nvinfer1::ITensor {
 public:
  FakeTensor(std::string name, nvinfer1::Dims dims, bool shape) : impl_(std::move(name), dims, shape) { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVTensor {
    Impl(std::string n, nvinfer1::Dims d, bool s) : name(std::move(n)), dims(d), shape(s) {}
    char const* getName() const noexcept override { return name.c_str(); }
    nvinfer1::Dims getDimensions() const noexcept override { return dims; }
    bool isShapeTensor() const noexcept override { return shape; }
    nvinfer1::DataType getType() const noexcept override { return type; }
#if NV_TENSORRT_MAJOR < 11
    void setType(nvinfer1::DataType t) noexcept override {
      note("tensorType " + name + " " + std::to_string(static_cast<int>(t)));
      type = t;
    }
#endif
    void setAllowedFormats(nvinfer1::TensorFormats f) noexcept override { note("allowedFormats " + name + " " + std::to_string(f)); }
    nvinfer1::DataType type = nvinfer1::DataType::kFLOAT;
    std::string name;
    nvinfer1::Dims dims;
    bool shape;
  } impl_;
};

class FakeNetwork final : public nvinfer1::INetworkDefinition {
 public:
  FakeNetwork(nvinfer1::NetworkDefinitionCreationFlags flags, nvinfer1::IBuilder* builder) {
    impl_.flags = flags;
    impl_.builder = builder;
    mImpl = &impl_;
  }
  ~FakeNetwork() noexcept override { note("delete network"); }

 private:
  struct Impl final : nvinfer1::apiv::StubVNetworkDefinition {
    // The fake parser marks a shape-tensor input with DataType::kINT64 (a real parser infers it
    // from the graph; TensorRT answers isShapeTensor()).
    nvinfer1::ITensor* addInput(char const* name, nvinfer1::DataType type, nvinfer1::Dims const& dims) noexcept override {
      inputs.push_back(std::make_unique<FakeTensor>(name, dims, type == nvinfer1::DataType::kINT64));
      return inputs.back().get();
    }
    int32_t getNbInputs() const noexcept override { return static_cast<int32_t>(inputs.size()); }
    nvinfer1::ITensor* getInput(int32_t i) const noexcept override {
      return i >= 0 && i < getNbInputs() ? inputs[static_cast<size_t>(i)].get() : nullptr;
    }
    // The real ONNX parser asks the network for its builder (plugin and platform queries): a
    // parser of another release reaches another slot here (10.8 and 10.9 moved getBuilder).
    nvinfer1::IBuilder& getBuilder() const noexcept override { return *builder; }
    nvinfer1::IBuilder* builder = nullptr;
    void setName(char const* n) noexcept override { name = n; }
    char const* getName() const noexcept override { return name.c_str(); }
    nvinfer1::NetworkDefinitionCreationFlags getFlags() const noexcept override { return flags; }
    nvinfer1::NetworkDefinitionCreationFlags flags = 0;
    std::vector<std::unique_ptr<FakeTensor>> inputs;
    std::string name;
  } impl_;
};

class FakeProfile final : public nvinfer1::IOptimizationProfile {
 public:
  FakeProfile() { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVOptimizationProfile {
    bool setDimensions(char const* input, nvinfer1::OptProfileSelector sel, nvinfer1::Dims const& d) noexcept override {
      static char const* const names[] = {"min", "opt", "max"};
      note(std::string("profile ") + input + " " + names[static_cast<int>(sel)] + " " + dimsText(d));
      return true;
    }
#if NV_TENSORRT_MAJOR == 10
    bool setShapeValues(char const* input, nvinfer1::OptProfileSelector sel, int32_t const* v, int32_t n) noexcept override {
      return values("setShapeValues", input, sel, std::vector<int64_t>(v, v + n));
    }
#endif
#if FAKE_HEADERS_AT_LEAST(10, 11)
    bool setShapeValuesV2(char const* input, nvinfer1::OptProfileSelector sel, int64_t const* v, int32_t n) noexcept override {
      if (!versionAtLeast(10, 11)) {
        invalid("call setShapeValuesV2");
        return false;
      }
      return values("setShapeValuesV2", input, sel, std::vector<int64_t>(v, v + n));
    }
#endif
    bool values(char const* fn, char const* input, nvinfer1::OptProfileSelector sel, std::vector<int64_t> const& v) {
      static char const* const names[] = {"min", "opt", "max"};
      std::string text;
      for (size_t i = 0; i < v.size(); ++i) text += (i ? "," : "") + std::to_string(v[i]);
      note(std::string(fn) + " " + input + " " + names[static_cast<int>(sel)] + " " + text);
      return true;
    }
  } impl_;
};

class FakeConfig final : public nvinfer1::IBuilderConfig {
 public:
  FakeConfig() { mImpl = &impl_; }
  ~FakeConfig() noexcept override { note("delete config"); }
  // ProfilingVerbosity as set (TensorRT's default is kLAYER_NAMES_ONLY, 0).
  int verbosity() const { return impl_.verbosityValue; }

 private:
  struct Impl final : nvinfer1::apiv::StubVBuilderConfig {
    void setPluginsToSerialize(char const* const* paths, int32_t nbPaths) noexcept override {
      for (int32_t i = 0; i < nbPaths; ++i) note(std::string("pluginToSerialize ") + paths[i]);
    }
    void setFlag(nvinfer1::BuilderFlag f) noexcept override {
      if (!flagKnown(f)) return invalid("flag " + std::to_string(static_cast<int>(f)));
      note("setFlag " + std::to_string(static_cast<int>(f)));
      flags |= 1ULL << static_cast<int>(f);
    }
    void clearFlag(nvinfer1::BuilderFlag f) noexcept override {
      if (!flagKnown(f)) return invalid("flag " + std::to_string(static_cast<int>(f)));
      note("clearFlag " + std::to_string(static_cast<int>(f)));
      flags &= ~(1ULL << static_cast<int>(f));
    }
    bool getFlag(nvinfer1::BuilderFlag f) const noexcept override { return flagKnown(f) && ((flags >> static_cast<int>(f)) & 1U); }
    uint64_t flags = 0;
    void setBuilderOptimizationLevel(int32_t level) noexcept override { note("optLevel " + std::to_string(level)); }
    bool setTacticSources(nvinfer1::TacticSources t) noexcept override {
      note("tacticSources " + std::to_string(t));
      tactics = t;
      return true;
    }
    nvinfer1::TacticSources getTacticSources() const noexcept override { return tactics; }
    void setAvgTimingIterations(int32_t n) noexcept override { note("avgTiming " + std::to_string(n)); }
    void setPreviewFeature(nvinfer1::PreviewFeature f, bool on) noexcept override {
      note("preview " + std::to_string(static_cast<int>(f)) + (on ? " on" : " off"));
    }
    // TensorRT's defaults: every source the headers have (the adapter adds and removes bits).
    nvinfer1::TacticSources tactics = 0xFFU;
    void setMemoryPoolLimit(nvinfer1::MemoryPoolType pool, std::size_t bytes) noexcept override {
      note("pool " + std::to_string(static_cast<int>(pool)) + " " + std::to_string(bytes));
    }
    void setProfilingVerbosity(nvinfer1::ProfilingVerbosity v) noexcept override {
      note("verbosity " + std::to_string(static_cast<int>(v)));
      verbosityValue = static_cast<int>(v);
    }
    int verbosityValue = static_cast<int>(nvinfer1::ProfilingVerbosity::kLAYER_NAMES_ONLY);
    void setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel l) noexcept override {
      int v = static_cast<int>(l);
      if (v >= nvinfer1::EnumMax<nvinfer1::HardwareCompatibilityLevel>() || (v == 2 && !versionAtLeast(10, 9))) {
        return invalid("hwcompat " + std::to_string(v));
      }
      note("hwcompat " + std::to_string(v));
    }
#if FAKE_HEADERS_AT_LEAST(11, 1)
    bool setBuildRoute(char const* route) noexcept override {
      if (!versionAtLeast(11, 1)) {
        invalid("call setBuildRoute");
        return false;
      }
      if (std::string(route).rfind("-", 0) != 0) return false;  // not an option string
      buildRoute = route;
      note(std::string("buildRoute ") + route);
      return true;
    }
    char const* getBuildRoute() const noexcept override { return buildRoute.c_str(); }
    // FAKE_TRT_BUILD_ROUTES, when set (even empty: a build that lists no routes), replaces the
    // header's example database.
    char const* getAllBuildRoutes() const noexcept override {
      note("getAllBuildRoutes");
      if (char const* routes = std::getenv("FAKE_TRT_BUILD_ROUTES")) {
        allRoutes = routes;
        return allRoutes.c_str();
      }
      return "{\"tuner_version\": \"2.19.15\", \"tuner_options\": [{\"option\": \"-conv_use_long_w\", "
             "\"allowed_values\": \"-conv_use_long_w=[on|off]\", \"default_value\": \"on\"}, {\"option\": "
             "\"-kgen:codegen:cuda_tile\", \"allowed_values\": \"-kgen:codegen:cuda_tile=[0|1|2|3]\"}]}";
    }
    mutable std::string allRoutes;
    std::string buildRoute;
#endif
#if NV_TENSORRT_MAJOR >= 11  // returns success since 11.0
    bool setMaxAuxStreams(int32_t n) noexcept override {
      note("auxStreams " + std::to_string(n));
      return n >= 0;
    }
#else
    void setMaxAuxStreams(int32_t n) noexcept override { note("auxStreams " + std::to_string(n)); }
#endif
    void setProgressMonitor(nvinfer1::IProgressMonitor* m) noexcept override {
      monitor = m;
      note(m != nullptr ? "monitor set" : "monitor cleared");
    }
    nvinfer1::IProgressMonitor* getProgressMonitor() const noexcept override { return monitor; }
    nvinfer1::ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept override {
      return tbs_fake::createFakeCache(blob, size, nullptr, kCacheTag, tbs_fake::badCacheBytesFromEnv());
    }
    bool setTimingCache(nvinfer1::ITimingCache const& cache, bool ignoreMismatch) noexcept override {
      auto const* c = dynamic_cast<tbs_fake::FakeTimingCache const*>(&cache);
      note(std::string("timingCache ignoreMismatch=") + (ignoreMismatch ? "1" : "0"));
      if (c != nullptr && !c->tag().empty() && c->tag() != kCacheTag && !ignoreMismatch) return false;
      attached = &cache;
      return true;
    }
    nvinfer1::ITimingCache const* getTimingCache() const noexcept override { return attached; }
    int32_t addOptimizationProfile(nvinfer1::IOptimizationProfile const*) noexcept override {
      note("addProfile");
      return 0;
    }
    nvinfer1::IProgressMonitor* monitor = nullptr;
    nvinfer1::ITimingCache const* attached = nullptr;
  } impl_;
};

// The "build": TensorRT-shaped phases driven from several threads through the attached monitor.
nvinfer1::IHostMemory* fakeBuild(nvinfer1::ILogger* logger, nvinfer1::INetworkDefinition& network, nvinfer1::IBuilderConfig& config) {
  note("build");
  std::string const directives = network.getName();
  std::string message;
  if (invalidCall.exchange(false)) {
    logger->log(nvinfer1::ILogger::Severity::kERROR, "fake libnvinfer: an option this version does not have was set");
    return nullptr;
  }
  if (auto const* attached = config.getTimingCache()) {
    // Like TensorRT, the build adds its measurements to the cache the config was given, as it
    // measures them (so a cancelled build has some).
    auto* cache = dynamic_cast<tbs_fake::FakeTimingCache*>(const_cast<nvinfer1::ITimingCache*>(attached));
    std::string prefix = "entry";
    tbs_fake::hasDirective(directives, "cache-prefix", &prefix);
    // kERROR_ON_TIMING_CACHE_MISS: a tactic the attached cache lacks fails the build with an
    // ERROR. (The flag's documented effect; the words of real TensorRT's error are not known here.)
    // "cache-miss-silent": a library that times the missing tactics anyway and returns an engine
    // (what a pinned build must not take on trust).
    bool const errorOnMiss =
        config.getFlag(nvinfer1::BuilderFlag::kERROR_ON_TIMING_CACHE_MISS) && !tbs_fake::hasDirective(directives, "cache-miss-silent");
    for (int64_t i = 0; cache != nullptr && i < tbs_fake::directive(directives, "cache-add", 0); ++i) {
      std::string const key = prefix + "-" + std::to_string(i);
      if (errorOnMiss && cache->keys().count(key) == 0) {
        note("timing cache miss " + key);
        logger->log(nvinfer1::ILogger::Severity::kERROR,
                    ("fake libnvinfer: timing cache miss for " + key + " while kERROR_ON_TIMING_CACHE_MISS is set").c_str());
        return nullptr;
      }
      cache->add(key);
    }
  }
  if (tbs_fake::hasDirective(directives, "build-fail", &message)) {
    logger->log(nvinfer1::ILogger::Severity::kERROR, message.c_str());
    return nullptr;
  }
  nvinfer1::IProgressMonitor* monitor = config.getProgressMonitor();
  if (monitor == nullptr) {
    logger->log(nvinfer1::ILogger::Severity::kERROR, "fake builder: no progress monitor attached");
    return nullptr;
  }
  bool const waitCancel = tbs_fake::hasDirective(directives, "wait-cancel");
  bool const ignoreStop = tbs_fake::hasDirective(directives, "ignore-stop");
  int const threads = static_cast<int>(tbs_fake::directive(directives, "threads", 3));
  int const steps = waitCancel ? 1000000 : static_cast<int>(tbs_fake::directive(directives, "steps", 20));
  std::atomic<bool> stopped{false};
  auto step = [&](char const* phase, int i) {
    if (monitor->stepComplete(phase, i)) return true;
    stopped = true;
    return ignoreStop;
  };
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);

  monitor->phaseStart("Building engine", nullptr, 2);
  monitor->phaseStart("Timing graph nodes", "Building engine", threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::string name = "Measuring tactic time " + std::to_string(t);
      monitor->phaseStart(name.c_str(), "Timing graph nodes", steps);
      for (int i = 0; i < steps && std::chrono::steady_clock::now() < deadline; ++i) {
        if (!step(name.c_str(), i)) break;
        if (waitCancel) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      monitor->phaseFinish(name.c_str());  // may be early, as TensorRT's may
    });
  }
  for (auto& w : workers) w.join();
  for (int i = 1; i < threads && (!stopped || ignoreStop); ++i) step("Timing graph nodes", i);
  monitor->phaseFinish("Timing graph nodes");
  if (!stopped || ignoreStop) step("Building engine", 1);
  monitor->phaseFinish("Building engine");
  if (stopped && !ignoreStop) return nullptr;

  for (int64_t i = 0; i < tbs_fake::directive(directives, "autotune", 0); ++i) {
    logger->log(nvinfer1::ILogger::Severity::kVERBOSE, ("Autotuning op fake_" + std::to_string(i) + " (Conv)").c_str());
  }
  // The engine says what the inspector will need: the profiling verbosity it was built with.
  auto const* fc = dynamic_cast<FakeConfig const*>(&config);
  std::string engine = "FAKE-ENGINE\nverbosity " + std::to_string(fc != nullptr ? fc->verbosity() : 0) + "\n";
  engine.resize(static_cast<size_t>(tbs_fake::directive(directives, "engine-bytes", 4096)), '.');
  return new tbs_fake::FakeHostMemory(engine);
}

class FakeBuilder final : public nvinfer1::IBuilder {
 public:
  explicit FakeBuilder(nvinfer1::ILogger* logger) {
    impl_.logger = logger;
    impl_.owner = this;
    mImpl = &impl_;
  }
  ~FakeBuilder() noexcept override { note("delete builder"); }

 private:
  struct Impl final : nvinfer1::apiv::StubVBuilder {
    nvinfer1::IBuilderConfig* createBuilderConfig() noexcept override { return new FakeConfig(); }
    nvinfer1::INetworkDefinition* createNetworkV2(nvinfer1::NetworkDefinitionCreationFlags flags) noexcept override {
      note("network flags=" + std::to_string(flags));
      return new FakeNetwork(flags, owner);
    }
    nvinfer1::IPluginRegistry& getPluginRegistry() noexcept override { return registry(); }
    nvinfer1::IOptimizationProfile* createOptimizationProfile() noexcept override {
      profiles.push_back(std::make_unique<FakeProfile>());  // owned by the builder, as documented
      return profiles.back().get();
    }
    nvinfer1::IHostMemory* buildSerializedNetwork(nvinfer1::INetworkDefinition& network,
                                                  nvinfer1::IBuilderConfig& config) noexcept override {
      note("buildSerializedNetwork");
      return fakeBuild(logger, network, config);
    }
#if FAKE_HEADERS_AT_LEAST(10, 13)
    bool buildSerializedNetworkToStream(nvinfer1::INetworkDefinition& network, nvinfer1::IBuilderConfig& config,
                                        nvinfer1::IStreamWriter& writer) noexcept override {
      if (!versionAtLeast(10, 13)) {
        invalid("call buildSerializedNetworkToStream");
        return false;
      }
      note("buildSerializedNetworkToStream");
      std::unique_ptr<nvinfer1::IHostMemory> engine(fakeBuild(logger, network, config));
      if (!engine) return false;
      // In pieces, as a streaming builder hands them over.
      auto const* p = static_cast<char const*>(engine->data());
      int64_t left = static_cast<int64_t>(engine->size());
      int chunks = 0;
      while (left > 0) {
        int64_t n = left < 1000 ? left : 1000;
        if (writer.write(p, n) != n) return false;
        p += n, left -= n, ++chunks;
      }
      note("chunks " + std::to_string(chunks));
      return true;
    }
#endif
    nvinfer1::ILogger* logger = nullptr;
    nvinfer1::IBuilder* owner = nullptr;
    std::vector<std::unique_ptr<FakeProfile>> profiles;
  } impl_;
};

// IEngineInspector::getEngineInformation(kJSON) of a fake engine, shaped as TensorRT's is
// publicly documented and shown (NOT observed here): {"Layers": [...], "Bindings": [...]}, each
// layer only its name below kDETAILED, else an object with Name, LayerType, Inputs/Outputs
// (Name, Location, Dimensions, Format/Datatype), TacticName and TacticValue.
std::string inspectorJson(int verbosity) {
  if (verbosity != static_cast<int>(nvinfer1::ProfilingVerbosity::kDETAILED)) {
    return "{\"Layers\": [\"fake_conv\", \"fake_relu\"],\n\"Bindings\": [\"x\", \"y\"]}";
  }
  auto io = [](char const* name, char const* format) {
    return std::string("{\"Name\": \"") + name + "\", \"Location\": \"Device\", \"Dimensions\": [1,4], \"Format/Datatype\": \"" + format +
           "\"}";
  };
  return std::string("{\"Layers\": [") + "{\"Name\": \"fake_conv\", \"LayerType\": \"CaskConvolution\", \"Inputs\": [" +
         io("x", "Row major linear FP32") + "], \"Outputs\": [" + io("fake_conv_out", "Channel major FP16 format where channel % 8 == 0") +
         "], \"ParameterType\": \"Convolution\", \"TacticName\": \"fake_sm90_xmma_fprop_f16\", \"TacticValue\": \"0x0000000000000007\"}, " +
         "{\"Name\": \"fake_relu\", \"LayerType\": \"PointWiseV2\", \"Inputs\": [" +
         io("fake_conv_out", "Channel major FP16 format where channel % 8 == 0") + "], \"Outputs\": [" + io("y", "Row major linear FP32") +
         "], \"TacticName\": \"fake_pointwise\", \"TacticValue\": \"0x0000000000000002\"}],\n\"Bindings\": [\"x\", \"y\"]}";
}

class FakeInspector final : public nvinfer1::IEngineInspector {
 public:
  explicit FakeInspector(int verbosity) : impl_(inspectorJson(verbosity)) { mImpl = &impl_; }
  ~FakeInspector() noexcept override { note("delete inspector"); }

 private:
  struct Impl final : nvinfer1::apiv::StubVEngineInspector {
    explicit Impl(std::string j) : json(std::move(j)) {}
    char const* getEngineInformation(nvinfer1::LayerInformationFormat format) const noexcept override {
      note(std::string("getEngineInformation ") + (format == nvinfer1::LayerInformationFormat::kJSON ? "json" : "oneline"));
      return format == nvinfer1::LayerInformationFormat::kJSON ? json.c_str() : "fake_conv\nfake_relu\n";
    }
    std::string json;
  } impl_;
};

class FakeEngine final : public nvinfer1::ICudaEngine {
 public:
  explicit FakeEngine(int verbosity) : impl_(verbosity) { mImpl = &impl_; }
  ~FakeEngine() noexcept override { note("delete engine"); }

 private:
  struct Impl final : nvinfer1::apiv::StubVCudaEngine {
    explicit Impl(int v) : verbosity(v) {}
    nvinfer1::IEngineInspector* createEngineInspector() const noexcept override { return new FakeInspector(verbosity); }
    int verbosity;
  } impl_;
};

// Loads what fakeBuild wrote ("FAKE-ENGINE\nverbosity <n>\n..."); anything else is refused with
// an ERROR, as a real runtime refuses bytes that are not an engine of its version.
class FakeRuntime final : public nvinfer1::IRuntime {
 public:
  explicit FakeRuntime(nvinfer1::ILogger* logger) {
    impl_.logger = logger;
    mImpl = &impl_;
  }
  ~FakeRuntime() noexcept override { note("delete runtime"); }

 private:
  struct Impl final : nvinfer1::apiv::StubVRuntime {
    nvinfer1::ICudaEngine* deserializeCudaEngine(void const* blob, std::size_t size) noexcept override {
      note("deserializeCudaEngine " + std::to_string(size));
      return load(std::string(static_cast<char const*>(blob), size < 64 ? size : 64));
    }
#if FAKE_HEADERS_AT_LEAST(10, 7)
    // Reads the whole engine through the reader in pieces, after a seek back to its start, as a
    // streaming runtime may; notes how many bytes it read and the largest piece.
    nvinfer1::ICudaEngine* deserializeCudaEngineV2(nvinfer1::IStreamReaderV2& reader) noexcept override {
      if (!versionAtLeast(10, 7)) {
        invalid("call deserializeCudaEngineV2");
        return nullptr;
      }
      if (!reader.seek(0, nvinfer1::SeekPosition::kSET)) {
        note("deserializeCudaEngineV2 seek failed");
        return nullptr;
      }
      std::string head;
      char piece[1024];
      int64_t total = 0;
      for (;;) {
        int64_t n = reader.read(piece, sizeof piece, nullptr);
        if (n < 0) {
          note("deserializeCudaEngineV2 read failed");
          return nullptr;
        }
        if (n == 0) break;
        if (head.size() < 64) head.append(piece, static_cast<size_t>(n < 64 ? n : 64));
        total += n;
      }
      note("deserializeCudaEngineV2 " + std::to_string(total));
      return load(head);
    }
#endif
    nvinfer1::ICudaEngine* load(std::string const& head) {
      std::string const magic = "FAKE-ENGINE\nverbosity ";
      if (head.rfind(magic, 0) != 0) {
        if (logger != nullptr) logger->log(nvinfer1::ILogger::Severity::kERROR, "fake runtime: not an engine of this library");
        return nullptr;
      }
      return new FakeEngine(std::atoi(head.c_str() + magic.size()));
    }
    nvinfer1::IPluginRegistry& getPluginRegistry() noexcept override { return runtimeRegistry(); }
    // Recorded so a test sees a version-compatible engine was loaded as trtexec loads one.
    void setEngineHostCodeAllowed(bool allowed) noexcept override { note(std::string("hostCodeAllowed ") + (allowed ? "1" : "0")); }
    nvinfer1::ILogger* logger = nullptr;
  } impl_;
};

}  // namespace

extern "C" {

int32_t getInferLibVersion() noexcept { return kVersion; }

// Refuses a version newer than itself: an adapter built with newer headers must declare the
// older release it drives (what a real library does with a newer version is assumed, not observed).
void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
  note("createInferBuilder version=" + std::to_string(version));
  if (version > kVersion) {
    if (logger != nullptr) {
      std::string msg = "fake libnvinfer " + std::to_string(kVersion) + ": createInferBuilder_INTERNAL version " + std::to_string(version) +
                        " is newer than this library";
      static_cast<nvinfer1::ILogger*>(logger)->log(nvinfer1::ILogger::Severity::kERROR, msg.c_str());
    }
    return nullptr;
  }
  return static_cast<nvinfer1::IBuilder*>(new FakeBuilder(static_cast<nvinfer1::ILogger*>(logger)));
}

void* createInferRuntime_INTERNAL(void* logger, int32_t version) noexcept {
  note("createInferRuntime version=" + std::to_string(version));
  if (version > kVersion) return nullptr;  // as the builder factory: not newer than itself
  return static_cast<nvinfer1::IRuntime*>(new FakeRuntime(static_cast<nvinfer1::ILogger*>(logger)));
}

__attribute__((visibility("default"))) nvinfer1::IPluginRegistry* getPluginRegistry() noexcept { return &registry(); }

// The journal, for the tests (read via dlsym). The returned pointer is valid until the next call.
__attribute__((visibility("default"))) char const* fakeFullJournal() {
  static std::string copy;
  std::lock_guard<std::mutex> lock(journalMu);
  copy = journal;
  return copy.c_str();
}

__attribute__((visibility("default"))) void fakeFullJournalClear() {
  std::lock_guard<std::mutex> lock(journalMu);
  journal.clear();
}

}  // extern "C"
