// TrtBackend::build end to end against the scripted fake libnvinfer / libnvonnxparser
// (fake_full_*.cc): every option reaches IBuilderConfig, profiles, parser errors, progress from
// several threads, cancel, failure, timing-cache statistics and the engine file. This exercises
// our adapter code paths; it says nothing about real TensorRT, which cannot run here.
#include <dlfcn.h>
#include <stdlib.h>

#include <NvInferVersion.h>
#include <NvOnnxParser.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "check.h"
#include "fake_objects.h"
#include "lock_holder.h"
#include "model_dir.h"
#include "recording_sink.h"
#include "temp_dir.h"
#include "core/cache_store.h"
#include "trt/trt_backend.h"
#include "trt/trt_version.h"

namespace {

// The journal of the fake libnvinfer at `lib` (the one reporting the headers' version unless a
// test builds against the older one).
std::string journal(char const* lib = FAKE_FULL_NVINFER) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return "<fake libnvinfer not loaded>";
  auto fn = reinterpret_cast<char const* (*)()>(dlsym(h, "fakeFullJournal"));
  std::string out = fn != nullptr ? fn() : "<no journal>";
  dlclose(h);
  return out;
}

void clearJournal(char const* lib = FAKE_FULL_NVINFER) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return;
  if (auto fn = reinterpret_cast<void (*)()>(dlsym(h, "fakeFullJournalClear"))) fn();
  dlclose(h);
}

std::string flagLine(char const* verb, nvinfer1::BuilderFlag f) { return std::string(verb) + " " + std::to_string(static_cast<int>(f)); }

// Features usable by the adapter (its headers declare them) on the "current" fake library (it
// reports FAKE_CURRENT_ENCODED: the same release as the headers, unless TBS_FAKE_TRT_ROOT built
// the fakes from another header set; then the older of the two decides, as in a real install).
constexpr bool kHeadersAtLeast(int major, int minor) {
  return (NV_TENSORRT_MAJOR > major || (NV_TENSORRT_MAJOR == major && NV_TENSORRT_MINOR >= minor)) &&
         FAKE_CURRENT_ENCODED >= major * 10000 + minor * 100;
}
constexpr bool kCanCount = kHeadersAtLeast(10, 8);  // ITimingCache::queryKeys
constexpr bool kStreams = kHeadersAtLeast(10, 13);  // buildSerializedNetworkToStream
constexpr bool kShapeV2 = kHeadersAtLeast(10, 11);  // setShapeValuesV2
int64_t counted(int64_t n) { return kCanCount ? n : -1; }

