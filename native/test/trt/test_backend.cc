// TrtBackend's probe and its early build paths, against the fake libraries. A real engine build
// cannot run here (no libnvinfer, no GPU): the fake createInferBuilder_INTERNAL logs an error and
// returns null, which is exactly what a real library does on a machine without a usable GPU.
#include <dlfcn.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include <NvInferVersion.h>

#include "check.h"
#include "model_dir.h"
#include "recording_sink.h"
#include "trt/trt_backend.h"

namespace {

void clearEnv() {
  unsetenv("TBS_TRT_LIB_DIR");
  unsetenv("TBS_NVINFER_LIB");
  unsetenv("TBS_NVONNXPARSER_LIB");
}

void useGoodFakes() {
  clearEnv();
  setenv("TBS_TRT_LIB_DIR", FAKE_GOOD_DIR, 1);
}

int32_t fakeBuilderCalls() {
  void* h = dlopen(FAKE_NVINFER_CURRENT, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return 0;
  auto calls = reinterpret_cast<int32_t (*)()>(dlsym(h, "fakeBuilderCalls"));
  int32_t n = calls != nullptr ? calls() : -1;
  dlclose(h);
  return n;
}

using tbs_test::request;

// These builds never get as far as parsing, so any stand-in model text will do.
struct Scratch : tbs_test::ModelDir {
  Scratch() : ModelDir("tbs-trt-backend", "not really onnx") {}
};

}  // namespace

TEST(probe_reports_the_found_version) {
  useGoodFakes();
  auto backend = tbs::makeTensorRtBackend();
  tbs::BackendProbe p = backend->probe();
  clearEnv();
  CHECK_EQ(p.name, std::string("tensorrt"));
  CHECK(p.available);
  CHECK_EQ(p.version, std::string(FAKE_CURRENT_TEXT));
  CHECK_EQ(p.reason, std::string(""));
  CHECK_EQ(p.detail["compiledAgainst"],
           std::to_string(NV_TENSORRT_MAJOR) + "." + std::to_string(NV_TENSORRT_MINOR) + "." + std::to_string(NV_TENSORRT_PATCH));
  // Entry counts need queryKeys (10.8+), streaming buildSerializedNetworkToStream (10.13+), in
  // the headers AND in the library: the fake is as new as the headers, or (a cross-header run,
  // TBS_FAKE_TRT_ROOT) built from another release's, whose version then decides too.
  int const fakeMinor = (FAKE_CURRENT_ENCODED / 100) % 100;
  bool const hasCount = NV_TENSORRT_MAJOR > 10 || (NV_TENSORRT_MINOR >= 8 && fakeMinor >= 8);
  bool const hasStream = NV_TENSORRT_MAJOR > 10 || (NV_TENSORRT_MINOR >= 13 && fakeMinor >= 13);
  CHECK_EQ(p.detail["timingCacheEntryCounts"], std::string(hasCount ? "yes" : "no (needs TensorRT 10.8+)"));
  CHECK_EQ(p.detail["engineStreaming"], std::string(hasStream ? "yes" : "no (needs TensorRT 10.13+)"));
  CHECK_CONTAINS(p.detail["nvinfer"], "libnvinfer.so." + std::to_string(NV_TENSORRT_MAJOR));
  CHECK_EQ(p.adapter.major, NV_TENSORRT_MAJOR);
  CHECK_EQ(p.library.version, std::string(FAKE_CURRENT_TEXT));
  CHECK_EQ(backend->version(), std::string(FAKE_CURRENT_TEXT));
  CHECK_EQ(backend->gpuName(), std::string(""));
}

// What the probe offers follows the LIBRARY's version, not only the headers': an adapter built
// against newer headers than the library must not announce what the library lacks.
TEST(probe_of_an_older_library_offers_only_what_that_library_has) {
  clearEnv();
  setenv("TBS_NVINFER_LIB", FAKE_NVINFER_OLD, 1);
  setenv("TBS_NVONNXPARSER_LIB", FAKE_ONNXPARSER, 1);
  tbs::BackendProbe p = tbs::makeTensorRtBackend()->probe();
  clearEnv();
  CHECK(p.available);
  CHECK_EQ(p.version, std::string(FAKE_OLD_TEXT));
#if NV_TENSORRT_MAJOR == 10
  // The old fake is 10.3 (JetPack 6) under 10.8+ headers, else 10.0: neither has queryKeys nor
  // streaming.
  CHECK_EQ(p.detail["timingCacheEntryCounts"], std::string("no (needs TensorRT 10.8+)"));
  CHECK_EQ(p.detail["engineStreaming"], std::string("no (needs TensorRT 10.13+)"));
  CHECK(p.detail.count("precisionNote") == 0);  // int4/fp4 deprecated only from 10.12
#else
  // 11.0 has both, but no build routes (11.1).
  CHECK_EQ(p.detail["timingCacheEntryCounts"], std::string("yes"));
  CHECK_EQ(p.detail["engineStreaming"], std::string("yes"));
  CHECK(!p.hasBuildRoutes);
  CHECK(p.buildRoutes.empty());
#endif
}

TEST(probe_refuses_a_library_of_the_other_major) {
  clearEnv();
  setenv("TBS_NVINFER_LIB", FAKE_NVINFER_OTHER, 1);
  setenv("TBS_NVONNXPARSER_LIB", FAKE_ONNXPARSER, 1);
  tbs::BackendProbe p = tbs::makeTensorRtBackend()->probe();
  clearEnv();
  CHECK(!p.available);
  CHECK_EQ(p.version, std::string(""));
  CHECK_CONTAINS(p.reason, "found TensorRT " FAKE_OTHER_TEXT);
  CHECK_CONTAINS(p.reason, "compiled against TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " headers");
}

// A backend object is bound to the library paths it was made with (the addon makes one per probe
// and per build); what must not happen is a failed load being remembered across objects.
TEST(probe_retries_after_tensorrt_appears) {
  clearEnv();
  setenv("TBS_TRT_LIB_DIR", FAKE_MISSING_DIR, 1);
  auto backend = tbs::makeTensorRtBackend();
  tbs::BackendProbe first = backend->probe();
  CHECK(!first.available);
  CHECK_CONTAINS(first.reason, "not found");
  CHECK_EQ(backend->version(), std::string(""));
  useGoodFakes();
  tbs::BackendProbe second = tbs::makeTensorRtBackend()->probe();
  clearEnv();
  CHECK(second.available);
  CHECK_EQ(second.version, std::string(FAKE_CURRENT_TEXT));
}

TEST(null_builder_fails_with_tensorrts_own_error_and_writes_nothing) {
  useGoodFakes();
  Scratch s;
  tbs_test::RecordingSink sink;
  auto backend = tbs::makeTensorRtBackend();
  int32_t before = fakeBuilderCalls();
  tbs::BuildOutcome o = backend->build(request(s), sink);
  clearEnv();
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "could not create a builder");
  CHECK_CONTAINS(o.error, "fake libnvinfer: no CUDA-capable device is detected");
  CHECK_EQ(fakeBuilderCalls(), before + 1);
  // The process-wide logger was routed to this build's sink.
  // (First the warning that these fakes have no standard plugin library beside libnvinfer.)
  auto lines = sink.lines();
  CHECK_EQ(lines.size(), size_t{2});
  if (lines.size() == 2) {
    CHECK_CONTAINS(lines[0], "models with plugin ops will not parse");
    CHECK_EQ(lines[1], std::string("log 1 fake libnvinfer: no CUDA-capable device is detected"));
  }
  CHECK_EQ(s.list().size(), size_t{1});  // only model.onnx: no engine, no temp file
  CHECK_EQ(o.engineBytes, int64_t{-1});
  CHECK_EQ(o.outputPath, std::string(""));
}

TEST(bad_options_fail_before_tensorrt_is_touched) {
  useGoodFakes();
  Scratch s;
  tbs_test::RecordingSink sink;
  auto backend = tbs::makeTensorRtBackend();
  int32_t before = fakeBuilderCalls();
  tbs::BuildRequest r = request(s);
  r.precision = {"fp16"};
  r.stronglyTyped = true;
  tbs::BuildOutcome o = backend->build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "strongly typed");
  r = request(s);
  r.optLevel = 9;
  o = backend->build(r, sink);
  clearEnv();
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "optimization level");
  CHECK_EQ(fakeBuilderCalls(), before);
}

