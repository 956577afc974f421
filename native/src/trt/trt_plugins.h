// TensorRT plugins as trtexec sets them up (samples/trtexec/trtexec.cpp, samples/common/
// sampleEngines.cpp, 10.x and 11.1):
//   - the standard plugin library libnvinfer_plugin.so.<major>, from libnvinfer's own folder (or
//     TBS_NVINFER_PLUGIN_LIB), opened and initialized with initLibNvInferPlugins(&logger, "")
//     before any model is parsed, once per process (a failed attempt is retried by the next
//     build: installing the library needs no restart);
//   - --staticPlugins: user libraries dlopened RTLD_LAZY (trtexec's loader) right after it and
//     before any builder exists (their static constructors register creators);
//   - --dynamicPlugins: user libraries loaded through IPluginRegistry::loadLibrary of the builder,
//     and again of the runtime that loads the engine (trt_layer_info.h);
//   - --setPluginsToSerialize: IBuilderConfig::setPluginsToSerialize;
//   - a version-compatible build: the plugin libraries the parser names
//     (IParser::getUsedVCPluginLibraries) are loaded as dynamic plugins and, unless the lean
//     runtime is excluded, serialized into the engine (trtexec's getEngineBuildEnv).
// Without the standard plugins the registry is empty and the ONNX parser fails on every op it
// builds through a plugin (RoiAlign, EfficientNMS_TRT, custom ops).
//
// NOT RUN HERE against a real libnvinfer_plugin: tested against the fake plugin library and
// registry of native/test/trt (fake_nvinfer_plugin.cc, fake_plugin_registry.h), which model what
// the headers and NVIDIA's samples say; real registry behaviour beyond that is assumed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../core/backend.h"
#include "trt_headers.h"

namespace tbs::trt {

struct StandardPlugins {
  std::string library;  // the file opened or tried
  bool initialized = false;
  std::string error;  // why not, when not
};

// libnvinfer_plugin.so.<major> beside `nvinferPath` (a bare soname when that has no folder),
// unless TBS_NVINFER_PLUGIN_LIB names the file.
std::string standardPluginLibraryPath(std::string const& nvinferPath, int32_t major);

// Opens and initializes the standard plugins; once per process when it succeeds.
StandardPlugins initStandardPlugins(std::string const& nvinferPath, nvinfer1::ILogger& logger);

// Creators in the process's plugin registry (getPluginRegistry()->getAllCreators); -1 unknown.
int32_t registeredPluginCreators();

// Opens the request's static plugin libraries (each file once per process), RTLD_LAZY as
// trtexec: call before the builder is created. `log`: one line per library.
bool loadStaticPlugins(BuildRequest const& request, std::vector<std::string>& log, std::string& error);

// Loads `paths` through the builder's registry (each file once per process) and checks that every
// library to serialize exists. `what` names them in messages ("dynamic").
bool loadDynamicPlugins(nvinfer1::IPluginRegistry& registry, std::vector<std::string> const& paths, char const* what,
                        std::vector<std::string>& log, std::string& error);

// Every library to serialize is a file.
bool checkPluginsToSerialize(std::vector<std::string> const& paths, std::string& error);

// IBuilderConfig::setPluginsToSerialize with the request's list (nothing when empty).
void setPluginsToSerialize(nvinfer1::IBuilderConfig& config, std::vector<std::string> const& paths);

// What to tell a user whose model failed to parse on a plugin op: which plugins are there and how
// to supply the one missing.
std::string missingPluginAdvice(StandardPlugins const& standard);

// True when a parser error says that a plugin creator was not found: onnx-tensorrt's own words
// ("Plugin not found, are the plugin name, version, and namespace correct?" from the plugin
// importer and its op checker; "<name> plugin was not found in the plugin registry!" from the
// importers of ops it builds with standard plugins), with the codes it reports them with
// (kUNSUPPORTED_NODE, kINVALID_NODE). Any other error that merely mentions a plugin is not.
bool isMissingPluginError(int code, std::string const& description);

}  // namespace tbs::trt
