#include "trt_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>

#include "lib_files.h"
#include "trt_version.h"

namespace tbs::trt {
namespace {

std::string envOr(char const* name, std::string fallback) {
  char const* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

std::string lastDlError() {
  char const* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown dlopen error");
}

// The file ld.so actually opened (after search-path resolution), for the probe's detail.
std::string resolvedPath(void* handle, std::string const& requested) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;
  }
  return requested;
}

template <class Fn>
Fn symbol(void* handle, char const* name) {
  dlerror();  // clear a stale error so a null result is attributable to this lookup
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

LoaderConfig loaderConfigFromEnv(int32_t compiledMajor) {
  LoaderConfig c;
  c.expectedMajor = compiledMajor;
  std::string suffix = ".so." + std::to_string(compiledMajor);
  std::string dir = envOr("TBS_TRT_LIB_DIR", "");
  std::string prefix = dir.empty() ? std::string() : (dir.back() == '/' ? dir : dir + "/");
  c.nvinferLib = envOr("TBS_NVINFER_LIB", prefix + "libnvinfer" + suffix);
  c.onnxParserLib = envOr("TBS_NVONNXPARSER_LIB", prefix + "libnvonnxparser" + suffix);
  return c;
}

std::unique_ptr<TrtLibraries> TrtLibraries::load(LoaderConfig const& config, LoadError& error) {
  error = LoadError{};
  std::unique_ptr<TrtLibraries> libs(new TrtLibraries());
  auto fail = [&error](LoadFailure kind, std::string message) {
    error.kind = kind;
    error.message = std::move(message);
    return nullptr;
  };

  libs->nvinfer_ = dlopen(config.nvinferLib.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (libs->nvinfer_ == nullptr) {
    return fail(LoadFailure::kNotFound, "TensorRT " + std::to_string(config.expectedMajor) + " not found: cannot load " +
                                            config.nvinferLib + ": " + lastDlError() +
                                            " (install TensorRT or set TBS_TRT_LIB_DIR / TBS_NVINFER_LIB)");
  }
  libs->nvinferPath_ = resolvedPath(libs->nvinfer_, config.nvinferLib);

  auto version = symbol<VersionFn>(libs->nvinfer_, "getInferLibVersion");
  if (version == nullptr) {
    return fail(LoadFailure::kMissingSymbol, libs->nvinferPath_ + " does not export getInferLibVersion: not a TensorRT library?");
  }
  libs->inferVersion_ = version();
  TrtVersion found = decodeTrtVersion(libs->inferVersion_);
  if (found.major != config.expectedMajor) {
    // Flags are plain enum values: 11.x renumbered BuilderFlag and removed the weakly-typed
    // precision flags, so driving another major through these headers would set wrong options.
    return fail(LoadFailure::kWrongMajor, "found TensorRT " + formatTrtVersion(found) + " at " + libs->nvinferPath_ +
                                              ", but this addon was compiled against TensorRT " + std::to_string(config.expectedMajor) +
                                              " headers; majors differ in builder flags and ABI, so it is not used (install "
                                              "TensorRT " +
                                              std::to_string(config.expectedMajor) + ".x or rebuild the addon against matching headers)");
  }

  libs->createBuilder_ = symbol<CreateFn>(libs->nvinfer_, "createInferBuilder_INTERNAL");
  if (libs->createBuilder_ == nullptr) {
    return fail(LoadFailure::kMissingSymbol, libs->nvinferPath_ + " (TensorRT " + formatTrtVersion(found) +
                                                 ") does not export createInferBuilder_INTERNAL: " + lastDlError());
  }
  // The runtime factory is only needed to deserialize engines (inspection); its absence (e.g. a
  // builder-only package) does not make builds impossible.
  libs->createRuntime_ = symbol<CreateFn>(libs->nvinfer_, "createInferRuntime_INTERNAL");

  libs->parser_ = dlopen(config.onnxParserLib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (libs->parser_ == nullptr) {
    return fail(LoadFailure::kNotFound, "TensorRT " + formatTrtVersion(found) + " found at " + libs->nvinferPath_ +
                                            ", but its ONNX parser cannot be loaded: " + config.onnxParserLib + ": " + lastDlError() +
                                            " (install the TensorRT ONNX parser or set TBS_NVONNXPARSER_LIB)");
  }
  libs->parserPath_ = resolvedPath(libs->parser_, config.onnxParserLib);
  libs->createParser_ = symbol<CreateParserFn>(libs->parser_, "createNvOnnxParser_INTERNAL");
  if (libs->createParser_ == nullptr) {
    return fail(LoadFailure::kMissingSymbol, libs->parserPath_ + " does not export createNvOnnxParser_INTERNAL: " + lastDlError());
  }
  auto parserVersion = symbol<ParserVersionFn>(libs->parser_, "getNvOnnxParserVersion");
  if (parserVersion == nullptr) {
    return fail(LoadFailure::kMissingSymbol, libs->parserPath_ + " does not export getNvOnnxParserVersion: " + lastDlError());
  }
  libs->parserVersion_ = parserVersion();
  // The parser's release: from getNvOnnxParserVersion() where it says one (every release up to
  // 11.1 returns 100, "0.1.0", which says nothing), else from the file the soname resolves to
  // (libnvonnxparser.so.10 -> libnvonnxparser.so.10.8.0, as NVIDIA's packages install it).
  TrtVersion parser{};
  std::string parserText;
  if (libs->parserVersion_ >= 10000) {
    parser = decodeTrtVersion(libs->parserVersion_);
    parserText = formatTrtVersion(parser);
    libs->parserReleaseKnown_ = true;
  } else if (parseTrtVersionText(versionFromFileName(libs->parserPath_), parser)) {
    parserText = versionFromFileName(libs->parserPath_);
    libs->parserReleaseKnown_ = true;
  }
  if (libs->parserReleaseKnown_ && (parser.major != found.major || parser.minor != found.minor)) {
    char real[PATH_MAX];
    std::string parserFile = libs->parserPath_;
    if (realpath(libs->parserPath_.c_str(), real) != nullptr && parserFile != real) parserFile += " (" + std::string(real) + ")";
    return fail(LoadFailure::kMixedInstall,
                "mixed TensorRT install refused: the ONNX parser " + parserFile + " is TensorRT " + parserText + ", but libnvinfer " +
                    libs->nvinferPath_ + " is TensorRT " + formatTrtVersion(found) + "; the parser must come from the same release (" +
                    std::to_string(found.major) + "." + std::to_string(found.minor) +
                    ") as libnvinfer, because it calls the network definition by "
                    "that release's layout (install the matching libnvonnxparser, or point TBS_NVONNXPARSER_LIB "
                    "or TBS_TRT_LIB_DIR at it)");
  }
  return libs;
}

TrtLibraries::~TrtLibraries() {
  // Parser first: it depends on libnvinfer. All TensorRT objects must already be destroyed;
  // the backend keeps its TrtLibraries alive for as long as it exists.
  if (parser_ != nullptr) dlclose(parser_);
  if (nvinfer_ != nullptr) dlclose(nvinfer_);
}

void* TrtLibraries::createInferBuilder(void* logger, int32_t version) const noexcept { return createBuilder_(logger, version); }

void* TrtLibraries::createInferRuntime(void* logger, int32_t version) const noexcept {
  return createRuntime_ != nullptr ? createRuntime_(logger, version) : nullptr;
}

void* TrtLibraries::createOnnxParser(void* network, void* logger, int32_t version) const noexcept {
  return createParser_(network, logger, version);
}

std::string TrtLibraries::onnxParserFileVersion() const {
  std::string v = versionFromFileName(parserPath_);
  return v.empty() ? std::to_string(parserVersion_) : v;
}

std::string TrtLibraries::versionString() const { return formatTrtVersion(inferVersion_); }

}  // namespace tbs::trt