int lastParserVersion() {
  void* h = dlopen(FAKE_FULL_ONNXPARSER, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return -2;
  auto fn = reinterpret_cast<int (*)()>(dlsym(h, "fakeFullLastParserVersion"));
  int v = fn != nullptr ? fn() : -3;
  dlclose(h);
  return v;
}

bool hasLine(std::string const& text, std::string const& line) { return ("\n" + text).find("\n" + line + "\n") != std::string::npos; }

using tbs_test::request;

// `script` becomes model.onnx, which the scripted fake parser follows (see fake_full_script.h).
struct Scratch : tbs_test::ModelDir {
  explicit Scratch(std::string const& script) : ModelDir("tbs-trt-full", script) {}
};

// A build against the fakes in `dir` (default: the library as new as the headers).
tbs::BuildOutcome build(tbs::BuildRequest const& r, tbs::ProgressSink& sink, char const* dir = FAKE_FULL_DIR,
                        char const* lib = FAKE_FULL_NVINFER) {
  setenv("TBS_TRT_LIB_DIR", dir, 1);
  clearJournal(lib);
  tbs::BuildOutcome o = tbs::makeTensorRtBackend()->build(r, sink);
  unsetenv("TBS_TRT_LIB_DIR");
  return o;
}

tbs::BuildOutcome buildOld(tbs::BuildRequest const& r, tbs::ProgressSink& sink) {
  return build(r, sink, FAKE_FULL_OLD_DIR, FAKE_FULL_OLD_NVINFER);
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

bool logged(tbs_test::RecordingSink const& sink, std::string const& part) {
  for (auto const& l : sink.lines()) {
    if (l.rfind("log ", 0) == 0 && l.find(part) != std::string::npos) return true;
  }
  return false;
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
  r.inferCacheMisses = kHeadersAtLeast(10, 8);  // needs the editable timing cache (10.8+)
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
#if NV_TENSORRT_MAJOR == 10
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the 10.x precision flags
  for (std::string line : {flagLine("setFlag", nvinfer1::BuilderFlag::kFP16), flagLine("setFlag", nvinfer1::BuilderFlag::kINT8)}) {
    CHECK_MSG(hasLine(j, line), "journal lacks \"" << line << "\":\n" << j);
  }
#pragma GCC diagnostic pop
#endif
  for (std::string line :
       {"createInferBuilder version=" +
            std::to_string(tbs::trt::factoryVersion(static_cast<int32_t>(NV_TENSORRT_VERSION), FAKE_CURRENT_ENCODED)),
        std::string("network flags=0"), flagLine("clearFlag", nvinfer1::BuilderFlag::kTF32), std::string("optLevel 4"),
        std::string("pool 0 1073741824"), std::string("pool 4 1048576"), std::string("pool 5 49152"), std::string("verbosity 2"),
        std::string("hwcompat 1"), std::string("auxStreams 2"), std::string("timingCache ignoreMismatch=1"), std::string("monitor set"),
        std::string("build"), std::string("monitor cleared"), std::string("delete network"), std::string("delete config"),
        std::string("delete builder")}) {
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
  // Option warnings come first (fp16 is deprecated from 10.12), then the phases.
  auto firstPhase = std::find_if(lines.begin(), lines.end(), [](std::string const& l) { return l.rfind("log ", 0) != 0; });
  CHECK(firstPhase != lines.end() && *firstPhase == "start Building engine parent=null n=2");
  size_t steps = 0;
  for (auto const& l : lines) steps += l.rfind("step Measuring tactic time ", 0) == 0;
  CHECK_EQ(steps, size_t{60});

  CHECK_EQ(sink.statsCalls, 1);
  CHECK_EQ(sink.lastStats.path, r.timingCachePath);
  CHECK_EQ(sink.lastStats.entriesBefore, counted(0));
  CHECK_EQ(sink.lastStats.entriesAfter, counted(5));
  CHECK_EQ(sink.lastStats.bytes, static_cast<int64_t>(fileContent(r.timingCachePath).size()));
  if (r.inferCacheMisses) {
    // What the inference needs was turned on: the editable cache, detailed verbosity (2), and
    // the two "Autotuning op" lines the fake logged were counted.
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 8
    CHECK(hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kEDITABLE_TIMING_CACHE)));
#endif
    CHECK_EQ(sink.lastStats.misses, int64_t{2});
    CHECK(sink.lastStats.missesInferred);
  } else {
    CHECK_EQ(sink.lastStats.misses, int64_t{-1});
    CHECK(!sink.lastStats.missesInferred);
  }
  CHECK_EQ(sink.lastStats.hits, int64_t{-1});  // there is no hit API: never invented
  CHECK_EQ(sink.lastStats.warning, std::string(""));
  std::vector<std::string> expected = {"model.cache", "model.cache.lock", "model.engine", "model.engine.layers.json", "model.onnx"};
  CHECK(s.list() == expected);  // no temp files left
}

// maxAuxStreams reaches TensorRT straight from the request (no plan field): unset leaves
// TensorRT's default alone, 0 is a value like any other.
TEST(max_aux_streams_is_set_only_when_given) {
  Scratch s("input x 1,4\nsteps 4\n");
  tbs::BuildRequest r = request(s);
  tbs_test::RecordingSink unset;
  CHECK(build(r, unset).status == tbs::BuildOutcome::Status::kSucceeded);
  std::string j = journal();
  CHECK_MSG(j.find("auxStreams") == std::string::npos, j);
  r.maxAuxStreams = 0;
  tbs_test::RecordingSink zero;
  CHECK(build(r, zero).status == tbs::BuildOutcome::Status::kSucceeded);
  j = journal();
  CHECK_MSG(hasLine(j, "auxStreams 0"), j);
}

TEST(version_compatible_sets_the_builder_flags_trtexec_sets) {
  Scratch s("input x 1,4\nsteps 4\n");
  tbs::BuildRequest r = request(s);
  tbs_test::RecordingSink plain;
  CHECK(build(r, plain).status == tbs::BuildOutcome::Status::kSucceeded);
  std::string j = journal();
  CHECK(!hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kVERSION_COMPATIBLE)));
  CHECK(!hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kEXCLUDE_LEAN_RUNTIME)));
  CHECK(!hasLine(j, "hostCodeAllowed 1"));

  r.versionCompatible = true;
  tbs_test::RecordingSink vc;
  CHECK(build(r, vc).status == tbs::BuildOutcome::Status::kSucceeded);
  j = journal();
  CHECK_MSG(hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kVERSION_COMPATIBLE)), j);
  CHECK(!hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kEXCLUDE_LEAN_RUNTIME)));
  // The layer information is read from an engine that may embed the lean runtime (host code).
  CHECK_MSG(hasLine(j, "hostCodeAllowed 1"), j);

  r.excludeLeanRuntime = true;
  tbs_test::RecordingSink lean;
  CHECK(build(r, lean).status == tbs::BuildOutcome::Status::kSucceeded);
  j = journal();
  CHECK(hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kVERSION_COMPATIBLE)));
  CHECK_MSG(hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kEXCLUDE_LEAN_RUNTIME)), j);

  // Alone, as trtexec takes it: the flag is set (TensorRT ignores it for an engine that is not
  // version-compatible), with a warning that says so.
  r.versionCompatible = false;
  tbs_test::RecordingSink alone;
  tbs::BuildOutcome o = build(r, alone);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  j = journal();
  CHECK_MSG(hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kEXCLUDE_LEAN_RUNTIME)), j);
  CHECK(!hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kVERSION_COMPATIBLE)));
  CHECK(logged(alone, "excludeLeanRuntime without versionCompatible"));
}

TEST(verbose_log_forwards_tensorrts_verbose_lines_and_changes_nothing_else) {
  auto verboseLines = [](std::vector<std::string> const& lines) {
    size_t n = 0;
    for (auto const& l : lines) n += l.rfind("log 4 Autotuning op fake_", 0) == 0;
    return n;
  };
  Scratch s("input x 1,4\nsteps 4\nautotune 3\n");
  tbs::BuildRequest r = request(s);
  tbs_test::RecordingSink quiet;
  CHECK(build(r, quiet).status == tbs::BuildOutcome::Status::kSucceeded);
  std::string quietJournal = journal();
  CHECK_EQ(verboseLines(quiet.lines()), size_t{0});

  r.verboseLog = true;
  tbs_test::RecordingSink loud;
  CHECK(build(r, loud).status == tbs::BuildOutcome::Status::kSucceeded);
  std::string j = journal();
  CHECK_EQ(verboseLines(loud.lines()), size_t{3});
  // Not the inference: no editable cache, no profiling verbosity set, misses stay unknown.
  CHECK(j.find("verbosity") == std::string::npos);
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 8
  CHECK(!hasLine(j, flagLine("setFlag", nvinfer1::BuilderFlag::kEDITABLE_TIMING_CACHE)));
#endif
  CHECK(!loud.lastStats.missesInferred);
  CHECK_EQ(j, quietJournal);  // the builder saw exactly the same calls
}

