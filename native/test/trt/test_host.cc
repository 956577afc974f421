// The addon's TensorRT loader (trt_host.cc, no TensorRT header) against fake libraries of every
// built major side by side in one folder and the real adapter libraries of this build: which
// major it chooses, what it says when no adapter fits, what it preloads, and a build through the
// chosen adapter (for 11.x this exercises the 11.x ILogger and vtables end to end).
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

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

// The adapters of one major only.
std::vector<tbs::AdapterFact> only(int major) {
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

// Runs `body` in a child process and checks that it passed. A process never loads two TensorRT
// majors (trt_host.cc), so every case that opens a library gets a process of its own.
template <class Body>
void inChild(Body body) {
  std::fflush(stdout);
  std::fflush(stderr);
  int const before = check::failures();  // the child inherits the count so far
  pid_t pid = fork();
  if (pid == 0) {
    body();
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(check::failures() == before ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "child case failed (status " + std::to_string(status) + "; its checks are printed above)");
}

// The journal of the fake libnvinfer.so.<major> in the shared folder (empty when not loaded).
std::string fakeJournal(int major) {
  void* h = dlopen((std::string(FAKE_BOTH_DIR) + "/libnvinfer.so." + std::to_string(major)).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return {};
  auto fn = reinterpret_cast<char const* (*)()>(dlsym(h, "fakeFullJournal"));
  std::string j = fn != nullptr ? fn() : "";
  dlclose(h);
  return j;
}

bool loadedInProcess(std::string const& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h != nullptr) dlclose(h);
  return h != nullptr;
}

}  // namespace

TEST(adapter_list_parses) {
  auto v = parseAdapterList("10:10.3.0,11:11.1.0");
  CHECK_EQ(v.size(), size_t{2});
  CHECK_EQ(v[0].major, 10);
  CHECK_EQ(v[1].headerVersion, std::string("11.1.0"));
  CHECK(parseAdapterList("").empty());
}

TEST(newest_major_with_an_adapter_is_chosen) {
  inChild([] {
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
    // Listing backends creates no builder (no CUDA start, no builder kernel library).
    CHECK(fakeJournal(newestMajor()).find("createInferBuilder") == std::string::npos);
#if defined(HAVE_MAJOR_11)
    if (newestMajor() == 11 && p.library.version.rfind("11.0", 0) != 0) {
      // Build routes only when asked; then kept on disk, and the next listing has them.
      tbs_test::TempDir state("tbs-trt-host-state");
      setenv("TBS_STATE_DIR", state.path.c_str(), 1);
      p = tbs::trt::probeTensorRt(built());
      CHECK(!p.hasBuildRoutes);
      CHECK_CONTAINS(p.detail["buildRoutes"], "not read yet");
      std::string json, error;
      CHECK_MSG(tbs::trt::makeTensorRtHostBackend(built())->buildRoutes(json, error), error);
      CHECK_CONTAINS(json, "conv_use_long_w");
      CHECK(fakeJournal(11).find("createInferBuilder") != std::string::npos);
      p = tbs::trt::probeTensorRt(built());
      CHECK(p.hasBuildRoutes);
      CHECK_EQ(p.buildRoutes.at(0), std::string("-conv_use_long_w=[on|off]"));
      CHECK_EQ(p.detail["buildRoutesJson"], json);
      unsetenv("TBS_STATE_DIR");
    }
#else
    std::string json, error;
    CHECK(!tbs::trt::makeTensorRtHostBackend(built())->buildRoutes(json, error));
    CHECK_CONTAINS(error, "no build routes");
#endif
  });
}

#if defined(HAVE_MAJOR_10) && defined(HAVE_MAJOR_11)
TEST(only_a_10_adapter_drives_the_10_library_beside_an_11) {
  inChild([] {
    Env env(FAKE_BOTH_DIR);
    tbs::BackendProbe p = tbs::trt::probeTensorRt(only(10));
    CHECK_MSG(p.available, p.reason);
    CHECK_EQ(p.adapter.major, 10);
    CHECK_CONTAINS(p.library.path, "libnvinfer.so.10");
  });
}
#endif

// A library of a major without an adapter is never opened (its static constructors never run):
// not found by the soname search, and refused by name through TBS_NVINFER_LIB.
TEST(a_major_without_an_adapter_is_never_opened) {
  inChild([] {
    int major = newestMajor();
    int missing = major == 11 ? 10 : 11;
    OneMajorDir dir(major);
    Env env(dir.path);
    std::vector<tbs::AdapterFact> others;
    others.push_back({missing, missing == 10 ? "10.16.0" : "11.1.0", ""});
    tbs::BackendProbe p = tbs::trt::probeTensorRt(others);
    CHECK(!p.available);
    CHECK_CONTAINS(p.reason, "TensorRT not found");
    CHECK_CONTAINS(p.reason, "has adapters for TensorRT " + std::to_string(missing) + " only");
    CHECK(!loadedInProcess(dir.file("libnvinfer.so." + std::to_string(major))));

    setenv("TBS_NVINFER_LIB", dir.file("libnvinfer.so." + std::to_string(major)).c_str(), 1);
    p = tbs::trt::probeTensorRt(others);
    unsetenv("TBS_NVINFER_LIB");
    CHECK(!p.available);
    CHECK_CONTAINS(p.reason, "libnvinfer.so." + std::to_string(major) + " is TensorRT " + std::to_string(major));
    CHECK_CONTAINS(p.reason, "this addon was built without TensorRT " + std::to_string(major) + " headers");
    CHECK_CONTAINS(p.reason, "it is not opened");
    CHECK_CONTAINS(p.reason, "TENSORRT_ROOT");
    CHECK(!loadedInProcess(dir.file("libnvinfer.so." + std::to_string(major))));
  });
}

#if defined(HAVE_MAJOR_10) && defined(HAVE_MAJOR_11)
// With both installed and both adapters built, 11 is chosen; a later request that could only use
// 10 is refused instead of loading a second major into the process.
TEST(a_second_major_is_never_loaded_into_one_process) {
  inChild([] {
    Env env(FAKE_BOTH_DIR);
    tbs::BackendProbe p = tbs::trt::probeTensorRt(built());
    CHECK_MSG(p.available, p.reason);
    CHECK_EQ(p.adapter.major, 11);
    p = tbs::trt::probeTensorRt(only(10));
    CHECK(!p.available);
    CHECK_CONTAINS(p.reason, "TensorRT 11 is already loaded in this process");
    CHECK_CONTAINS(p.reason, "never loads two TensorRT majors");
    CHECK(!loadedInProcess(std::string(FAKE_BOTH_DIR) + "/libnvinfer.so.10"));
  });
}
#endif

TEST(nothing_found_quotes_the_dynamic_linker) {
  tbs_test::TempDir empty("tbs-trt-host-empty");
  Env env(empty.path);
  tbs::BackendProbe p = tbs::trt::probeTensorRt(built());
  CHECK(!p.available);
  CHECK_CONTAINS(p.reason, "TensorRT not found");
  // Only the majors with an adapter are looked for.
  for (int m : {10, 11}) {
    bool looked = p.reason.find("libnvinfer.so." + std::to_string(m)) != std::string::npos;
    CHECK_EQ(looked, !only(m).empty());
  }
  CHECK_CONTAINS(p.reason, "TBS_TRT_LIB_DIR");
}

TEST(no_adapter_at_all_says_how_to_get_one) {
  tbs::BackendProbe p = tbs::trt::probeTensorRt({});
  CHECK(!p.available);
  CHECK_CONTAINS(p.reason, "compiled without TensorRT headers");
}

TEST(cuda_runtime_and_builder_resources_in_the_lib_dir_are_preloaded) {
  inChild([] {
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
  });
}

TEST(a_build_runs_through_the_chosen_adapter) {
  inChild([] {
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
  });
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
