// The engine's layer information, saved beside it as trtexec --exportLayerInfo saves it: the
// engine deserialized (IRuntime::deserializeCudaEngine), an IEngineInspector asked for
// getEngineInformation(LayerInformationFormat::kJSON), the JSON written as TensorRT returned it to
// `<engine>.layers.json` (temp file + rename). That JSON is the one layer-information format of the
// product: the simulated backend writes the same shape, `compare` reads it
// (apps/service/layer-info.ts). How much it holds follows the build's profiling verbosity: layer
// names only by default, types, formats and tactics with kDETAILED (profilingVerbosity).
//
// A streamed engine (10.13+, never held in host memory while built) is deserialized from its
// file through an IStreamReaderV2 (trt_stream_reader.h), not read back whole; without that call
// in the headers the layer information is skipped with a warning.
//
// As trtexec loads an engine: the dynamic plugin libraries (the user's, and those the parser named
// for a version-compatible engine) are loaded into the runtime's plugin registry before the
// engine is deserialized, since its plugin layers need their creators.
//
// Deserializing costs what loading the engine costs (GPU memory about the engine's size, and time):
// trtexec pays it too, also with --skipInference. Nothing of it can fail the build: the engine
// is already in place; a failure is a warning and leaves no layer information beside it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trt_loader.h"

namespace tbs::trt {

// Where the layer information of `enginePath` goes.
std::string layerInfoPathFor(std::string const& enginePath);

struct LayerInfoRequest {
  std::string path;            // where the JSON goes (layerInfoPathFor)
  int32_t factoryVersion = 0;  // as for the builder (trt_version.h, factoryVersion)
  // The engine was built with kVERSION_COMPATIBLE and may embed a lean runtime (host code), which a
  // runtime only loads when allowed (IRuntime::setEngineHostCodeAllowed, as trtexec does).
  bool versionCompatible = false;
  std::vector<std::string> dynamicPlugins;  // loaded into the runtime's registry first
};

// From a serialized engine in memory (`bytes` long). Empty when written; otherwise why not (and no
// file is left at `request.path`).
std::string saveLayerInformation(TrtLibraries const& libs, void const* engine, std::size_t bytes, LayerInfoRequest const& request);

// From the engine file, read through a stream (IStreamReaderV2): never the whole engine in memory.
std::string saveLayerInformationFromFile(TrtLibraries const& libs, std::string const& enginePath, LayerInfoRequest const& request);

}  // namespace tbs::trt