TEST(second_build_with_the_same_cache_starts_warm) {
  Scratch s("input x 1,4\ncache-add 7\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("shared.cache");
  tbs_test::RecordingSink first, second;
  CHECK(build(r, first).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK(build(r, second).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK_EQ(first.lastStats.entriesBefore, counted(0));
  CHECK_EQ(first.lastStats.entriesAfter, counted(7));
  CHECK_EQ(second.lastStats.entriesBefore, counted(7));
  CHECK_EQ(second.lastStats.entriesAfter, counted(7));
  // Not asked to infer misses: unknown, not zero.
  CHECK_EQ(second.lastStats.misses, int64_t{-1});
  CHECK(!second.lastStats.missesInferred);
}

TEST(strongly_typed_sets_the_network_flag_and_no_precision) {
  Scratch s("input x 1,4\n");
  tbs::BuildRequest r = request(s);
  r.stronglyTyped = true;
  tbs_test::RecordingSink sink;
  CHECK(build(r, sink).status == tbs::BuildOutcome::Status::kSucceeded);
  std::string j = journal();
#if NV_TENSORRT_MAJOR == 10
  // 1 << kSTRONGLY_TYPED (1) in 10.x.
  CHECK(
      hasLine(j, "network flags=" + std::to_string(1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED))));
  CHECK(hasLine(j, "network flags=2"));
#else
  // 11.x: every network is strongly typed; bit 1 means kPREFER_JIT_PYTHON_PLUGINS there and
  // must never be passed for "strongly typed".
  CHECK(hasLine(j, "network flags=0"));
#endif
  CHECK(j.find("setFlag") == std::string::npos);
  CHECK(!hasLine(j, "timingCache ignoreMismatch=1"));  // no cache path: none attached
}

// trtexec's other build flags (issue 37) reach the builder config and the network's inputs.
TEST(trtexec_build_specs_reach_the_config_and_the_inputs) {
  Scratch s("input images 1,3,8,8\n");
  tbs::BuildRequest r = request(s);
  r.inputIOFormats = "fp32:chw+hwc8";
  r.tacticSources = "-JIT_CONVOLUTIONS";
  r.avgTiming = 3;
  r.previewFeatures = "+aliasedPluginIO1003";
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kSucceeded);
  std::string const j = journal();
  uint32_t const formats =
      (1U << static_cast<uint32_t>(nvinfer1::TensorFormat::kLINEAR)) | (1U << static_cast<uint32_t>(nvinfer1::TensorFormat::kHWC8));
  CHECK(hasLine(j, "allowedFormats images " + std::to_string(formats)));
  CHECK(hasLine(j, "tacticSources " + std::to_string(0xFFU & ~(1U << static_cast<uint32_t>(nvinfer1::TacticSource::kJIT_CONVOLUTIONS)))));
  CHECK(hasLine(j, "avgTiming 3"));
  CHECK(hasLine(j, "preview " + std::to_string(static_cast<int>(nvinfer1::PreviewFeature::kALIASED_PLUGIN_IO_10_03)) + " on"));
  // One format per input: two for one input is refused naming the counts.
  r.inputIOFormats = "fp32:chw,fp32:chw";
  o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "inputIOFormats gives 2 format(s) but the network has 1 input(s)");
}

// DLA: the fake GPU has none (getNbDLACores() is 0), so --useDLACore is refused before the build, saying so.
TEST(dla_core_is_refused_where_the_gpu_has_no_dla) {
  Scratch s("input images 1,3,8,8\n");
  tbs::BuildRequest r = request(s);
  r.dlaCore = 0;
  r.allowGPUFallback = true;
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "dlaCore 0: this GPU has no DLA");
  CHECK(!hasLine(journal(), "build"));
}

#if NV_TENSORRT_MAJOR >= 11
// The 11.x adapter: precision flags do not exist; asking for one is refused before TensorRT is
// touched, with the way out; not asking is a strongly typed build with flags 0.
TEST(tensorrt_11_refuses_precision_and_builds_strongly_typed) {
  Scratch s("input x 1,4\n");
  tbs::BuildRequest r = request(s);
  r.precision = {"fp16"};
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "precision \"fp16\" is not an option in TensorRT 11");
  CHECK_CONTAINS(o.error, "Model Optimizer");
  CHECK(!hasLine(journal(), "build"));
  CHECK(journal().find("createInferBuilder") == std::string::npos);
  r.precision.clear();
  CHECK(build(r, sink).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK(hasLine(journal(), "network flags=0"));
}
#endif

