// TrtBackend::build end to end against the scripted fake libnvinfer / libnvonnxparser
// (fake_full_*.cc): every option reaches IBuilderConfig, profiles, parser errors, progress from
// several threads, cancel, failure, timing-cache statistics and the engine file. This exercises
// our adapter code paths; it says nothing about real TensorRT, which cannot run here.
#include <dlfcn.h>
#include <stdlib.h>

#include <NvInferVersion.h>
#include <NvOnnxParser.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>

#include "check.h"
#include "model_dir.h"
#include "recording_sink.h"
#include "trt/trt_backend.h"

namespace {

std::string journal() {
  void* h = dlopen(FAKE_FULL_NVINFER, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return "<fake libnvinfer not loaded>";
  auto fn = reinterpret_cast<char const* (*)()>(dlsym(h, "fakeFullJournal"));
  std::string out = fn != nullptr ? fn() : "<no journal>";
  dlclose(h);
  return out;
}

void clearJournal() {
  void* h = dlopen(FAKE_FULL_NVINFER, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return;
  if (auto fn = reinterpret_cast<void (*)()>(dlsym(h, "fakeFullJournalClear"))) fn();
  dlclose(h);
}

int lastParserVersion() {
  void* h = dlopen(FAKE_FULL_ONNXPARSER, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return -2;
  auto fn = reinterpret_cast<int (*)()>(dlsym(h, "fakeFullLastParserVersion"));
  int v = fn != nullptr ? fn() : -3;
  dlclose(h);
  return v;
}

bool hasLine(std::string const& text, std::string const& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

using tbs_test::request;

// `script` becomes model.onnx, which the scripted fake parser follows (see fake_full_script.h).
struct Scratch : tbs_test::ModelDir {
  explicit Scratch(std::string const& script) : ModelDir("tbs-trt-full", script) {}
};

tbs::BuildOutcome build(tbs::BuildRequest const& r, tbs::ProgressSink& sink) {
  setenv("TBS_TRT_LIB_DIR", FAKE_FULL_DIR, 1);
  clearJournal();
  tbs::BuildOutcome o = tbs::makeTensorRtBackend()->build(r, sink);
  unsetenv("TBS_TRT_LIB_DIR");
  return o;
}

// Every phase that started finished exactly once, and no step came for a phase not open.
void checkBalancedPhases(std::vector<std::string> const& lines) {
  std::map<std::string, int> open;
  for (auto const& l : lines) {
    if (l.rfind("start ", 0) == 0) {
      std::string name = l.substr(6, l.find(" parent=") - 6);
      CHECK_EQ(open[name]++, 0);
    } else if (l.rfind("finish ", 0) == 0) {
      CHECK_EQ(open[l.substr(7)]--, 1);
    }
  }
  for (auto const& [name, n] : open) CHECK_EQ(n, 0);
}

std::string fileContent(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Requests cancel once `after` steps were reported (from any builder thread).
class CancelAfterSteps : public tbs_test::RecordingSink {
 public:
  explicit CancelAfterSteps(int after) : after_(after) {}
  bool stepComplete(char const* name, int32_t step) noexcept override {
    if (steps_.fetch_add(1) + 1 >= after_) cancel = true;
    return RecordingSink::stepComplete(name, step);
  }

 private:
  int after_;
  std::atomic<int> steps_{0};
};

}  // namespace

TEST(success_applies_every_option_and_writes_the_engine) {
  Scratch s("input images 1,3,8,8\nthreads 3\nsteps 20\ncache-add 5\nautotune 2\nengine-bytes 5000\n");
  tbs::BuildRequest r = request(s);
#if NV_TENSORRT_MAJOR == 10
  r.precision = {"fp16", "int8"};
#endif
  r.inferCacheMisses = true;
  r.tf32 = 0;
  r.optLevel = 4;
  r.workspaceBytes = int64_t{1} << 30;
  r.tacticDramBytes = int64_t{1} << 20;
  r.tacticSharedMemoryBytes = 49152;
  r.profilingVerbosity = "detailed";
  r.hardwareCompatibility = "ampere_plus";
  r.maxAuxStreams = 2;
  r.timingCachePath = s.file("model.cache");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK_EQ(o.error, std::string(""));
  CHECK_EQ(o.engineBytes, int64_t{5000});
  CHECK_EQ(o.outputPath, r.outputPath);
  std::string engine = fileContent(r.outputPath);
  CHECK_EQ(engine.size(), size_t{5000});
  CHECK_EQ(engine.rfind("FAKE-ENGINE\n", 0), size_t{0});

  std::string j = journal();
  for (std::string line : {"createInferBuilder version=" + std::to_string(NV_TENSORRT_VERSION),
                           std::string("network flags=0"),
#if NV_TENSORRT_MAJOR == 10
                           std::string("setFlag 0"), std::string("setFlag 1"),
#endif
                           std::string("clearFlag 6"), std::string("optLevel 4"), std::string("pool 0 1073741824"),
                           std::string("pool 4 1048576"), std::string("pool 5 49152"), std::string("verbosity 2"),
                           std::string("hwcompat 1"), std::string("auxStreams 2"),
                           std::string("timingCache ignoreMismatch=0"), std::string("monitor set"),
                           std::string("build"), std::string("monitor cleared"), std::string("delete network"),
                           std::string("delete config"), std::string("delete builder")}) {
    CHECK_MSG(hasLine(j, line), "journal lacks \"" << line << "\":\n" << j);
  }
  CHECK(!hasLine(j, "addProfile"));  // static input: no profile
  CHECK(j.find("monitor set") < j.find("build\n") && j.find("build\n") < j.find("monitor cleared"));
  // Reverse declaration order in build(): config, then network, then the builder that made them.
  CHECK(j.find("delete config") < j.find("delete network"));
  CHECK(j.find("delete network") < j.find("delete builder"));
  CHECK_EQ(lastParserVersion(), static_cast<int>(NV_ONNX_PARSER_VERSION));

  auto lines = sink.lines();
  checkBalancedPhases(lines);
  CHECK_EQ(lines.at(0), std::string("start Building engine parent=null n=2"));
  size_t steps = 0;
  for (auto const& l : lines) steps += l.rfind("step Measuring tactic time ", 0) == 0;
  CHECK_EQ(steps, size_t{60});

  CHECK_EQ(sink.statsCalls, 1);
  CHECK_EQ(sink.lastStats.path, r.timingCachePath);
  CHECK_EQ(sink.lastStats.entriesBefore, int64_t{0});
  CHECK_EQ(sink.lastStats.entriesAfter, int64_t{5});
  CHECK_EQ(sink.lastStats.bytes, static_cast<int64_t>(fileContent(r.timingCachePath).size()));
  CHECK_EQ(sink.lastStats.misses, int64_t{2});
  CHECK(sink.lastStats.missesInferred);
  CHECK_EQ(sink.lastStats.hits, int64_t{-1});  // there is no hit API: never invented
  CHECK_EQ(sink.lastStats.warning, std::string(""));
  std::vector<std::string> expected = {"model.cache", "model.cache.lock", "model.engine", "model.onnx"};
  CHECK(s.list() == expected);  // no temp files left
}

TEST(second_build_with_the_same_cache_starts_warm) {
  Scratch s("input x 1,4\ncache-add 7\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("shared.cache");
  tbs_test::RecordingSink first, second;
  CHECK(build(r, first).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK(build(r, second).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK_EQ(first.lastStats.entriesBefore, int64_t{0});
  CHECK_EQ(first.lastStats.entriesAfter, int64_t{7});
  CHECK_EQ(second.lastStats.entriesBefore, int64_t{7});
  CHECK_EQ(second.lastStats.entriesAfter, int64_t{7});
  CHECK_EQ(second.lastStats.misses, int64_t{-1});  // no autotuning lines: unknown, not zero
}

TEST(strongly_typed_sets_the_network_flag_and_no_precision) {
  Scratch s("input x 1,4\n");
  tbs::BuildRequest r = request(s);
  r.stronglyTyped = true;
  tbs_test::RecordingSink sink;
  CHECK(build(r, sink).status == tbs::BuildOutcome::Status::kSucceeded);
  std::string j = journal();
  CHECK(hasLine(j, "network flags=2"));
  CHECK(j.find("setFlag") == std::string::npos);
  CHECK(!hasLine(j, "timingCache ignoreMismatch=1"));  // no cache path: none attached
}

TEST(dynamic_input_gets_an_optimization_profile) {
  Scratch s("input images -1,3,-1,-1\ninput scale 1\n");
  tbs::BuildRequest r = request(s);
  r.shapes["images"] = {{1, 3, 32, 32}, {4, 3, 64, 64}, {8, 3, 128, 128}};
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kSucceeded);
  std::string j = journal();
  CHECK(hasLine(j, "profile images min 1,3,32,32"));
  CHECK(hasLine(j, "profile images opt 4,3,64,64"));
  CHECK(hasLine(j, "profile images max 8,3,128,128"));
  CHECK(hasLine(j, "addProfile"));
  CHECK(j.find("profile scale") == std::string::npos);
}

TEST(dynamic_input_without_shapes_fails_before_building) {
  Scratch s("input tokens -1,128\n");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(s), sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "\"tokens\"");
  CHECK_CONTAINS(o.error, "[-1,128]");
  std::string j = journal();
  CHECK(!hasLine(j, "build"));
  CHECK(hasLine(j, "delete builder"));
  CHECK(!s.has("model.engine"));
}

TEST(parse_errors_name_each_node) {
  Scratch s("input x 1,4\nparse-error 8 12 /backbone/conv1 DeformConv no importer for op DeformConv\n"
            "parse-error 13 40 /head/reshape Reshape shape tensor mismatch\n");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(s), sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "cannot parse " + s.file("model.onnx"));
  CHECK_CONTAINS(o.error, "\nONNX parse error at node 12 \"/backbone/conv1\" (DeformConv): UNSUPPORTED_NODE (8): "
                          "no importer for op DeformConv");
  CHECK_CONTAINS(o.error, "\nONNX parse error at node 40 \"/head/reshape\" (Reshape): UNSUPPORTED_NODE_SHAPE (13): "
                          "shape tensor mismatch");
  CHECK(!hasLine(journal(), "build"));
  CHECK(!s.has("model.engine"));
}

TEST(build_failure_reports_tensorrts_error_and_writes_nothing) {
  Scratch s("input x 1,4\nbuild-fail out of GPU memory while timing tactics\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("model.cache");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "could not build the engine: out of GPU memory while timing tactics");
  CHECK(!s.has("model.engine"));
  CHECK(!s.has("model.cache"));  // a failed build saves no cache
  CHECK_EQ(sink.statsCalls, 1);
  CHECK_EQ(sink.lastStats.entriesBefore, int64_t{0});
  CHECK_EQ(sink.lastStats.entriesAfter, int64_t{-1});
  bool logged = false;
  for (auto const& l : sink.lines()) logged = logged || l == "log 1 out of GPU memory while timing tactics";
  CHECK(logged);
}

TEST(cancel_mid_build_stops_the_builder_and_writes_nothing) {
  Scratch s("input x 1,4\nwait-cancel\nthreads 2\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("model.cache");
  CancelAfterSteps sink(25);
  auto t0 = std::chrono::steady_clock::now();
  tbs::BuildOutcome o = build(r, sink);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(o.status == tbs::BuildOutcome::Status::kCancelled);
  CHECK(seconds < 5.0);  // the fake gives up after 10 s if stepComplete never returned false
  CHECK(!s.has("model.engine"));
  CHECK(!s.has("model.cache"));
  auto lines = sink.lines();
  checkBalancedPhases(lines);
  bool stopped = false;
  for (auto const& l : lines) stopped = stopped || l.find(" stop") != std::string::npos;
  CHECK(stopped);
  CHECK(hasLine(journal(), "monitor cleared"));
}

TEST(cancel_wins_even_if_tensorrt_returns_an_engine) {
  Scratch s("input x 1,4\nignore-stop\n");
  CancelAfterSteps sink(5);
  tbs::BuildOutcome o = build(request(s), sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kCancelled);
  CHECK(!s.has("model.engine"));
  CHECK_EQ(o.engineBytes, int64_t{-1});
}

TEST(unsaveable_cache_is_a_warning_and_the_engine_is_still_written) {
  Scratch s("input x 1,4\ncache-add 3\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("no-such-dir/model.cache");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK(s.has("model.engine"));
  CHECK_CONTAINS(sink.lastStats.warning, "timing cache not saved");
  CHECK_EQ(sink.lastStats.entriesAfter, int64_t{3});
  CHECK_EQ(sink.lastStats.bytes, int64_t{-1});
}

TEST(optimization_level_zero_warns_that_the_cache_is_unused) {
  Scratch s("input x 1,4\n");
  tbs::BuildRequest r = request(s);
  r.optLevel = 0;
  r.timingCachePath = s.file("model.cache");
  tbs_test::RecordingSink sink;
  CHECK(build(r, sink).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK(hasLine(journal(), "optLevel 0"));
  CHECK_CONTAINS(sink.lastStats.warning, "optimization level 0");
}

TEST(engine_replaces_an_existing_output_atomically) {
  Scratch s("input x 1,4\nengine-bytes 100\n");
  tbs::BuildRequest r = request(s);
  std::ofstream(r.outputPath) << "previous engine";
  tbs_test::RecordingSink sink;
  CHECK(build(r, sink).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK_EQ(fileContent(r.outputPath).size(), size_t{100});
  std::vector<std::string> expected = {"model.engine", "model.onnx"};
  CHECK(s.list() == expected);
}

TEST_MAIN()
