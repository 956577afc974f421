// Loads libnvinfer / libnvonnxparser at run time (dlopen) instead of linking them, so one build
// of the addon runs on machines with and without TensorRT and can say what it found.
// Only the exported factory functions are resolved here; everything else in TensorRT is reached
// through virtual calls on the objects they return.
//
// NOT RUN HERE: no real libnvinfer exists on the development machines. This loader is tested
// against tiny fake libraries built by native/test/trt (fake_nvinfer.cc, fake_nvonnxparser.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tbs::trt {

// Where to find the libraries and which major version the addon was compiled against.
struct LoaderConfig {
  std::string nvinferLib;     // a file name searched by the dynamic linker, or a path with '/'
  std::string onnxParserLib;  // same for the ONNX parser
  int32_t expectedMajor = 0;  // NV_TENSORRT_MAJOR of the headers the addon was built with
};

// Defaults "libnvinfer.so.<major>" / "libnvonnxparser.so.<major>", overridable by environment:
//   TBS_TRT_LIB_DIR       directory holding both libraries (joined with the default names)
//   TBS_NVINFER_LIB       file name or full path of libnvinfer (wins over TBS_TRT_LIB_DIR)
//   TBS_NVONNXPARSER_LIB  file name or full path of libnvonnxparser
LoaderConfig loaderConfigFromEnv(int32_t compiledMajor);

enum class LoadFailure : uint8_t { kNone = 0, kNotFound, kWrongMajor, kMissingSymbol, kMixedInstall };

struct LoadError {
  LoadFailure kind = LoadFailure::kNone;
  std::string message;  // names the library, the symbol or the versions involved
};

class TrtLibraries {
 public:
  // Returns null and fills `error` when a library cannot be loaded, has the wrong major version
  // or lacks a required symbol, or when the ONNX parser is of another release (major.minor) than
  // libnvinfer (a mixed install: the parser calls INetworkDefinition methods by the slots of its
  // own release, and 10.8 and 10.9 order them differently). libnvinfer is opened first with RTLD_NOW | RTLD_GLOBAL: the
  // parser library resolves its libnvinfer symbols against that same instance.
  static std::unique_ptr<TrtLibraries> load(LoaderConfig const& config, LoadError& error);

  ~TrtLibraries();
  TrtLibraries(TrtLibraries const&) = delete;
  TrtLibraries& operator=(TrtLibraries const&) = delete;

  // Same contracts as the inline wrappers in NvInfer.h / NvInferRuntime.h / NvOnnxParser.h.
  void* createInferBuilder(void* logger, int32_t version) const noexcept;
  void* createInferRuntime(void* logger, int32_t version) const noexcept;  // null if unexported
  void* createOnnxParser(void* network, void* logger, int32_t version) const noexcept;

  int32_t inferLibVersion() const { return inferVersion_; }     // encoded, e.g. 101601
  std::string versionString() const;                            // "10.16.1"
  int32_t onnxParserVersion() const { return parserVersion_; }  // -1 when not exported
  // The parser's release from its file name (libnvonnxparser.so.10.3.0 -> "10.3.0"):
  // getNvOnnxParserVersion() returns 100 on every 10.x and 11.x, so it cannot tell them apart.
  std::string onnxParserFileVersion() const;
  // False when neither getNvOnnxParserVersion() nor the parser's file name says its release, so
  // the "same release as libnvinfer" check could not be made (probe detail says so).
  bool parserReleaseKnown() const { return parserReleaseKnown_; }
  bool hasInferRuntime() const { return createRuntime_ != nullptr; }
  std::string const& nvinferPath() const { return nvinferPath_; }  // as resolved by ld.so
  std::string const& onnxParserPath() const { return parserPath_; }

 private:
  TrtLibraries() = default;

  using CreateFn = void* (*)(void*, int32_t) noexcept;
  using CreateParserFn = void* (*)(void*, void*, int) noexcept;
  using VersionFn = int32_t (*)() noexcept;
  using ParserVersionFn = int (*)() noexcept;

  void* nvinfer_ = nullptr;
  void* parser_ = nullptr;
  CreateFn createBuilder_ = nullptr;
  CreateFn createRuntime_ = nullptr;
  CreateParserFn createParser_ = nullptr;
  int32_t inferVersion_ = 0;
  int32_t parserVersion_ = -1;
  bool parserReleaseKnown_ = false;
  std::string nvinferPath_;
  std::string parserPath_;
};

}  // namespace tbs::trt