// The 11.x ILogger derives from IVersionedInterface (other vtable): a TensorRT error logged by
// the fake (compiled against this major's headers) reaches the build's sink intact.
TEST(tensorrt_errors_arrive_through_this_majors_logger) {
  Scratch s("input x 1,4\nbuild-fail kernel launch failed on this fake\n");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(s), sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  bool logged = false;
  for (auto const& l : sink.lines()) logged = logged || l == "log 1 kernel launch failed on this fake";
  CHECK(logged);
  CHECK_CONTAINS(o.error, "kernel launch failed on this fake");
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
  Scratch s(
      "input x 1,4\nparse-error 8 12 /backbone/conv1 DeformConv no importer for op DeformConv\n"
      "parse-error 13 40 /head/reshape Reshape shape tensor mismatch\n");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(s), sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "cannot parse " + s.file("model.onnx"));
  CHECK_CONTAINS(o.error,
                 "\nONNX parse error at node 12 \"/backbone/conv1\" (DeformConv): UNSUPPORTED_NODE (8): "
                 "no importer for op DeformConv");
  CHECK_CONTAINS(o.error,
                 "\nONNX parse error at node 40 \"/head/reshape\" (Reshape): UNSUPPORTED_NODE_SHAPE (13): "
                 "shape tensor mismatch");
  CHECK(!hasLine(journal(), "build"));
  CHECK(!s.has("model.engine"));
  // Neither error is about a missing plugin creator: no plugin advice.
  CHECK(o.error.find("not registered") == std::string::npos);
}

// The "plugin not registered" advice only for the parser's own words for a creator it did not
// find, with the codes it reports them with; an error that merely mentions a plugin gets none.
TEST(plugin_advice_only_for_a_plugin_creator_the_parser_did_not_find) {
  Scratch other("input x 1,4\nparse-error 9 3 /nms EfficientNMS_TRT plugin attribute score_threshold has an unsupported type\n");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(other), sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "plugin attribute score_threshold");
  CHECK_MSG(o.error.find("not registered") == std::string::npos, o.error);

  Scratch roi(
      "input x 1,4\nparse-error 8 5 /roi RoiAlign Assertion failed: plugin != nullptr: ROIAlign plugin was not found in the plugin "
      "registry!\n");
  tbs_test::RecordingSink sink2;
  o = build(request(roi), sink2);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "needs a TensorRT plugin that is not registered");

  // The op checker's words, with kINVALID_NODE (6).
  Scratch checker(
      "input x 1,4\nparse-error 6 2 /c MyOp creator && \"Plugin not found, are the plugin name, version, and namespace correct?\"\n");
  tbs_test::RecordingSink sink3;
  o = build(request(checker), sink3);
  CHECK_CONTAINS(o.error, "needs a TensorRT plugin that is not registered");
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
  CHECK_EQ(sink.lastStats.entriesBefore, counted(0));
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
  // Nothing was measured: with entry counts (10.8+) that is known and nothing is saved; without
  // them the (empty) cache is saved rather than risk losing entries.
  CHECK_EQ(s.has("model.cache"), !kCanCount);
  CHECK_EQ(sink.lastStats.savedAfterCancel, !kCanCount);
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
  CHECK_CONTAINS(sink.lastStats.warning, "not updated");
  CHECK_CONTAINS(sink.lastStats.warning, "could not be kept either");
  CHECK_EQ(sink.lastStats.entriesAfter, counted(3));
  CHECK_EQ(sink.lastStats.bytes, int64_t{-1});
  CHECK_EQ(sink.lastStats.deferredPath, std::string(""));
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
  std::vector<std::string> expected = {"model.engine", "model.engine.layers.json", "model.onnx"};
  CHECK(s.list() == expected);
}

TEST(engine_is_streamed_to_disk_where_the_library_has_it) {
  Scratch s("input x 1,4\nengine-bytes 4500\n");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(s), sink);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  CHECK_EQ(o.engineBytes, int64_t{4500});
  CHECK_EQ(fileContent(s.file("model.engine")).size(), size_t{4500});
  std::string j = journal();
  // 10.13+: buildSerializedNetworkToStream, handed over in 1000-byte pieces straight to the
  // temp file; older: buildSerializedNetwork and one write.
  CHECK_EQ(hasLine(j, "buildSerializedNetworkToStream"), kStreams);
  CHECK_EQ(hasLine(j, "chunks 5"), kStreams);
  CHECK_EQ(hasLine(j, "buildSerializedNetwork"), !kStreams);
  std::vector<std::string> expected = {"model.engine", "model.engine.layers.json", "model.onnx"};
  CHECK(s.list() == expected);
}

