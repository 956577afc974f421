// The run-time loader against fake libnvinfer / libnvonnxparser builds (see tests.cmake):
// found, wrong major, missing symbol, not found, environment overrides, handle release.
#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>

#include "check.h"
#include "temp_dir.h"
#include "trt/trt_loader.h"
#include "trt/trt_logger.h"
#include "trt/trt_version.h"

using namespace tbs::trt;

namespace {

LoaderConfig config(std::string nvinfer, std::string parser) {
  LoaderConfig c;
  c.nvinferLib = std::move(nvinfer);
  c.onnxParserLib = std::move(parser);
  c.expectedMajor = NV_TENSORRT_MAJOR;
  return c;
}

// True while `path` is still mapped in this process (RTLD_NOLOAD opens nothing new).
bool stillLoaded(char const* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h != nullptr) dlclose(h);
  return h != nullptr;
}

void clearEnv() {
  unsetenv("TBS_TRT_LIB_DIR");
  unsetenv("TBS_NVINFER_LIB");
  unsetenv("TBS_NVONNXPARSER_LIB");
}

}  // namespace

TEST(env_defaults_follow_the_compiled_major) {
  clearEnv();
  std::string const m = std::to_string(NV_TENSORRT_MAJOR);
  LoaderConfig c = loaderConfigFromEnv(NV_TENSORRT_MAJOR);
  CHECK_EQ(c.nvinferLib, "libnvinfer.so." + m);
  CHECK_EQ(c.onnxParserLib, "libnvonnxparser.so." + m);
  CHECK_EQ(c.expectedMajor, NV_TENSORRT_MAJOR);
  setenv("TBS_TRT_LIB_DIR", "/opt/trt/lib/", 1);
  c = loaderConfigFromEnv(NV_TENSORRT_MAJOR);
  CHECK_EQ(c.nvinferLib, "/opt/trt/lib/libnvinfer.so." + m);
  CHECK_EQ(c.onnxParserLib, "/opt/trt/lib/libnvonnxparser.so." + m);
  setenv("TBS_NVINFER_LIB", "/elsewhere/libnvinfer.so", 1);
  c = loaderConfigFromEnv(NV_TENSORRT_MAJOR);
  CHECK_EQ(c.nvinferLib, std::string("/elsewhere/libnvinfer.so"));
  CHECK_EQ(c.onnxParserLib, "/opt/trt/lib/libnvonnxparser.so." + m);
  clearEnv();
}

TEST(found_via_lib_dir_reports_version_and_paths) {
  clearEnv();
  setenv("TBS_TRT_LIB_DIR", FAKE_GOOD_DIR, 1);
  LoadError err;
  auto libs = TrtLibraries::load(loaderConfigFromEnv(NV_TENSORRT_MAJOR), err);
  clearEnv();
  CHECK(libs != nullptr);
  if (!libs) {
    std::fprintf(stderr, "  load error: %s\n", err.message.c_str());
    return;
  }
  CHECK(err.kind == LoadFailure::kNone);
  CHECK_EQ(libs->versionString(), std::string(FAKE_CURRENT_TEXT));
  CHECK_EQ(libs->inferLibVersion(), FAKE_CURRENT_ENCODED);
  CHECK_EQ(libs->onnxParserVersion(), 100);
  CHECK(libs->hasInferRuntime());
  CHECK_CONTAINS(libs->nvinferPath(), "good/libnvinfer.so." + std::to_string(NV_TENSORRT_MAJOR));
  CHECK_CONTAINS(libs->onnxParserPath(), "good/libnvonnxparser.so." + std::to_string(NV_TENSORRT_MAJOR));
}

// A parser installed as NVIDIA's packages install it: libnvonnxparser.so.<major> linking to
// libnvonnxparser.so.<release>. getNvOnnxParserVersion() says 100 on every release, so the file
// is what tells a parser of another release apart.
struct ParserOfRelease : tbs_test::TempDir {
  explicit ParserOfRelease(std::string const& release) : TempDir("tbs-trt-parser") {
    std::filesystem::copy_file(FAKE_ONNXPARSER, file("libnvonnxparser.so." + release));
    std::filesystem::create_symlink("libnvonnxparser.so." + release, file("libnvonnxparser.so." + std::to_string(NV_TENSORRT_MAJOR)));
  }
  std::string soname() const { return file("libnvonnxparser.so." + std::to_string(NV_TENSORRT_MAJOR)); }
};

