#include "trt_layer_info.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include "../core/atomic_file.h"
#include "trt_headers.h"
#include "trt_logger.h"

namespace tbs::trt {

std::string layerInfoPathFor(std::string const& enginePath) { return enginePath + ".layers.json"; }

std::string saveLayerInformation(TrtLibraries const& libs, void const* engine, std::size_t bytes, std::string const& path,
                                 int32_t factoryVersion, bool versionCompatible) {
  std::remove(path.c_str());  // never leave an earlier build's layer information beside this engine
  Logger& logger = Logger::instance();
  auto why = [&](std::string what) {
    std::string last = logger.lastError();
    return "no layer information saved: " + what + (last.empty() ? "" : ": " + last);
  };
  if (!libs.hasInferRuntime()) return why("libnvinfer does not export createInferRuntime_INTERNAL");
  // Declared in this order, destroyed in reverse: inspector, engine, runtime.
  std::unique_ptr<nvinfer1::IRuntime> runtime(
      static_cast<nvinfer1::IRuntime*>(libs.createInferRuntime(static_cast<nvinfer1::ILogger*>(&logger), factoryVersion)));
  if (!runtime) return why("TensorRT could not create a runtime");
  if (versionCompatible) runtime->setEngineHostCodeAllowed(true);
  std::unique_ptr<nvinfer1::ICudaEngine> deserialized(runtime->deserializeCudaEngine(engine, bytes));
  if (!deserialized) return why("TensorRT could not load the engine it built");
  std::unique_ptr<nvinfer1::IEngineInspector> inspector(deserialized->createEngineInspector());
  char const* json = inspector ? inspector->getEngineInformation(nvinfer1::LayerInformationFormat::kJSON) : nullptr;
  if (json == nullptr || *json == '\0') return why("TensorRT's engine inspector gave no layer information");
  AtomicWriteResult written = atomicWriteFile(path, json, std::strlen(json));
  if (!written.ok) return "no layer information saved: " + written.error;
  return {};
}

}  // namespace tbs::trt