// An adapter compiled against newer headers than the library: 10.x headers from 10.8 with a 10.3
// library (JetPack 6), older 10.x headers with 10.0, 11.x headers with 11.0. What the library
// lacks is never called (the fake fails the build on any such call) and an option needing it is
// a clear error before the builder exists.
TEST(an_older_library_gets_only_what_it_has) {
  Scratch s("input x 1,4\ninput dims 2 shape\ncache-add 2\nengine-bytes 3000\n");
  tbs::BuildRequest r = request(s);
  r.shapeValues["dims"] = {{1, 1}, {2, 4}, {4, 8}};
  r.timingCachePath = s.file("model.cache");
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = buildOld(r, sink);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  std::string j = journal(FAKE_FULL_OLD_NVINFER);
  CHECK(j.find("invalid") == std::string::npos);
  // The factory is given the older release (the fake refuses a version newer than itself).
  CHECK(hasLine(j, "createInferBuilder version=" + std::to_string(FAKE_OLD_VERSION)));
  bool const oldStreams = FAKE_OLD_VERSION >= 101300;
  bool const oldV2 = FAKE_OLD_VERSION >= 101100;
  CHECK_EQ(hasLine(j, "buildSerializedNetworkToStream"), oldStreams && kStreams);
  CHECK(hasLine(j, oldV2 && kShapeV2 ? "setShapeValuesV2 dims max 4,8" : "setShapeValues dims max 4,8"));
  // queryKeys is 10.8+: the old 10.x library cannot count, 11.0 can.
  CHECK_EQ(sink.lastStats.entriesAfter, FAKE_OLD_VERSION >= 100800 && kCanCount ? int64_t{2} : int64_t{-1});

  auto refused = [&](tbs::BuildRequest const& bad, std::string const& needs) {
    tbs_test::RecordingSink other;
    tbs::BuildOutcome b = buildOld(bad, other);
    CHECK(b.status == tbs::BuildOutcome::Status::kFailed);
    CHECK_CONTAINS(b.error, needs + " or later; the loaded library is TensorRT " FAKE_OLD_TEXT);
    CHECK(journal(FAKE_FULL_OLD_NVINFER).find("createInferBuilder") == std::string::npos);
  };
  tbs::BuildRequest bad = request(s);
  // Each only where the old library lacks it (with TBS_FAKE_TRT_ROOT the old fake is derived
  // from the fakes' headers, not the adapter's).
#if NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 8
  if (FAKE_OLD_VERSION < 100800) {
    bad.precision = {"fp4"};
    refused(bad, "precision \"fp4\" needs TensorRT 10.8");
    bad = request(s);
    bad.inferCacheMisses = true;
    refused(bad, "needs TensorRT 10.8");
  }
#endif
#if NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 9
  if (FAKE_OLD_VERSION < 100900) {
    bad = request(s);
    bad.hardwareCompatibility = "same_compute_capability";
    refused(bad, "needs TensorRT 10.9");
  }
#endif
#if NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 1 && NV_TENSORRT_MINOR < 8
  if (FAKE_OLD_VERSION < 100100) {
    bad = request(s);
    bad.precision = {"int4"};
    refused(bad, "precision \"int4\" needs TensorRT 10.1");
  }
#endif
#if NV_TENSORRT_MAJOR == 11 && NV_TENSORRT_MINOR >= 1
  if (FAKE_OLD_VERSION < 110100) {
    bad = request(s);
    bad.buildRoute = "-conv_use_long_w=off";
    refused(bad, "buildRoute needs TensorRT 11.1");
  }
#endif
  (void)bad;
  (void)refused;
}

TEST(shape_tensor_inputs_get_profile_values) {
  Scratch s("input x -1,4\ninput target 3 shape\n");
  tbs::BuildRequest r = request(s);
  r.shapes["x"] = {{1, 4}, {2, 4}, {8, 4}};
  r.shapeValues["target"] = {{1, -1, 4}, {2, -1, 4}, {8, -1, 4}};
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  std::string j = journal();
  std::string fn = kShapeV2 ? "setShapeValuesV2" : "setShapeValues";
  CHECK(hasLine(j, fn + " target min 1,-1,4"));
  CHECK(hasLine(j, fn + " target opt 2,-1,4"));
  CHECK(hasLine(j, fn + " target max 8,-1,4"));
  CHECK(hasLine(j, "profile x max 8,4"));
  CHECK(hasLine(j, "addProfile"));
  // Without values a shape-tensor input is an error naming it, before any build.
  r.shapeValues.clear();
  o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "\"target\" is a shape tensor");
  CHECK(!hasLine(journal(), "build"));
}

#if NV_TENSORRT_MAJOR == 10
TEST(shape_values_beyond_32_bits_are_refused_where_only_setShapeValues_exists) {
  Scratch s("input target 1 shape\n");
  tbs::BuildRequest r = request(s);
  r.shapeValues["target"] = {{1}, {int64_t{1} << 33}, {int64_t{1} << 34}};
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = buildOld(r, sink);  // 10.0 or 10.3: no setShapeValuesV2
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "does not fit in 32 bits");
  CHECK(!hasLine(journal(FAKE_FULL_OLD_NVINFER), "build"));
}
#endif

// The device is chosen through the CUDA driver on the thread that builds (ctest points
// TBS_CUDA_DRIVER_LIB at native/test/fake_cuda_driver.cc): device 1's primary context is current
// on this thread when the builder is created, whichever CUDA runtime TensorRT would use.
template <class Fn>
Fn driverFunction(char const* name) {
  void* h = dlopen(FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  Fn fn = h != nullptr ? reinterpret_cast<Fn>(dlsym(h, name)) : nullptr;
  if (h != nullptr) dlclose(h);
  return fn;
}

TEST(device_option_selects_the_cuda_device_before_the_builder) {
  Scratch s("input x 1,4\n");
  tbs::BuildRequest r = request(s);
  r.device = 1;
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  auto current = driverFunction<int (*)()>("fakeCudaCurrentDevice");
  auto calls = driverFunction<char const* (*)()>("fakeCudaDriverCalls");
  CHECK(current != nullptr && calls != nullptr);
  if (current != nullptr) CHECK_EQ(current(), 1);  // on this (the building) thread
  if (calls != nullptr) CHECK_CONTAINS(std::string(calls()), "primaryCtxRetain 1\nctxSetCurrent 1\n");
  // Another thread has no current context: the choice is the build thread's, not the process's.
  int elsewhere = -2;
  std::thread([&] { elsewhere = current != nullptr ? current() : -3; }).join();
  CHECK_EQ(elsewhere, -1);
  tbs::GpuFact g = tbs::makeTensorRtBackend()->gpuFor(r);
  CHECK_EQ(g.name, std::string("Fake H100"));
  CHECK_EQ(g.computeCapability, std::string("9.0"));
  CHECK_EQ(g.cudaDriver, std::string("13.0"));
  // A device the driver does not have: an error that names it; no builder is created.
  r.device = 7;
  o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "device 7 does not exist: this machine has 2 CUDA devices (0..1)");
  CHECK(journal().find("createInferBuilder") == std::string::npos);
}