TEST(a_parser_of_another_release_is_refused_naming_both) {
  TrtVersion lib = decodeTrtVersion(FAKE_CURRENT_ENCODED);
  std::string other = std::to_string(lib.major) + "." + std::to_string(lib.minor + 1) + ".0";
  ParserOfRelease dir(other);
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_CURRENT, dir.soname()), err);
  CHECK(libs == nullptr);
  CHECK(err.kind == LoadFailure::kMixedInstall);
  CHECK_CONTAINS(err.message, "mixed TensorRT install refused");
  CHECK_CONTAINS(err.message, dir.file("libnvonnxparser.so." + other));
  CHECK_CONTAINS(err.message, "is TensorRT " + other);
  CHECK_CONTAINS(err.message, FAKE_NVINFER_CURRENT);
  CHECK_CONTAINS(err.message, std::string("is TensorRT ") + FAKE_CURRENT_TEXT);

  // Same major.minor, another patch: the same release, accepted.
  std::string samePatch = std::to_string(lib.major) + "." + std::to_string(lib.minor) + ".9";
  ParserOfRelease same(samePatch);
  libs = TrtLibraries::load(config(FAKE_NVINFER_CURRENT, same.soname()), err);
  CHECK_MSG(libs != nullptr, err.message);
  if (libs) CHECK(libs->parserReleaseKnown());
  // A parser file whose name carries only the major cannot be checked, and says so.
  libs = TrtLibraries::load(config(FAKE_NVINFER_CURRENT, FAKE_ONNXPARSER), err);
  CHECK_MSG(libs != nullptr, err.message);
  if (libs) CHECK(!libs->parserReleaseKnown());
}

TEST(factory_version_is_the_older_of_headers_and_library) {
  CHECK_EQ(factoryVersion(101600, 100300), 100300);
  CHECK_EQ(factoryVersion(100300, 101600), 100300);
  CHECK_EQ(factoryVersion(110100, 0), 110100);  // unknown library: the headers'
  TrtVersion v{};
  CHECK(parseTrtVersionText("10.8.0", v) && v.major == 10 && v.minor == 8 && v.patch == 0);
  CHECK(parseTrtVersionText("11.1", v) && v.major == 11 && v.minor == 1);
  CHECK(!parseTrtVersionText("10", v));
  CHECK(!parseTrtVersionText("10.x.1", v));
  CHECK(!parseTrtVersionText("", v));
}

TEST(factories_receive_the_header_versions_and_our_logger) {
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_CURRENT, FAKE_ONNXPARSER), err);
  CHECK(libs != nullptr);
  if (!libs) return;
  Logger logger;
  void* builder = libs->createInferBuilder(static_cast<nvinfer1::ILogger*>(&logger), NV_TENSORRT_VERSION);
  CHECK(builder == nullptr);  // the fake has no GPU
  void* h = dlopen(FAKE_NVINFER_CURRENT, RTLD_NOW | RTLD_NOLOAD);
  CHECK(h != nullptr);
  if (h) {
    auto version = reinterpret_cast<int32_t (*)()>(dlsym(h, "fakeLastVersion"));
    auto lastLogger = reinterpret_cast<void* (*)()>(dlsym(h, "fakeLastLogger"));
    CHECK(version != nullptr && lastLogger != nullptr);
    if (version && lastLogger) {
      CHECK_EQ(version(), static_cast<int32_t>(NV_TENSORRT_VERSION));
      CHECK(lastLogger() == static_cast<void*>(static_cast<nvinfer1::ILogger*>(&logger)));
    }
    dlclose(h);
  }
  // The fake logged through our ILogger exactly as libnvinfer would.
  CHECK_EQ(logger.lastError(), std::string("fake libnvinfer: no CUDA-capable device is detected"));
  CHECK(libs->createInferRuntime(&logger, NV_TENSORRT_VERSION) == nullptr);
  CHECK(libs->createOnnxParser(nullptr, &logger, 100) == nullptr);
}

TEST(older_minor_of_the_same_major_is_accepted) {
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_OLD, FAKE_ONNXPARSER), err);
  CHECK(libs != nullptr);
  if (libs) CHECK_EQ(libs->versionString(), std::string(FAKE_OLD_TEXT));
}

