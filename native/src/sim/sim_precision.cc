#include "sim_precision.h"

#include <cstdio>
#include <cstdlib>

#include "../core/trt_facts.h"
#include "../trt/trt_capabilities.h"

namespace tbs::sim {

std::string simEmulatedTrtVersion() {
  char const* v = std::getenv("TBS_SIM_TRT_VERSION");
  return v != nullptr && *v != '\0' ? v : facts::kSimulatedDefault;
}

std::vector<std::string> simPrecisionWarnings(BuildRequest const& request, std::string const& emulated) {
  std::vector<std::string> out;
  int major = 0;
  int minor = 0;
  std::sscanf(emulated.c_str(), "%d.%d", &major, &minor);
  bool deprecated = trt::releaseHas({major, minor, 0}, facts::kWeakTypingDeprecated);
  bool hasQdq = false;
  for (auto const& l : request.layers) hasQdq = hasQdq || l.op == "QuantizeLinear" || l.op == "DequantizeLinear";
  for (auto const& p : request.precision) {
    if (deprecated) {
      out.push_back("precision \"" + p + "\" is a weakly typed precision flag, deprecated since TensorRT " +
                    trt::sinceText(trt::kSinceWeakTypingDeprecated) + " and removed in " + std::to_string(facts::kWeakTypingRemoved.major) +
                    ": "
                    "cast or quantize the model offline (e.g. with NVIDIA Model Optimizer) and build it strongly typed");
    }
    if (p == "int8" && !hasQdq) {
      out.push_back(
          "int8 without calibration data or Q/DQ nodes: placeholder dynamic ranges were set (as trtexec --int8 does), "
          "so the engine's accuracy is meaningless; use it only to measure performance. Quantize the model (Q/DQ nodes, "
          "e.g. NVIDIA Model Optimizer) for a usable INT8 engine (simulated)");
    }
  }
  return out;
}

}  // namespace tbs::sim