// A driver of an older CUDA major than TensorRT's runtime: refused before any builder, in those
// words; an older minor is a warning and the build goes on.
TEST(a_driver_older_than_the_cuda_runtime_is_said_before_any_build) {
  setenv("TBS_CUDART_LIB", FAKE_CUDART, 1);  // the runtime TensorRT uses: CUDA 12.4 (fake)
  Scratch s("input x 1,4\n");
  tbs::BuildRequest r = request(s);
  tbs_test::RecordingSink sink;
  setenv("FAKE_CUDA_DRIVER_VERSION", "11080", 1);
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "the CUDA driver is older than the library needs");
  CHECK_CONTAINS(o.error, "supports CUDA 11.8");
  CHECK_CONTAINS(o.error, "needs CUDA 12.4");
  CHECK(journal().find("createInferBuilder") == std::string::npos);
  setenv("TBS_TRT_LIB_DIR", FAKE_FULL_DIR, 1);
  tbs::BackendProbe p = tbs::makeTensorRtBackend()->probe();
  unsetenv("TBS_TRT_LIB_DIR");
  CHECK(!p.available);
  CHECK_CONTAINS(p.reason, "the CUDA driver is older than the library needs");
  CHECK_EQ(p.cudaDriver.version, std::string("11.8"));

  setenv("FAKE_CUDA_DRIVER_VERSION", "12020", 1);
  tbs_test::RecordingSink warned;
  o = build(r, warned);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  bool said = false;
  for (auto const& l : warned.lines()) said = said || l.find("minor version compatibility") != std::string::npos;
  CHECK(said);
  unsetenv("FAKE_CUDA_DRIVER_VERSION");
  unsetenv("TBS_CUDART_LIB");
}

TEST(cancel_keeps_the_entries_measured_before_the_stop) {
  Scratch s("input x 1,4\nwait-cancel\nthreads 2\ncache-add 4\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("model.cache");
  CancelAfterSteps sink(10);
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kCancelled);
  CHECK(!s.has("model.engine"));
  CHECK(sink.lastStats.savedAfterCancel);
  std::set<std::string> keys;
  CHECK(tbs_fake::parseCache(fileContent(r.timingCachePath), keys));
  CHECK_EQ(keys.size(), size_t{4});
}

