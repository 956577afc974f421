// Plugins end to end through TrtBackend against the fakes (fake_nvinfer_plugin.cc: the standard
// plugin library; fake_user_plugin.cc: user libraries; fake_plugin_registry.h: the registry,
// empty until a library registers creators; the fake parser looks plugin ops up in it through
// network->getBuilder()). The cases run in this file's order in one process, because plugin
// initialization is once per process: first without the standard plugin library (the parse must
// fail naming the op and node), then with it.
// This checks our adapter against what the fakes model; real libnvinfer_plugin is not run here.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <string>

#include "check.h"
#include "model_dir.h"
#include "recording_sink.h"
#include "trt/trt_backend.h"

namespace {

using tbs_test::request;

struct Scratch : tbs_test::ModelDir {
  explicit Scratch(std::string const& script) : ModelDir("tbs-trt-plugins", script) {}
};

// A detector exported with EfficientNMS_TRT (a standard plugin) after a plain input.
char const* const kDetector = "input images 1,3,64,64\nplugin-op nms_0 EfficientNMS_TRT\n";

// The fake libnvinfer's journal (fake_full_nvinfer.cc), cleared by each build().
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

// Where `line` first appears in `text` as a whole line (npos when it does not).
size_t lineAt(std::string const& text, std::string const& line) {
  size_t at = ("\n" + text).find("\n" + line + "\n");
  return at;
}

tbs::BuildOutcome build(tbs::BuildRequest const& r, tbs::ProgressSink& sink) {
  clearJournal();
  setenv("TBS_TRT_LIB_DIR", FAKE_FULL_DIR, 1);
  tbs::BuildOutcome o = tbs::makeTensorRtBackend()->build(r, sink);
  unsetenv("TBS_TRT_LIB_DIR");
  return o;
}

int pluginInitCalls() {
  void* h = dlopen(FAKE_FULL_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return 0;  // never loaded
  auto fn = reinterpret_cast<int (*)()>(dlsym(h, "fakePluginInitCalls"));
  int n = fn != nullptr ? fn() : -1;
  dlclose(h);
  return n;
}

bool logged(tbs_test::RecordingSink const& sink, std::string const& part) {
  for (auto const& l : sink.lines()) {
    if (l.rfind("log ", 0) == 0 && l.find(part) != std::string::npos) return true;
  }
  return false;
}

// Must stay first: the process has not initialized plugins yet.
TEST(without_the_standard_plugins_a_plugin_op_fails_to_parse_naming_op_and_node) {
  Scratch d(kDetector);
  setenv("TBS_NVINFER_PLUGIN_LIB", "/nonexistent/libnvinfer_plugin.so", 1);
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(d), sink);
  unsetenv("TBS_NVINFER_PLUGIN_LIB");
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "EfficientNMS_TRT");
  CHECK_CONTAINS(o.error, "nms_0");
  CHECK_CONTAINS(o.error, "needs a TensorRT plugin that is not registered");
  CHECK_CONTAINS(o.error, "the standard plugins are NOT loaded: cannot load the standard plugin library /nonexistent/libnvinfer_plugin.so");
  CHECK_CONTAINS(o.error, "--dynamic-plugins");
  CHECK(logged(sink, "models with plugin ops will not parse"));
  CHECK_EQ(pluginInitCalls(), 0);
}

