// A user's build program, written for the watch tests after the shape of NVIDIA's
// sampleProgressMonitor (samples/sampleProgressMonitor: builder, network, config, its own console
// progress monitor attached with setProgressMonitor, buildSerializedNetwork), in our own words.
// The tests run it under the LD_PRELOAD shim over the fake libnvinfer (fake_watch_nvinfer.cc):
// no real TensorRT library runs here.
//
//   watch_sample <mode> [library]
//   plain            one build, no monitor of its own
//   chained          its own monitor (counts every callback, checks nesting) attached
//   chained-cancel   its own monitor answers false at the 5th step: the build is cancelled
//   twice            two builds in a row
//   child            one build, then runs itself as "plain" in a child (fork + exec)
//   stream           buildSerializedNetworkToStream (headers 10.13+)
//   engine           buildEngineWithConfig
//   dropin           tbs::StudioMonitor attached by the program itself (no shim)
// Built with TBS_SAMPLE_DLOPEN it does not link libnvinfer: it dlopens [library] and dlsyms
// createInferBuilder_INTERNAL, as ONNX Runtime's TensorRT provider does.
// Prints "result engine <bytes>" or "result null" per build.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <NvInfer.h>

#include "tbs/monitor.h"

namespace {

class Logger : public nvinfer1::ILogger {
  void log(Severity, char const* msg) noexcept override { std::fprintf(stderr, "trt: %s\n", msg); }
} gLogger;

// The program's own monitor: counts callbacks and checks that phases nest and close.
class CountingMonitor : public nvinfer1::IProgressMonitor {
 public:
  explicit CountingMonitor(int refuseAtStep) : refuseAt_(refuseAtStep) {}
  void phaseStart(char const* name, char const*, int32_t nbSteps) noexcept override {
    ++starts_;
    std::lock_guard<std::mutex> lock(mu_);
    open_.push_back(name);
    if (nbSteps <= 0) bad_ = true;
  }
  bool stepComplete(char const*, int32_t) noexcept override {
    int n = ++steps_;
    return refuseAt_ <= 0 || n < refuseAt_;
  }
  void phaseFinish(char const* name) noexcept override {
    ++finishes_;
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = open_.size(); i-- > 0;) {
      if (open_[i] == name) {
        open_.erase(open_.begin() + static_cast<long>(i));
        return;
      }
    }
    bad_ = true;
  }
  void report() {
    std::lock_guard<std::mutex> lock(mu_);
    std::printf("own monitor: starts=%d steps=%d finishes=%d balanced=%s\n", starts_.load(), steps_.load(), finishes_.load(),
                open_.empty() && !bad_ ? "yes" : "no");
  }

 private:
  int refuseAt_;
  std::atomic<int> starts_{0}, steps_{0}, finishes_{0};
  std::mutex mu_;
  std::vector<std::string> open_;
  bool bad_ = false;
};

nvinfer1::IBuilder* makeBuilder(char const* library) {
#ifdef TBS_SAMPLE_DLOPEN
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "sample: %s\n", dlerror());
    return nullptr;
  }
  using Factory = void* (*)(void*, int32_t);
  auto factory = reinterpret_cast<Factory>(dlsym(lib, "createInferBuilder_INTERNAL"));
  return factory ? static_cast<nvinfer1::IBuilder*>(factory(&gLogger, NV_TENSORRT_VERSION)) : nullptr;
#else
  (void)library;
  return nvinfer1::createInferBuilder(gLogger);
#endif
}

class StringWriter : public nvinfer1::IStreamWriter {
 public:
  int64_t write(void const* data, int64_t size) noexcept override {
    bytes.append(static_cast<char const*>(data), static_cast<size_t>(size));
    return size;
  }
  std::string bytes;
};

// One build as sampleProgressMonitor does it; `monitor` attached when given.
bool build(nvinfer1::IBuilder& builder, nvinfer1::IProgressMonitor* monitor, bool stream, bool engine = false) {
  std::unique_ptr<nvinfer1::INetworkDefinition> network(builder.createNetworkV2(0));
  std::unique_ptr<nvinfer1::IBuilderConfig> config(builder.createBuilderConfig());
  network->setName("watch-sample");
  nvinfer1::Dims dims{};
  dims.nbDims = 4;
  dims.d[0] = 1;
  dims.d[1] = 1;
  dims.d[2] = 28;
  dims.d[3] = 28;
  nvinfer1::ITensor* input = network->addInput("input", nvinfer1::DataType::kFLOAT, dims);
  network->markOutput(*input);
  config->setFlag(nvinfer1::BuilderFlag::kREFIT);
  config->setBuilderOptimizationLevel(2);
  // As trtexec attaches one: an (empty) timing cache, ignoring mismatches.
  std::unique_ptr<nvinfer1::ITimingCache> cache(config->createTimingCache(nullptr, 0));
  if (cache) config->setTimingCache(*cache, true);
  if (monitor != nullptr) config->setProgressMonitor(monitor);
  bool ok = false;
  if (engine) {
    std::unique_ptr<nvinfer1::ICudaEngine> e(builder.buildEngineWithConfig(*network, *config));
    ok = e != nullptr;
    std::printf(ok ? "result engine object\n" : "result null\n");
  } else if (stream) {
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 13
    StringWriter writer;
    ok = builder.buildSerializedNetworkToStream(*network, *config, writer);
    std::printf(ok ? "result engine %zu\n" : "result null\n", writer.bytes.size());
#endif
  } else {
    std::unique_ptr<nvinfer1::IHostMemory> plan(builder.buildSerializedNetwork(*network, *config));
    ok = plan != nullptr;
    if (ok) {
      std::printf("result engine %zu\n", plan->size());
    } else {
      std::printf("result null\n");
    }
  }
  // The program's monitor is back on the config after a watched build.
  std::printf("monitor after build: %s\n", config->getProgressMonitor() == monitor ? "the program's" : "another");
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "plain";
  char const* library = argc > 2 ? argv[2] : "";
  std::unique_ptr<nvinfer1::IBuilder> builder(makeBuilder(library));
  if (!builder) {
    std::fprintf(stderr, "sample: no builder\n");
    return 2;
  }
  if (mode == "plain" || mode == "stream") {
    build(*builder, nullptr, mode == "stream");
  } else if (mode == "engine") {
    build(*builder, nullptr, false, true);
  } else if (mode == "chained" || mode == "chained-cancel") {
    CountingMonitor own(mode == "chained" ? 0 : 5);
    build(*builder, &own, false);
    own.report();
  } else if (mode == "twice") {
    build(*builder, nullptr, false);
    build(*builder, nullptr, false);
  } else if (mode == "child") {
    build(*builder, nullptr, false);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], "plain", library, static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    std::printf("child pid %d exit %d\n", static_cast<int>(pid), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else if (mode == "dropin") {
    tbs::StudioMonitor monitor;
    build(*builder, &monitor, false);
  } else {
    std::fprintf(stderr, "sample: unknown mode %s\n", mode.c_str());
    return 2;
  }
  return 0;
}