TEST(missing_model_and_unwritable_output_are_named) {
  useGoodFakes();
  Scratch s;
  tbs_test::RecordingSink sink;
  auto backend = tbs::makeTensorRtBackend();
  tbs::BuildRequest r = request(s);
  r.modelPath = s.file("absent.onnx");
  tbs::BuildOutcome o = backend->build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "absent.onnx");
  CHECK_CONTAINS(o.error, "does not exist");
  r = request(s);
  r.modelPath = s.path;
  o = backend->build(r, sink);
  CHECK_CONTAINS(o.error, "not a regular file");
  r = request(s);
  r.outputPath = s.file("no-such-dir/model.engine");
  o = backend->build(r, sink);
  clearEnv();
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "no-such-dir");
  CHECK_EQ(s.list().size(), size_t{1});
}

TEST(engine_and_cache_never_overwrite_the_model_or_each_other) {
  useGoodFakes();
  Scratch s;
  tbs_test::RecordingSink sink;
  auto backend = tbs::makeTensorRtBackend();
  int32_t before = fakeBuilderCalls();
  tbs::BuildRequest r = request(s);
  r.outputPath = s.file("./model.onnx");
  tbs::BuildOutcome o = backend->build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "is the model file itself");
  r = request(s);
  r.timingCachePath = r.modelPath;
  o = backend->build(r, sink);
  CHECK_CONTAINS(o.error, "timing cache path");
  r = request(s);
  r.timingCachePath = r.outputPath;
  o = backend->build(r, sink);
  clearEnv();
  CHECK_CONTAINS(o.error, "same file as the output path");
  CHECK_EQ(fakeBuilderCalls(), before);
  std::ifstream model(s.file("model.onnx"));
  std::string content((std::istreambuf_iterator<char>(model)), std::istreambuf_iterator<char>());
  CHECK_EQ(content, std::string("not really onnx"));
}

