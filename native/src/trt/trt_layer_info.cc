#include "trt_layer_info.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "../core/atomic_file.h"
#include "trt_headers.h"
#include "trt_logger.h"
#include "trt_stream_reader.h"

namespace tbs::trt {
namespace {

std::string why(std::string const& what) {
  std::string last = Logger::instance().lastError();
  return "no layer information saved: " + what + (last.empty() ? "" : ": " + last);
}

// Runtime, plugins, deserialize (by `load`), inspector, JSON to the file.
std::string save(TrtLibraries const& libs, LayerInfoRequest const& request,
                 std::function<nvinfer1::ICudaEngine*(nvinfer1::IRuntime&, std::string&)> const& load) {
  std::remove(request.path.c_str());  // never leave an earlier build's layer information beside this engine
  Logger& logger = Logger::instance();
  if (!libs.hasInferRuntime()) return why("libnvinfer does not export createInferRuntime_INTERNAL");
  // Declared in this order, destroyed in reverse: inspector, engine, runtime.
  std::unique_ptr<nvinfer1::IRuntime> runtime(
      static_cast<nvinfer1::IRuntime*>(libs.createInferRuntime(static_cast<nvinfer1::ILogger*>(&logger), request.factoryVersion)));
  if (!runtime) return why("TensorRT could not create a runtime");
  if (request.versionCompatible) runtime->setEngineHostCodeAllowed(true);
  // As trtexec's engine loader: every dynamic plugin library into the runtime's registry before
  // the engine is deserialized. A library that does not load is said by the deserialization.
  for (auto const& plugin : request.dynamicPlugins) runtime->getPluginRegistry().loadLibrary(plugin.c_str());
  std::string problem;
  std::unique_ptr<nvinfer1::ICudaEngine> deserialized(load(*runtime, problem));
  if (!deserialized) return why("TensorRT could not load the engine it built" + (problem.empty() ? "" : " (" + problem + ")"));
  std::unique_ptr<nvinfer1::IEngineInspector> inspector(deserialized->createEngineInspector());
  char const* json = inspector ? inspector->getEngineInformation(nvinfer1::LayerInformationFormat::kJSON) : nullptr;
  if (json == nullptr || *json == '\0') return why("TensorRT's engine inspector gave no layer information");
  AtomicWriteResult written = atomicWriteFile(request.path, json, std::strlen(json));
  if (!written.ok) return "no layer information saved: " + written.error;
  return {};
}

}  // namespace

std::string layerInfoPathFor(std::string const& enginePath) { return enginePath + ".layers.json"; }

std::string saveLayerInformation(TrtLibraries const& libs, void const* engine, std::size_t bytes, LayerInfoRequest const& request) {
  return save(libs, request, [&](nvinfer1::IRuntime& runtime, std::string&) { return runtime.deserializeCudaEngine(engine, bytes); });
}

std::string saveLayerInformationFromFile(TrtLibraries const& libs, std::string const& enginePath, LayerInfoRequest const& request) {
#if TBS_TRT_HEADERS_AT_LEAST(10, 7)
  return save(libs, request, [&](nvinfer1::IRuntime& runtime, std::string& problem) -> nvinfer1::ICudaEngine* {
    EngineFileReader reader;
    if (!reader.open(enginePath, problem)) return nullptr;
    nvinfer1::ICudaEngine* engine = runtime.deserializeCudaEngine(reader);
    if (engine == nullptr) problem = reader.error();
    return engine;
  });
#else
  (void)libs;
  (void)enginePath;
  std::remove(request.path.c_str());
  return "no layer information saved: these TensorRT headers cannot read an engine through a stream (IStreamReaderV2, 10.7+), "
         "and the engine is not read back whole into memory";
#endif
}

}  // namespace tbs::trt
