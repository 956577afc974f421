// The addon's TensorRT loader (trt_host.cc, no TensorRT header) against fake libraries of every
// built major side by side in one folder and the real adapter libraries of this build: which
// major it chooses, what it says when no adapter fits, what it preloads, and a build through the
// chosen adapter (for 11.x this exercises the 11.x ILogger and vtables end to end).
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "check.h"
#include "core/backend.h"
#include "temp_dir.h"
#include "trt/trt_host.h"

namespace fs = std::filesystem;
using tbs::trt::parseAdapterList;

namespace {

std::vector<tbs::AdapterFact> built() { return parseAdapterList(BUILT_ADAPTERS); }

// The adapters of one major only (used when both majors are built).
[[maybe_unused]] std::vector<tbs::AdapterFact> only(int major) {
  std::vector<tbs::AdapterFact> out;
  for (auto const& a : built()) {
    if (a.major == major) out.push_back(a);
  }
  return out;
}

struct Env {
  Env(std::string const& libDir) {
    setenv("TBS_TRT_LIB_DIR", libDir.c_str(), 1);
    setenv("TBS_TRT_ADAPTER_DIR", ADAPTER_DIR, 1);
    setenv("TBS_CUDART_LIB", FAKE_CUDART, 1);
  }
  ~Env() {
    unsetenv("TBS_TRT_LIB_DIR");
    unsetenv("TBS_TRT_ADAPTER_DIR");
    unsetenv("TBS_CUDART_LIB");
  }
};

int newestMajor() {
  int m = 0;
  for (auto const& a : built()) m = a.major > m ? a.major : m;
  return m;
}

// A folder with only `major`'s fake libraries (links into the shared folder).
struct OneMajorDir : tbs_test::TempDir {
  explicit OneMajorDir(int major) : TempDir("tbs-trt-host") {
    for (char const* lib : {"libnvinfer.so.", "libnvonnxparser.so."}) {
      std::string name = lib + std::to_string(major);
      fs::create_symlink(fs::path(FAKE_BOTH_DIR) / name, file(name));
    }
  }
};

}  // namespace

TEST(adapter_list_parses) {
  auto v = parseAdapterList("10:10.3.0,11:11.1.0");
  CHECK_EQ(v.size(), size_t{2});
  CHECK_EQ(v[0].major, 10);
  CHECK_EQ(v[1].headerVersion, std::string("11.1.0"));
  CHECK(parseAdapterList("").empty());
}

TEST(newest_major_with_an_adapter_is_chosen) {
  Env env(FAKE_BOTH_DIR);
  tbs::BackendProbe p = tbs::trt::probeTensorRt(built());
  CHECK_MSG(p.available, p.reason);
  CHECK_EQ(p.adapter.major, newestMajor());
  CHECK_CONTAINS(p.adapter.path, "libtbs_trt" + std::to_string(newestMajor()) + ".so");
  CHECK_CONTAINS(p.library.path, "libnvinfer.so." + std::to_string(newestMajor()));
  CHECK_EQ(p.library.version.rfind(std::to_string(newestMajor()) + ".", 0), size_t{0});
  // The parser's release comes from its file name (getNvOnnxParserVersion says 100 on every
  // release); the fake's file is libnvonnxparser.so.<major>.
  CHECK_CONTAINS(p.parser.path, "libnvonnxparser.so." + std::to_string(newestMajor()));
  CHECK_EQ(p.parser.version, std::to_string(newestMajor()));
  CHECK_EQ(p.adapters.size(), built().size());
  CHECK_EQ(p.gpu.name, std::string("Fake RTX 3090"));
  CHECK_EQ(p.gpu.computeCapability, std::string("8.6"));
  CHECK_EQ(p.gpu.device, 0);
#if defined(HAVE_MAJOR_11)
  if (newestMajor() == 11 && p.library.version.rfind("11.0", 0) != 0) {
    CHECK(p.hasBuildRoutes);
    CHECK_EQ(p.buildRoutes.size(), size_t{2});
    CHECK_EQ(p.buildRoutes.at(0), std::string("-conv_use_long_w=[on|off]"));
  }
#endif
}

#if defined(HAVE_MAJOR_10) && defined(HAVE_MAJOR_11)
TEST(only_a_10_adapter_drives_the_10_library_beside_an_11) {
  Env env(FAKE_BOTH_DIR);
  tbs::BackendProbe p = tbs::trt::probeTensorRt(only(10));
  CHECK_MSG(p.available, p.reason);
  CHECK_EQ(p.adapter.major, 10);
  CHECK_CONTAINS(p.library.path, "libnvinfer.so.10");
}
#endif

