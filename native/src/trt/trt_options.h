// BuildRequest -> TensorRT 10.x settings, as pure functions with no TensorRT library calls, so
// the mapping and its validation are unit-tested here without the library. trt_backend.cc only
// applies the resulting plan to IBuilderConfig / IOptimizationProfile.
#pragma once

#include <NvInfer.h>
#include <NvOnnxParser.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../core/backend.h"

namespace tbs::trt {

struct ConfigPlan {
  nvinfer1::NetworkDefinitionCreationFlags networkFlags = 0;
  bool stronglyTyped = false;
  std::vector<nvinfer1::BuilderFlag> setFlags;
  std::vector<nvinfer1::BuilderFlag> clearFlags;
  int32_t optLevel = -1;  // -1: leave TensorRT's default (3)
  std::vector<std::pair<nvinfer1::MemoryPoolType, std::size_t>> poolLimits;
  bool setProfilingVerbosity = false;
  nvinfer1::ProfilingVerbosity profilingVerbosity = nvinfer1::ProfilingVerbosity::kLAYER_NAMES_ONLY;
  bool setHardwareCompatibility = false;
  nvinfer1::HardwareCompatibilityLevel hardwareCompatibility = nvinfer1::HardwareCompatibilityLevel::kNONE;
  int32_t maxAuxStreams = -1;  // -1: leave TensorRT's default
};

// Fills `plan` from `request`; false with a user-facing `error` naming the offending option.
bool planBuilderConfig(BuildRequest const& request, ConfigPlan& plan, std::string& error);

// A network input as the parsed network describes it (-1 marks a dynamic dimension).
struct InputDesc {
  std::string name;
  std::vector<int64_t> dims;
  bool isShapeTensor = false;
};

struct ProfileEntry {
  std::string input;
  nvinfer1::Dims min, opt, max;
};

// The optimization profile for the network's inputs: one entry per dynamic input, taken from
// request.shapes. Empty when every input is static. False with an error that names the input
// when a dynamic input has no shapes, shapes name an unknown input, ranks differ, a fixed
// dimension is contradicted, or min <= opt <= max does not hold.
bool planOptimizationProfile(std::vector<InputDesc> const& inputs,
                             std::map<std::string, ShapeRange> const& shapes,
                             std::vector<ProfileEntry>& profile, std::string& error);

std::string formatDims(std::vector<int64_t> const& dims);  // "[-1,3,224,224]"

char const* parserErrorCodeName(nvonnxparser::ErrorCode code) noexcept;

// One line per parser error, naming the node index, name and operator when the error is tied to
// a node (node < 0 otherwise), the code and TensorRT's description.
std::string formatParserError(nvonnxparser::ErrorCode code, char const* desc, int node,
                              char const* nodeName, char const* nodeOperator);

}  // namespace tbs::trt