// Another process holds the cache's lock (a stuck build): this build's entries go to a sidecar
// the next build merges; nothing is lost and nobody waits forever.
TEST(held_lock_defers_to_a_sidecar_that_the_next_build_merges) {
  setenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS", "200", 1);
  Scratch s("input x 1,4\ncache-add 3\ncache-prefix first\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("model.cache");
  tbs_test::RecordingSink first;
  {
    tbs_test::LockHolder other(r.timingCachePath + ".lock");
    CHECK(other.held());
    tbs::BuildOutcome o = build(r, first);
    CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  }
  CHECK(!s.has("model.cache"));
  std::string sidecar = first.lastStats.deferredPath;
  CHECK_CONTAINS(sidecar, "model.cache.pending-");
  CHECK(tbs_test::fileExists(sidecar));
  CHECK_CONTAINS(first.lastStats.warning, sidecar);

  std::ofstream(s.file("model.onnx")) << "input x 1,4\ncache-add 2\ncache-prefix second\n";
  tbs_test::RecordingSink second;
  CHECK(build(r, second).status == tbs::BuildOutcome::Status::kSucceeded);
  unsetenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS");
  CHECK_EQ(second.lastStats.entriesBefore, counted(3));  // started from the sidecar's entries
  CHECK_EQ(second.lastStats.deferredPath, std::string(""));
  CHECK(!tbs_test::fileExists(sidecar));
  std::set<std::string> keys;
  CHECK(tbs_fake::parseCache(fileContent(r.timingCachePath), keys));
  std::set<std::string> expected = {"first-0", "first-1", "first-2", "second-0", "second-1"};
  CHECK(keys == expected);
}

TEST(a_file_tensorrt_cannot_read_is_never_touched) {
  Scratch s("input x 1,4\ncache-add 2\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("notes.txt");
  std::ofstream(r.timingCachePath) << "my notes, not a cache";
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "is not a timing cache");
  CHECK_EQ(fileContent(r.timingCachePath), std::string("my notes, not a cache"));
  CHECK(!hasLine(journal(), "build"));
  CHECK(!s.has("model.engine"));
}

// The fake libnvinfer answering bad bytes as real TensorRT is known to: an EMPTY cache, not null.
// The build runs, the engine is written, and the file is byte-for-byte what it was.
TEST(an_unreadable_cache_read_as_an_empty_cache_is_never_touched) {
  Scratch s("input x 1,4\ncache-add 2\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("notes.txt");
  std::string const notes = "my notes, not a cache, from hours of work";
  std::ofstream(r.timingCachePath) << notes;
  setenv("FAKE_TRT_BAD_CACHE", "empty", 1);
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  unsetenv("FAKE_TRT_BAD_CACHE");
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  CHECK_EQ(fileContent(r.timingCachePath), notes);
  CHECK(s.has("model.engine"));
  CHECK_CONTAINS(sink.lastStats.warning, "cannot be proven that TensorRT read it");
  CHECK_CONTAINS(sink.lastStats.deferredPath, "notes.txt.pending-");
}

// A pinned build (--pinned-cache): TensorRT's kERROR_ON_TIMING_CACHE_MISS is set, the cache is
// read only, and a tactic it lacks fails the build with TensorRT's error (as the fake models it).
TEST(pinned_build_sets_error_on_miss_and_never_writes_the_cache) {
  Scratch s("input x 1,4\ncache-add 3\n");
  tbs::BuildRequest fill = request(s);
  fill.timingCachePath = s.file("model.cache");
  tbs_test::RecordingSink first;
  CHECK_MSG(build(fill, first).status == tbs::BuildOutcome::Status::kSucceeded, "filling the cache");
  std::string const filled = fileContent(fill.timingCachePath);

  tbs::BuildRequest pinned = request(s);
  pinned.timingCachePath = fill.timingCachePath;
  pinned.errorOnCacheMiss = true;
  tbs_test::RecordingSink hit;
  tbs::BuildOutcome o = build(pinned, hit);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  std::string const flag = std::to_string(static_cast<int>(nvinfer1::BuilderFlag::kERROR_ON_TIMING_CACHE_MISS));
  CHECK(hasLine(journal(), "setFlag " + flag));
  CHECK_EQ(fileContent(pinned.timingCachePath), filled);  // read only, even with nothing new

  // The model now needs two more tactics than the cache holds: TensorRT fails the build.
  std::ofstream(s.file("model.onnx")) << "input x 1,4\ncache-add 5\n";
  std::remove(s.file("model.engine").c_str());
  tbs_test::RecordingSink miss;
  o = build(pinned, miss);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "pinned timing cache");
  CHECK_CONTAINS(o.error, "timing cache miss for entry-3");  // TensorRT's (the fake's) own error
  CHECK(hasLine(journal(), "timing cache miss entry-3"));
  CHECK_EQ(fileContent(pinned.timingCachePath), filled);
  CHECK(!s.has("model.engine"));
}

// With entry counts (10.8+), a pinned build whose cache grew measured tactics the cache lacked:
// a cache miss, whatever the library returned, and no engine.
TEST(pinned_build_whose_cache_grew_fails_as_a_cache_miss) {
  Scratch s("input x 1,4\ncache-add 3\n");
  tbs::BuildRequest fill = request(s);
  fill.timingCachePath = s.file("model.cache");
  tbs_test::RecordingSink first;
  CHECK_MSG(build(fill, first).status == tbs::BuildOutcome::Status::kSucceeded, "filling the cache");
  std::string const filled = fileContent(fill.timingCachePath);
  std::remove(s.file("model.engine").c_str());

  // A library that times the two missing tactics anyway and returns an engine.
  std::ofstream(s.file("model.onnx")) << "input x 1,4\ncache-add 5\ncache-miss-silent\n";
  tbs::BuildRequest pinned = request(s);
  pinned.timingCachePath = fill.timingCachePath;
  pinned.errorOnCacheMiss = true;
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(pinned, sink);
  CHECK_EQ(fileContent(pinned.timingCachePath), filled);
  if (kCanCount) {
    CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
    CHECK_CONTAINS(o.error, "timing cache miss");
    CHECK_CONTAINS(o.error, "grew from 3 to 5 entries");
    CHECK(!s.has("model.engine"));
    CHECK_EQ(sink.lastStats.entriesBefore, 3);
    CHECK_EQ(sink.lastStats.entriesAfter, 5);
  } else {
    // Without entry counts nothing can prove it: TensorRT's answer stands.
    CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  }
}

// The cross-GPU claim as it would happen: a cache file tagged for another device, attached and
// saved through the adapter. The fake's builder measures into the attached cache (still tagged
// for the other device), so only a check at load keeps the file from being mixed.
TEST(a_cache_file_of_another_device_is_used_and_left_byte_for_byte) {
  Scratch s("input x 1,4\ncache-add 2\ncache-prefix here\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("model.cache");
  std::string const foreign = std::string(tbs_fake::kCacheMagic) + "tag " + std::to_string(FAKE_CURRENT_ENCODED) + "/dev1\nthere-0\n";
  std::ofstream(r.timingCachePath, std::ios::binary) << foreign;
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  CHECK(hasLine(journal(), "timingCache ignoreMismatch=1"));  // used, as trtexec uses it
  CHECK_EQ(fileContent(r.timingCachePath), foreign);
  CHECK_CONTAINS(sink.lastStats.warning, "made on another GPU or by another TensorRT version");
  CHECK_EQ(sink.lastStats.deferredPath, std::string());
  CHECK(tbs::listPendingCacheFiles(r.timingCachePath).empty());
  CHECK(s.has("model.engine"));
}

TEST(pinned_build_refuses_a_missing_or_unproven_cache) {
  Scratch s("input x 1,4\ncache-add 2\n");
  tbs::BuildRequest r = request(s);
  r.timingCachePath = s.file("none.cache");
  r.errorOnCacheMiss = true;
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "missing or empty");
  CHECK(!tbs_test::fileExists(r.timingCachePath));
  // Bad bytes read back as an empty cache (as TensorRT is known to): every tactic would miss, so
  // the pinned build is refused before it starts, and the file is left as it was.
  r.timingCachePath = s.file("notes.txt");
  std::string const notes = "my notes, not a cache";
  std::ofstream(r.timingCachePath) << notes;
  setenv("FAKE_TRT_BAD_CACHE", "empty", 1);
  tbs_test::RecordingSink unproven;
  o = build(r, unproven);
  unsetenv("FAKE_TRT_BAD_CACHE");
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "cannot be proven that TensorRT read it");
  CHECK(!hasLine(journal(), "build"));
  CHECK_EQ(fileContent(r.timingCachePath), notes);
}

