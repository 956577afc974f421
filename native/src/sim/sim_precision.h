// The warnings the simulated backend gives for precision flags, as the tensorrt backend does
// (trt_options.cc, trt_int8.h) for the TensorRT version it imitates (TBS_SIM_TRT_VERSION, default
// native/trt-facts.json's simulatedDefault): every weakly typed flag is deprecated from
// weakTypingDeprecated on, and int8 without Q/DQ nodes in the model (QuantizeLinear /
// DequantizeLinear) is built with placeholder ranges, accuracy meaningless.
#pragma once

#include <string>
#include <vector>

#include "../core/backend.h"

namespace tbs::sim {

// The TensorRT version the simulator imitates.
std::string simEmulatedTrtVersion();

std::vector<std::string> simPrecisionWarnings(BuildRequest const& request, std::string const& emulated);

}  // namespace tbs::sim