TEST(with_the_standard_plugins_from_libnvinfers_folder_the_same_model_builds) {
  Scratch d(kDetector);
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = build(request(d), sink);
  CHECK_EQ(o.error, std::string());
  CHECK(o.status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK_EQ(pluginInitCalls(), 1);
  // Once per process: a second build does not initialize again.
  Scratch again(kDetector);
  tbs_test::RecordingSink sink2;
  CHECK(build(request(again), sink2).status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK_EQ(pluginInitCalls(), 1);
}

TEST(the_probe_lists_the_plugin_library_and_the_registered_creators) {
  setenv("TBS_TRT_LIB_DIR", FAKE_FULL_DIR, 1);
  tbs::BackendProbe p = tbs::makeTensorRtBackend()->probe();
  unsetenv("TBS_TRT_LIB_DIR");
  CHECK(p.available);
  CHECK_CONTAINS(p.pluginLibrary.path, "libnvinfer_plugin.so.");
  CHECK_EQ(p.pluginCreators, 4);  // the fake's standard creators
}

TEST(a_custom_op_needs_its_user_plugin_library_dynamic_or_static) {
  std::string const script = "input x 1,8\nplugin-op custom_7 MyCustomOp MyCustomOp_TRT\n";
  {
    Scratch d(script);
    tbs_test::RecordingSink sink;
    tbs::BuildOutcome o = build(request(d), sink);
    CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
    CHECK_CONTAINS(o.error, "custom_7");
    CHECK_CONTAINS(o.error, "MyCustomOp");
    CHECK_CONTAINS(o.error, "the standard plugins of ");
    CHECK_CONTAINS(o.error, "are registered (4 plugin creators)");
  }
  {
    Scratch d(script);
    tbs::BuildRequest r = request(d);
    r.dynamicPlugins = {"/nonexistent/libmy.so"};
    tbs_test::RecordingSink sink;
    tbs::BuildOutcome o = build(r, sink);
    CHECK_CONTAINS(o.error, "dynamic plugin library not found or not a file: /nonexistent/libmy.so");
  }
  {
    Scratch d(script);
    tbs::BuildRequest r = request(d);
    r.dynamicPlugins = {FAKE_USER_DYNAMIC_PLUGIN};
    r.pluginsToSerialize = {FAKE_USER_DYNAMIC_PLUGIN};
    tbs_test::RecordingSink sink;
    tbs::BuildOutcome o = build(r, sink);
    CHECK_EQ(o.error, std::string());
    CHECK(o.status == tbs::BuildOutcome::Status::kSucceeded);
    CHECK(logged(sink, std::string("Loaded dynamic plugin library ") + FAKE_USER_DYNAMIC_PLUGIN));
    // As trtexec loads an engine: the dynamic plugins go into the runtime's registry before the
    // engine is deserialized for its layer information.
    std::string const j = journal();
    size_t runtimeLoad = lineAt(j, std::string("runtime registry loadLibrary ") + FAKE_USER_DYNAMIC_PLUGIN);
    size_t deserialize = std::min(j.find("deserializeCudaEngine "), j.find("deserializeCudaEngineV2 "));
    CHECK_MSG(runtimeLoad != std::string::npos && deserialize != std::string::npos && runtimeLoad < deserialize, j);
  }
}

TEST(a_static_plugin_library_registers_when_loaded) {
  std::string const script = "input x 1,8\nplugin-op custom_8 MyStaticOp MyStaticOp_TRT\n";
  {
    Scratch d(script);
    tbs_test::RecordingSink sink;
    CHECK_CONTAINS(build(request(d), sink).error, "custom_8");
  }
  Scratch d(script);
  tbs::BuildRequest r = request(d);
  r.staticPlugins = {FAKE_USER_STATIC_PLUGIN};
  tbs_test::RecordingSink sink;
  // The library's unused code calls a symbol nothing defines: trtexec's RTLD_LAZY loads it.
  tbs::BuildOutcome o = build(r, sink);
  CHECK_EQ(o.error, std::string());
  CHECK(o.status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK(logged(sink, std::string("Loaded static plugin library ") + FAKE_USER_STATIC_PLUGIN));
  // Loaded (its constructor registered the creator) before the builder was created, as trtexec.
  std::string const j = journal();
  size_t registered = lineAt(j, "registry register MyStaticOp_TRT");
  size_t builder = j.find("createInferBuilder");
  CHECK_MSG(registered != std::string::npos && builder != std::string::npos && registered < builder, j);
}

// A version-compatible build as trtexec makes one: the plugin libraries the parser names are
// loaded, handed to the runtime, and serialized into the engine unless the lean runtime is
// excluded; a parser that cannot list them is a warning.
TEST(a_version_compatible_build_uses_the_plugin_libraries_the_parser_names) {
  std::string const script = std::string("input x 1,8\nvc-plugin-lib ") + FAKE_USER_DYNAMIC_PLUGIN + "\n";
  {
    Scratch d(script);
    tbs::BuildRequest r = request(d);
    r.versionCompatible = true;
    tbs_test::RecordingSink sink;
    tbs::BuildOutcome o = build(r, sink);
    CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
    std::string const j = journal();
    CHECK_MSG(lineAt(j, std::string("pluginToSerialize ") + FAKE_USER_DYNAMIC_PLUGIN) != std::string::npos, j);
    CHECK_MSG(lineAt(j, std::string("runtime registry loadLibrary ") + FAKE_USER_DYNAMIC_PLUGIN) != std::string::npos, j);
    CHECK(logged(sink, "plugin libraries this version-compatible engine needs"));
  }
  {
    Scratch d(script);
    tbs::BuildRequest r = request(d);
    r.versionCompatible = true;
    r.excludeLeanRuntime = true;
    tbs_test::RecordingSink sink;
    tbs::BuildOutcome o = build(r, sink);
    CHECK_MSG(o.status == tbs::BuildOutcome::Status::kSucceeded, o.error);
    std::string const j = journal();
    CHECK_MSG(j.find("pluginToSerialize") == std::string::npos, j);
    CHECK(lineAt(j, std::string("runtime registry loadLibrary ") + FAKE_USER_DYNAMIC_PLUGIN) != std::string::npos);
  }
  {
    Scratch d("input x 1,8\nvc-plugin-query-fails\n");
    tbs::BuildRequest r = request(d);
    r.versionCompatible = true;
    tbs_test::RecordingSink sink;
    CHECK(build(r, sink).status == tbs::BuildOutcome::Status::kSucceeded);
    CHECK(logged(sink, "could not list the plugin libraries"));
  }
}

}  // namespace

TEST_MAIN()
