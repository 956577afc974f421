// The engine's layer information, saved beside it as trtexec --exportLayerInfo saves it: the
// engine deserialized (IRuntime::deserializeCudaEngine), an IEngineInspector asked for
// getEngineInformation(LayerInformationFormat::kJSON), the JSON written as TensorRT returned it to
// `<engine>.layers.json` (temp file + rename). That JSON is the one layer-information format of the
// product: the simulated backend writes the same shape, `compare` reads it
// (apps/service/layer-info.ts). How much it holds follows the build's profiling verbosity: layer
// names only by default, types, formats and tactics with kDETAILED (profilingVerbosity).
//
// Deserializing costs what loading the engine costs (GPU memory about the engine's size, and time):
// trtexec pays it too, also with --skipInference. Nothing of it can fail the build: the engine
// is already in place; a failure is a warning and leaves no layer information beside it.
#pragma once

#include <cstddef>
#include <string>

#include "trt_loader.h"

namespace tbs::trt {

// Where the layer information of `enginePath` goes.
std::string layerInfoPathFor(std::string const& enginePath);

// Writes the layer information of the serialized engine `engine` (`bytes` long) to `path`. Empty
// when written; otherwise why not (and no file is left at `path`). `factoryVersion` as for the
// builder (trt_version.h, factoryVersion). `versionCompatible`: the engine was built with
// kVERSION_COMPATIBLE and may embed a lean runtime (host code), which a runtime only loads when
// allowed (IRuntime::setEngineHostCodeAllowed, as trtexec does for such engines).
std::string saveLayerInformation(TrtLibraries const& libs, void const* engine, std::size_t bytes, std::string const& path,
                                 int32_t factoryVersion, bool versionCompatible = false);

}  // namespace tbs::trt
