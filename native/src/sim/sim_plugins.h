// What the simulated backend imitates of TensorRT plugins, as trtexec sets them up: the standard
// plugin library (libnvinfer_plugin) is initialized before parsing, so the ops the ONNX parser
// builds through its creators parse; any other op of a custom domain falls back to the parser's
// plugin importer and needs a creator that a user plugin library registers (staticPlugins,
// dynamicPlugins). Without one the build fails naming the node, the op and how to supply it.
//
// The simulator cannot look inside a plugin library: any supplied library that exists is taken to
// register every custom op of the model. That is an assumption for simulation only; the tensorrt
// backend asks the real registry.
#pragma once

#include <string>
#include <vector>

#include "../core/backend.h"

namespace tbs::sim {

// Op types the standard plugin library serves through the ONNX parser (onnx-tensorrt's plugin
// importers and the creators of libnvinfer_plugin), for ops written with or without a domain.
std::vector<std::string> const& simStandardPluginOps();

// What happened with plugins before the parse: lines for the build log, and an error (empty: fine).
struct SimPluginSetup {
  std::vector<std::string> log;
  std::string error;
};
SimPluginSetup simSetUpPlugins(BuildRequest const& request);

}  // namespace tbs::sim