TEST(wrong_major_is_refused_and_unloaded) {
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_OTHER, FAKE_ONNXPARSER), err);
  CHECK(libs == nullptr);
  CHECK(err.kind == LoadFailure::kWrongMajor);
  CHECK_CONTAINS(err.message, "found TensorRT " FAKE_OTHER_TEXT);
  CHECK_CONTAINS(err.message, "compiled against TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " headers");
  CHECK_CONTAINS(err.message, FAKE_NVINFER_OTHER);
  CHECK(!stillLoaded(FAKE_NVINFER_OTHER));
}

TEST(missing_builder_symbol_is_named) {
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_NOBUILDER, FAKE_ONNXPARSER), err);
  CHECK(libs == nullptr);
  CHECK(err.kind == LoadFailure::kMissingSymbol);
  CHECK_CONTAINS(err.message, "createInferBuilder_INTERNAL");
  CHECK_CONTAINS(err.message, FAKE_CURRENT_TEXT);
  CHECK(!stillLoaded(FAKE_NVINFER_NOBUILDER));
}

TEST(missing_version_symbol_is_named) {
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_NOVERSION, FAKE_ONNXPARSER), err);
  CHECK(libs == nullptr);
  CHECK(err.kind == LoadFailure::kMissingSymbol);
  CHECK_CONTAINS(err.message, "getInferLibVersion");
}

TEST(missing_parser_symbol_is_named_and_nvinfer_released) {
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_OLD, FAKE_ONNXPARSER_NOPARSER), err);
  CHECK(libs == nullptr);
  CHECK(err.kind == LoadFailure::kMissingSymbol);
  CHECK_CONTAINS(err.message, "createNvOnnxParser_INTERNAL");
  CHECK(!stillLoaded(FAKE_ONNXPARSER_NOPARSER));
  CHECK(!stillLoaded(FAKE_NVINFER_OLD));
}

TEST(nvinfer_not_found_quotes_the_dynamic_linker) {
  LoadError err;
  std::string missing = std::string(FAKE_MISSING_DIR) + "/libnvinfer.so." + std::to_string(NV_TENSORRT_MAJOR);
  auto libs = TrtLibraries::load(config(missing, FAKE_ONNXPARSER), err);
  CHECK(libs == nullptr);
  CHECK(err.kind == LoadFailure::kNotFound);
  CHECK_CONTAINS(err.message, "TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " not found");
  CHECK_CONTAINS(err.message, missing);
  CHECK_CONTAINS(err.message, "No such file");
  CHECK_CONTAINS(err.message, "TBS_TRT_LIB_DIR");
}

TEST(by_name_search_without_tensorrt_installed_is_not_found) {
  clearEnv();
  LoadError err;
  auto libs = TrtLibraries::load(loaderConfigFromEnv(NV_TENSORRT_MAJOR), err);
  std::string const m = std::to_string(NV_TENSORRT_MAJOR);
  // This machine has no TensorRT; on one that does, the real library must be of this major.
  if (libs != nullptr) {
    std::printf("  (a real libnvinfer.so.%s is installed here: %s %s)\n", m.c_str(), libs->versionString().c_str(),
                libs->nvinferPath().c_str());
    CHECK_EQ(libs->versionString().rfind(m + ".", 0), size_t{0});
    return;
  }
  CHECK(err.kind == LoadFailure::kNotFound || err.kind == LoadFailure::kWrongMajor);
  CHECK_CONTAINS(err.message, "libnvinfer.so." + m);
}

TEST(parser_not_found_says_tensorrt_was_found) {
  LoadError err;
  std::string missing = std::string(FAKE_MISSING_DIR) + "/libnvonnxparser.so." + std::to_string(NV_TENSORRT_MAJOR);
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_CURRENT, missing), err);
  CHECK(libs == nullptr);
  CHECK(err.kind == LoadFailure::kNotFound);
  CHECK_CONTAINS(err.message, "TensorRT " FAKE_CURRENT_TEXT " found");
  CHECK_CONTAINS(err.message, "ONNX parser");
  CHECK_CONTAINS(err.message, missing);
}

TEST(successful_load_releases_handles_on_destruction) {
  LoadError err;
  auto libs = TrtLibraries::load(config(FAKE_NVINFER_OLD, FAKE_ONNXPARSER), err);
  CHECK(libs != nullptr);
  CHECK(stillLoaded(FAKE_NVINFER_OLD));
  libs.reset();
  CHECK(!stillLoaded(FAKE_NVINFER_OLD));
}

TEST_MAIN()