TEST(a_library_without_its_adapter_is_named_with_the_fix) {
  int major = newestMajor();
  int missing = major == 11 ? 10 : 11;
  // Only the built major's library is present... but pretend the addon has no adapter for it.
  OneMajorDir dir(major);
  Env env(dir.path);
  std::vector<tbs::AdapterFact> others;
  others.push_back({missing, missing == 10 ? "10.16.0" : "11.1.0", ""});
  tbs::BackendProbe p = tbs::trt::probeTensorRt(others);
  CHECK(!p.available);
  CHECK_CONTAINS(p.reason, "TensorRT " + std::to_string(major) + ".");
  CHECK_CONTAINS(p.reason, "libnvinfer.so." + std::to_string(major) + ", but");
  CHECK_CONTAINS(p.reason, "this addon was built without TensorRT " + std::to_string(major) + " headers");
  CHECK_CONTAINS(p.reason, "TENSORRT_ROOT");
}

TEST(nothing_found_quotes_the_dynamic_linker) {
  tbs_test::TempDir empty("tbs-trt-host-empty");
  Env env(empty.path);
  tbs::BackendProbe p = tbs::trt::probeTensorRt(built());
  CHECK(!p.available);
  CHECK_CONTAINS(p.reason, "TensorRT not found");
  CHECK_CONTAINS(p.reason, "libnvinfer.so.11");
  CHECK_CONTAINS(p.reason, "libnvinfer.so.10");
  CHECK_CONTAINS(p.reason, "TBS_TRT_LIB_DIR");
}

TEST(no_adapter_at_all_says_how_to_get_one) {
  tbs::BackendProbe p = tbs::trt::probeTensorRt({});
  CHECK(!p.available);
  CHECK_CONTAINS(p.reason, "compiled without TensorRT headers");
}

TEST(cuda_runtime_and_builder_resources_in_the_lib_dir_are_preloaded) {
  int major = newestMajor();
  OneMajorDir dir(major);
  fs::copy_file(FAKE_CUDART, dir.file("libcudart.so.12"));
  // A builder resource library of this major, and one of another major that must be left alone.
  fs::copy_file(FAKE_CUDART, dir.file("libnvinfer_builder_resource.so." + std::to_string(major) + ".1.0"));
  fs::copy_file(FAKE_CUDART, dir.file("libnvinfer_builder_resource.so.9.9.9"));
  Env env(dir.path);
  unsetenv("TBS_CUDART_LIB");
  tbs::BackendProbe p = tbs::trt::probeTensorRt(built());
  CHECK_MSG(p.available, p.reason);
  bool cudart = false, resource = false, wrong = false;
  for (auto const& l : p.preloaded) {
    cudart = cudart || (l.path == dir.file("libcudart.so.12") && l.version == "12");
    resource = resource || l.path.find("builder_resource.so." + std::to_string(major) + ".1.0") != std::string::npos;
    wrong = wrong || l.path.find("9.9.9") != std::string::npos;
  }
  CHECK(cudart);
  CHECK(resource);
  CHECK(!wrong);
}

TEST(a_build_runs_through_the_chosen_adapter) {
  Env env(FAKE_BOTH_DIR);
  tbs_test::TempDir d("tbs-trt-host-build");
  std::ofstream(d.file("model.onnx")) << "input x 1,4\nengine-bytes 2500\n";
  tbs::BuildRequest r;
  r.backend = "tensorrt";
  r.modelPath = d.file("model.onnx");
  r.outputPath = d.file("model.engine");
  struct Sink : tbs::ProgressSink {
    void phaseStart(char const*, char const*, int32_t) noexcept override { ++starts; }
    bool stepComplete(char const*, int32_t) noexcept override { return true; }
    void phaseFinish(char const*) noexcept override {}
    void log(tbs::Severity, char const*) noexcept override {}
    void cacheStats(tbs::CacheStats const&) noexcept override {}
    bool cancelRequested() const noexcept override { return false; }
    int starts = 0;
  } sink;
  auto backend = tbs::trt::makeTensorRtHostBackend(built());
  CHECK_EQ(backend->version().rfind(std::to_string(newestMajor()) + ".", 0), size_t{0});
  tbs::BuildOutcome o = backend->build(r, sink);
  CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
  CHECK_EQ(o.engineBytes, int64_t{2500});
  CHECK(sink.starts > 0);
  CHECK(d.has("model.engine"));
  r.device = 1;
  tbs::GpuFact g = backend->gpuFor(r);
  CHECK_EQ(g.name, std::string("Fake H100"));
  CHECK_EQ(g.computeCapability, std::string("9.0"));
}

TEST(a_build_without_any_library_fails_with_the_reason) {
  tbs_test::TempDir empty("tbs-trt-host-none");
  Env env(empty.path);
  tbs::BuildRequest r;
  struct Sink : tbs::ProgressSink {
    void phaseStart(char const*, char const*, int32_t) noexcept override {}
    bool stepComplete(char const*, int32_t) noexcept override { return true; }
    void phaseFinish(char const*) noexcept override {}
    void log(tbs::Severity, char const*) noexcept override {}
    void cacheStats(tbs::CacheStats const&) noexcept override {}
    bool cancelRequested() const noexcept override { return false; }
  } sink;
  tbs::BuildOutcome o = tbs::trt::makeTensorRtHostBackend(built())->build(r, sink);
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "TensorRT not found");
}

TEST_MAIN()
