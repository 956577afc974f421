// A stand-in for libnvinfer.so.<major> for the watch shim's tests (test-only, our own code, not
// NVIDIA's library), compiled against one major's headers. Its objects are built the way
// libnvinfer builds them (public classes over apiv::V* implementation objects; the stubs are
// generated from the headers by native/test/trt/gen_stubs.py), so the shim meets the same
// layouts and virtual tables it meets in a real library. Its "build" drives the config's progress
// monitor from several threads with a TensorRT-shaped phase tree and returns nullptr when a
// stepComplete answered false. It says nothing about how real TensorRT behaves beyond the
// documented monitor contract it imitates. On stderr it reports what it did, for the tests:
//   fake: callbacks starts=<n> steps=<n> finishes=<n> cancelled=<0|1>
// Environment: FAKE_WATCH_STEPS (steps of the long phases, default 12), FAKE_WATCH_STEP_US
// (sleep per step, default 0).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "trt_stubs.h"  // generated at configure time (watch tests.cmake)

namespace {

long envInt(char const* name, long fallback) {
  char const* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atol(v) : fallback;
}

class HostMemory final : public nvinfer1::IHostMemory {
 public:
  explicit HostMemory(std::string bytes) : impl_(std::move(bytes)) { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::VHostMemory {
    explicit Impl(std::string b) : bytes(std::move(b)) {}
    void* data() const noexcept override { return const_cast<char*>(bytes.data()); }
    std::size_t size() const noexcept override { return bytes.size(); }
    nvinfer1::DataType type() const noexcept override { return nvinfer1::DataType::kUINT8; }
    std::string bytes;
  } impl_;
};

// A timing cache that reports FAKE_WATCH_CACHE_ENTRIES keys (default 5) to queryKeys(nullptr, 0).
class TimingCache final : public nvinfer1::ITimingCache {
 public:
  TimingCache() { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVTimingCache {
    int64_t queryKeys(nvinfer1::TimingCacheKey* keys, int64_t) const noexcept override {
      return keys == nullptr ? envInt("FAKE_WATCH_CACHE_ENTRIES", 5) : 0;
    }
  } impl_;
};

class Tensor final : public nvinfer1::ITensor {
 public:
  Tensor(std::string name, nvinfer1::DataType type, nvinfer1::Dims dims) : impl_(std::move(name), type, dims) { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVTensor {
    Impl(std::string n, nvinfer1::DataType t, nvinfer1::Dims d) : name(std::move(n)), type(t), dims(d) {}
    char const* getName() const noexcept override { return name.c_str(); }
    nvinfer1::Dims getDimensions() const noexcept override { return dims; }
    nvinfer1::DataType getType() const noexcept override { return type; }
    std::string name;
    nvinfer1::DataType type;
    nvinfer1::Dims dims;
  } impl_;
};

class Network final : public nvinfer1::INetworkDefinition {
 public:
  Network() { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVNetworkDefinition {
    nvinfer1::ITensor* addInput(char const* name, nvinfer1::DataType type, nvinfer1::Dims const& dims) noexcept override {
      tensors.push_back(std::make_unique<Tensor>(name, type, dims));
      inputs.push_back(tensors.back().get());
      return inputs.back();
    }
    void markOutput(nvinfer1::ITensor& t) noexcept override { outputs.push_back(&t); }
    int32_t getNbInputs() const noexcept override { return static_cast<int32_t>(inputs.size()); }
    nvinfer1::ITensor* getInput(int32_t i) const noexcept override {
      return i >= 0 && i < getNbInputs() ? inputs[static_cast<size_t>(i)] : nullptr;
    }
    int32_t getNbOutputs() const noexcept override { return static_cast<int32_t>(outputs.size()); }
    nvinfer1::ITensor* getOutput(int32_t i) const noexcept override {
      return i >= 0 && i < getNbOutputs() ? outputs[static_cast<size_t>(i)] : nullptr;
    }
    // A fixed count the tests expect: the fake has no layers, only the number TensorRT would report.
    int32_t getNbLayers() const noexcept override { return 7; }
    void setName(char const* n) noexcept override { name = n; }
    char const* getName() const noexcept override { return name.c_str(); }
    std::vector<std::unique_ptr<Tensor>> tensors;
    std::vector<nvinfer1::ITensor*> inputs, outputs;
    std::string name;
  } impl_;
};

class Config final : public nvinfer1::IBuilderConfig {
 public:
  Config() { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVBuilderConfig {
    void setFlags(nvinfer1::BuilderFlags f) noexcept override { flags = f; }
    nvinfer1::BuilderFlags getFlags() const noexcept override { return flags; }
    void setFlag(nvinfer1::BuilderFlag f) noexcept override { flags |= 1U << static_cast<int>(f); }
    void clearFlag(nvinfer1::BuilderFlag f) noexcept override { flags &= ~(1U << static_cast<int>(f)); }
    bool getFlag(nvinfer1::BuilderFlag f) const noexcept override { return (flags >> static_cast<int>(f)) & 1U; }
    void setBuilderOptimizationLevel(int32_t l) noexcept override { level = l; }
    int32_t getBuilderOptimizationLevel() const noexcept override { return level; }
    std::size_t getMemoryPoolLimit(nvinfer1::MemoryPoolType) const noexcept override { return std::size_t{1} << 30; }
    nvinfer1::ProfilingVerbosity getProfilingVerbosity() const noexcept override { return nvinfer1::ProfilingVerbosity::kLAYER_NAMES_ONLY; }
    nvinfer1::ITimingCache* createTimingCache(void const*, std::size_t) const noexcept override { return new TimingCache(); }
    bool setTimingCache(nvinfer1::ITimingCache const& c, bool) noexcept override {
      cache = &c;
      return true;
    }
    nvinfer1::ITimingCache const* getTimingCache() const noexcept override { return cache; }
    nvinfer1::ITimingCache const* cache = nullptr;
    void setProgressMonitor(nvinfer1::IProgressMonitor* m) noexcept override { monitor = m; }
    nvinfer1::IProgressMonitor* getProgressMonitor() const noexcept override { return monitor; }
    nvinfer1::BuilderFlags flags = 0;
    int32_t level = 3;
    nvinfer1::IProgressMonitor* monitor = nullptr;
  } impl_;
};

// The build: a phase tree like a real one (docs: TENSORRT.md "What a real build reports"), two
// timing threads under one parent, phases finished early after a cancel. True when not cancelled.
bool driveMonitor(nvinfer1::IProgressMonitor* m) {
  std::atomic<int> starts{0}, steps{0}, finishes{0};
  std::atomic<bool> cancelled{false};
  int const n = static_cast<int>(envInt("FAKE_WATCH_STEPS", 12));
  auto const pause = std::chrono::microseconds(envInt("FAKE_WATCH_STEP_US", 0));
  auto start = [&](char const* name, char const* parent, int k) {
    ++starts;
    if (m) m->phaseStart(name, parent, k);
  };
  auto finish = [&](char const* name) {
    ++finishes;
    if (m) m->phaseFinish(name);
  };
  auto step = [&](char const* name, int i) {
    if (cancelled) return false;
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    ++steps;
    if (m && !m->stepComplete(name, i)) cancelled = true;
    return !cancelled;
  };
  // One timing thread: its own phase under "Timing tactics", with a short child per step.
  auto timing = [&](char const* phase, char const* child) {
    start(phase, "Timing tactics", n);
    for (int i = 0; i < n; ++i) {
      start(child, phase, 2);
      bool ok = step(child, 0) && step(child, 1);
      finish(child);
      if (!ok || !step(phase, i)) break;
    }
    finish(phase);
  };
  [&] {
    start("Building engine", nullptr, 3);
    start("Optimizing graph", "Building engine", n);
    for (int i = 0; i < n && step("Optimizing graph", i); ++i) {
    }
    finish("Optimizing graph");
    if (!step("Building engine", 0)) return;
    start("Timing tactics", "Building engine", 2);
    std::thread a(timing, "Timing graph nodes", "Measuring tactic time");
    std::thread b(timing, "Timing tensor reformats", "Computing reformatting costs");
    a.join();
    b.join();
    if (step("Timing tactics", 0)) step("Timing tactics", 1);
    finish("Timing tactics");
    if (!step("Building engine", 1)) return;
    start("Serializing engine", "Building engine", 1);
    step("Serializing engine", 0);
    finish("Serializing engine");
    step("Building engine", 2);
  }();
  finish("Building engine");
  std::fprintf(stderr, "fake: callbacks starts=%d steps=%d finishes=%d cancelled=%d\n", starts.load(), steps.load(), finishes.load(),
               cancelled.load() ? 1 : 0);
  return !cancelled;
}

// An engine object for buildEngineWithConfig (nothing of it is used: the tests only see that one came).
class Engine final : public nvinfer1::ICudaEngine {
 public:
  Engine() { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVCudaEngine {
  } impl_;
};

class Builder final : public nvinfer1::IBuilder {
 public:
  Builder() { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::StubVBuilder {
    nvinfer1::IBuilderConfig* createBuilderConfig() noexcept override { return new Config(); }
    nvinfer1::INetworkDefinition* createNetworkV2(nvinfer1::NetworkDefinitionCreationFlags) noexcept override { return new Network(); }
    nvinfer1::IHostMemory* buildSerializedNetwork(nvinfer1::INetworkDefinition& net, nvinfer1::IBuilderConfig& cfg) noexcept override {
      if (!driveMonitor(cfg.getProgressMonitor())) return nullptr;
      return new HostMemory(std::string("FAKE-ENGINE:") + net.getName());
    }
    nvinfer1::ICudaEngine* buildEngineWithConfig(nvinfer1::INetworkDefinition&, nvinfer1::IBuilderConfig& cfg) noexcept override {
      return driveMonitor(cfg.getProgressMonitor()) ? new Engine() : nullptr;
    }
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 13
    bool buildSerializedNetworkToStream(nvinfer1::INetworkDefinition& net, nvinfer1::IBuilderConfig& cfg,
                                        nvinfer1::IStreamWriter& writer) noexcept override {
      if (!driveMonitor(cfg.getProgressMonitor())) return false;
      std::string bytes = std::string("FAKE-ENGINE:") + net.getName();
      return writer.write(bytes.data(), static_cast<int64_t>(bytes.size())) == static_cast<int64_t>(bytes.size());
    }
#endif
  } impl_;
};

}  // namespace

extern "C" {
int32_t getInferLibVersion() noexcept { return FAKE_TRT_VERSION; }
void* createInferBuilder_INTERNAL(void*, int32_t) noexcept { return static_cast<nvinfer1::IBuilder*>(new Builder()); }
}