// The engine's layer information beside it, as trtexec --exportLayerInfo: the engine loaded by a
// runtime, IEngineInspector's JSON as it is; names only by default, full records when detailed
// profiling verbosity was asked for. (The JSON is the fake's, shaped as TensorRT's is documented.)
TEST(layer_information_is_saved_beside_the_engine_through_the_engine_inspector) {
  Scratch s("input x 1,4\nengine-bytes 3000\n");
  tbs::BuildRequest r = request(s);
  std::string const layers = s.file("model.engine.layers.json");
  std::ofstream(layers) << "stale, from an earlier build";
  tbs_test::RecordingSink names;
  CHECK_MSG(build(r, names).status == tbs::BuildOutcome::Status::kSucceeded, "default verbosity");
  CHECK_CONTAINS(fileContent(layers), "\"Layers\": [\"fake_conv\", \"fake_relu\"]");
  std::string j = journal();
  if (kStreams) {
    // A streamed engine is read through a stream reader, never back whole into memory.
    CHECK_MSG(hasLine(j, "deserializeCudaEngineV2 3000"), j);
    CHECK(j.find("deserializeCudaEngine 3000") == std::string::npos);
  } else {
    CHECK(hasLine(j, "deserializeCudaEngine 3000"));
  }
  CHECK(hasLine(j, "getEngineInformation json"));
  // Inspector, engine, runtime: released in that order, after use.
  size_t inspector = j.find("delete inspector"), engine = j.find("delete engine"), runtime = j.find("delete runtime");
  CHECK(inspector != std::string::npos && inspector < engine && engine < runtime);

  r.profilingVerbosity = "detailed";
  tbs_test::RecordingSink detailed;
  CHECK_MSG(build(r, detailed).status == tbs::BuildOutcome::Status::kSucceeded, "detailed verbosity");
  std::string const json = fileContent(layers);
  CHECK_CONTAINS(json, "\"TacticName\": \"fake_sm90_xmma_fprop_f16\"");
  CHECK_CONTAINS(json, "\"Format/Datatype\": \"Channel major FP16 format where channel % 8 == 0\"");
  for (auto const& l : detailed.lines()) CHECK(l.find("no layer information") == std::string::npos);
}

TEST(build_route_follows_the_headers_and_library) {
  Scratch s("input x 1,4\n");
  tbs::BuildRequest r = request(s);
  r.buildRoute = "-conv_use_long_w=off";
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(r, sink);
#if NV_TENSORRT_MAJOR > 11 || (NV_TENSORRT_MAJOR == 11 && NV_TENSORRT_MINOR >= 1)
  if (kHeadersAtLeast(11, 1)) {
    CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
    CHECK(hasLine(journal(), "buildRoute -conv_use_long_w=off"));
  } else {  // an 11.1 adapter on an 11.0 library (cross-header fakes)
    CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
    CHECK_CONTAINS(o.error, "buildRoute needs TensorRT 11.1");
  }
#else
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "buildRoute needs TensorRT 11.1");
#endif
}

#if NV_TENSORRT_MAJOR > 11 || (NV_TENSORRT_MAJOR == 11 && NV_TENSORRT_MINOR >= 1)
// The knob database as TensorRT's tuner reads it: every entry with an option is a knob, whatever
// its allowed values are; an empty database is an answer, kept on disk and not read again.
TEST(build_routes_keep_every_knob_and_remember_an_empty_database) {
  if (!kHeadersAtLeast(11, 1)) return;  // an 11.1 adapter on an 11.0 library (cross-header fakes)
  tbs_test::TempDir state("tbs-trt-routes");
  setenv("TBS_STATE_DIR", state.path.c_str(), 1);
  setenv("TBS_TRT_LIB_DIR", FAKE_FULL_DIR, 1);
  std::string const db = R"({"tuner_version": "2.20", "tuner_options": [{"option": "-a", "allowed_values": "-a=[x | y]"},)"
                         R"( {"option": "-threads", "allowed_values": "-threads=[1...64]"}, {"option": "-n", "allowed_values": 7},)"
                         R"( {"option": "w"}, {"allowed_values": "-nameless=[1|2]"}]})";
  setenv("FAKE_TRT_BUILD_ROUTES", db.c_str(), 1);
  std::string json, error;
  CHECK_MSG(tbs::makeTensorRtBackend()->buildRoutes(json, error), error);
  CHECK_EQ(json, db);  // as the library returned it
  tbs::BackendProbe p = tbs::makeTensorRtBackend()->probe();
  CHECK(p.hasBuildRoutes);
  CHECK(p.buildRoutes == std::vector<std::string>({"-a=[x | y]", "-threads=[1...64]", "-n", "-w"}));

  // A fresh state folder, and a library that lists no routes.
  tbs_test::TempDir state2("tbs-trt-routes-empty");
  setenv("TBS_STATE_DIR", state2.path.c_str(), 1);
  setenv("FAKE_TRT_BUILD_ROUTES", "", 1);
  clearJournal();
  json = "stale";
  CHECK_MSG(tbs::makeTensorRtBackend()->buildRoutes(json, error), error);
  CHECK_EQ(json, std::string());
  CHECK(hasLine(journal(), "getAllBuildRoutes"));
  clearJournal();
  json = "stale";
  CHECK_MSG(tbs::makeTensorRtBackend()->buildRoutes(json, error), error);
  CHECK_EQ(json, std::string());
  CHECK_MSG(journal().find("createInferBuilder") == std::string::npos, journal());  // remembered: no builder
  p = tbs::makeTensorRtBackend()->probe();
  CHECK(p.hasBuildRoutes);
  CHECK(p.buildRoutes.empty());
  CHECK_CONTAINS(p.detail["buildRoutes"], "lists no build routes");
  unsetenv("FAKE_TRT_BUILD_ROUTES");
  unsetenv("TBS_TRT_LIB_DIR");
  unsetenv("TBS_STATE_DIR");
}
#endif

TEST_MAIN()