TEST(build_without_tensorrt_says_why) {
  clearEnv();
  setenv("TBS_TRT_LIB_DIR", FAKE_MISSING_DIR, 1);
  Scratch s;
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = tbs::makeTensorRtBackend()->build(request(s), sink);
  clearEnv();
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " not found");
}

TEST(cancel_before_start_is_cancelled_without_creating_a_builder) {
  useGoodFakes();
  Scratch s;
  tbs_test::RecordingSink sink;
  sink.cancel = true;
  int32_t before = fakeBuilderCalls();
  tbs::BuildOutcome o = tbs::makeTensorRtBackend()->build(request(s), sink);
  clearEnv();
  CHECK(o.status == tbs::BuildOutcome::Status::kCancelled);
  CHECK_EQ(fakeBuilderCalls(), before);
  CHECK_EQ(s.list().size(), size_t{1});
}

TEST(only_one_tensorrt_build_runs_per_process_across_backend_objects) {
  useGoodFakes();
  Scratch s;
  struct HoldingSink : tbs_test::RecordingSink {
    // Holds the first build at its first cancelRequested(), which build() asks early, while it
    // owns the process-wide build lock.
    mutable std::atomic<bool> entered{false}, release{false};
    bool cancelRequested() const noexcept override {
      entered = true;
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return false;
    }
  } holding;
  tbs::BuildOutcome first;
  std::thread t([&] { first = tbs::makeTensorRtBackend()->build(request(s), holding); });
  while (!holding.entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  tbs_test::RecordingSink other;
  tbs::BuildOutcome second = tbs::makeTensorRtBackend()->build(request(s), other);
  holding.release = true;
  t.join();
  clearEnv();
  CHECK(second.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(second.error, "already running");
  CHECK(first.status == tbs::BuildOutcome::Status::kFailed);  // the fake has no builder
  CHECK_CONTAINS(first.error, "could not create a builder");
  // After the first build ended, the next one may run.
  useGoodFakes();
  tbs::BuildOutcome third = tbs::makeTensorRtBackend()->build(request(s), other);
  clearEnv();
  CHECK_CONTAINS(third.error, "could not create a builder");
}

TEST(libraries_stay_loaded_between_backend_objects) {
  useGoodFakes();
  tbs::makeTensorRtBackend()->probe();
  clearEnv();
  // Unloading libnvinfer between builds would tear down its CUDA state: it must still be mapped.
  void* h = dlopen(FAKE_NVINFER_CURRENT, RTLD_NOW | RTLD_NOLOAD);
  CHECK(h != nullptr);
  if (h) dlclose(h);
}

TEST_MAIN()
