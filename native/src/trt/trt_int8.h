// int8 as trtexec --int8 builds it (samples/common/sampleEngines.cpp, 10.x): with kINT8 set but
// neither calibration data nor Q/DQ nodes in the network, TensorRT has no scales and builds no
// INT8 layers. trtexec then gives every layer input and output a placeholder dynamic range
// (inputs ±2, outputs ±4; a concatenation's inputs and a pooling's output keep their neighbour's
// range), so INT8 kernels are chosen and timed: the engine shows INT8 performance, and its
// accuracy is meaningless. We do the same and say so in the build's log.
// TensorRT 11 has no int8 flag (strongly typed networks), so this exists for 10.x adapters only.
#pragma once

#include <string>

#include "trt_headers.h"

namespace tbs::trt {

#if NV_TENSORRT_MAJOR < 11
// True when the parsed network holds IQuantizeLayer / IDequantizeLayer (explicit quantization:
// the model carries its own scales, nothing is set).
bool hasQdqLayers(nvinfer1::INetworkDefinition const& network);

// trtexec's placeholder ranges on every layer input and output that has none; false when
// TensorRT refused one (`error` names the tensor).
bool setPlaceholderDynamicRanges(nvinfer1::INetworkDefinition const& network, std::string& error);
#endif

// The warning every surface shows for such a build.
inline constexpr char kInt8PlaceholderWarning[] =
    "int8 without calibration data or Q/DQ nodes: placeholder dynamic ranges were set (as trtexec --int8 does), "
    "so the engine's accuracy is meaningless; use it only to measure performance. Quantize the model (Q/DQ nodes, "
    "e.g. NVIDIA Model Optimizer) for a usable INT8 engine";

}  // namespace tbs::trt
