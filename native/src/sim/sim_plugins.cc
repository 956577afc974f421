#include "sim_plugins.h"

#include <sys/stat.h>

#include <algorithm>

namespace tbs::sim {
namespace {

// "com.example.MyOp" (the model reader writes custom-domain ops as domain.op) → "MyOp".
std::string opTypeOf(std::string const& op) {
  size_t dot = op.rfind('.');
  return dot == std::string::npos ? op : op.substr(dot + 1);
}

bool isRegularFile(std::string const& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<std::string> const& simStandardPluginOps() {
  static auto const* ops = new std::vector<std::string>{
      "RoiAlign",
      "EfficientNMS_TRT",
      "EfficientNMS_ONNX_TRT",
      "BatchedNMS_TRT",
      "BatchedNMSDynamic_TRT",
      "MultilevelCropAndResize_TRT",
      "PyramidROIAlign_TRT",
      "DeformConv",
      "GridAnchor_TRT",
      "NMS_TRT",
      "ScatterND",
      "ModulatedDeformConv2d",
  };
  return *ops;
}

SimPluginSetup simSetUpPlugins(BuildRequest const& request) {
  SimPluginSetup s;
  s.log.push_back("Loading standard plugins (simulated: initLibNvInferPlugins; " + std::to_string(simStandardPluginOps().size()) +
                  " plugin ops registered)");
  std::vector<std::string> supplied;
  auto load = [&](std::vector<std::string> const& libs, char const* how) {
    for (auto const& lib : libs) {
      if (!s.error.empty()) return;
      if (!isRegularFile(lib)) {
        s.error = std::string(how) + " plugin library not found or not a file: " + lib;
        return;
      }
      s.log.push_back(std::string("Loading supplied plugin library (") + how + ", simulated): " + lib);
      supplied.push_back(lib);
    }
  };
  load(request.staticPlugins, "static");
  load(request.dynamicPlugins, "dynamic");
  for (auto const& lib : request.pluginsToSerialize) {
    if (!s.error.empty()) break;
    if (std::find(request.dynamicPlugins.begin(), request.dynamicPlugins.end(), lib) == request.dynamicPlugins.end() &&
        std::find(request.staticPlugins.begin(), request.staticPlugins.end(), lib) == request.staticPlugins.end()) {
      load({lib}, "serialized");
    }
  }
  if (!s.error.empty()) return s;
  auto const& standard = simStandardPluginOps();
  for (auto const& layer : request.layers) {
    bool customDomain = layer.op.find('.') != std::string::npos;
    std::string type = opTypeOf(layer.op);
    bool standardOp = std::find(standard.begin(), standard.end(), type) != standard.end();
    if (!customDomain || standardOp || !supplied.empty()) continue;
    s.error = "node \"" + layer.name + "\" (op " + layer.op + "): no TensorRT plugin is registered for op \"" + type +
              "\" (the standard plugin library has none; simulated). Supply the plugin library that registers it: "
              "dynamicPlugins or staticPlugins (build --dynamic-plugins <lib.so>, trtexec --dynamicPlugins=<lib.so>)";
    return s;
  }
  return s;
}

}  // namespace tbs::sim
