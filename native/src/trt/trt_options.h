// BuildRequest -> TensorRT settings, as pure functions with no TensorRT library calls, so the
// mapping and its validation are unit-tested without the library. trt_backend.cc only applies the
// resulting plan to IBuilderConfig / IOptimizationProfile.
//
// Options are mapped by NAME onto the enumerators of the headers this adapter is compiled with,
// never by number (BuilderFlag values moved between 10.x and 11.x), and each one is checked
// against the loaded library's version as well (trt_version.h): what the library lacks is a
// clear error before anything is built.
#pragma once

#include "trt_headers.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../core/backend.h"

namespace tbs::trt {

// A tensor's type and the formats it may take (trtexec's "fp16:chw+hwc8").
struct IOFormatSpec {
  nvinfer1::DataType type = nvinfer1::DataType::kFLOAT;
  nvinfer1::TensorFormats formats = 0;  // bit mask of TensorFormat
};

// A layer name ("*": every layer) and its types (one for a precision, one per output for output types).
struct LayerTypeSpec {
  std::string layer;
  std::vector<nvinfer1::DataType> types;
};

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
  std::string buildRoute;         // TensorRT 11.1+: IBuilderConfig::setBuildRoute
  bool inferCacheMisses = false;  // count "Autotuning op" lines (needs forwardVerbose)
  // Route TensorRT's VERBOSE lines to the build's sink: asked for (verboseLog) or needed to
  // count misses. Costs logging time only; no builder setting changes.
  bool forwardVerbose = false;
  std::vector<std::string> warnings;  // logged as warnings before the build
  // int8 asked for (10.x): without Q/DQ nodes in the parsed network there is no calibration data
  // either (no calibrator option), so placeholder dynamic ranges are set, as trtexec --int8 does.
  bool int8 = false;
  // A pinned build (--pinned-cache): kERROR_ON_TIMING_CACHE_MISS is set (every release 10.0+ and
  // 11.x has it, as trtexec's --errorOnTimingCacheMiss), the cache is read only.
  bool pinnedCache = false;
  // trtexec's build specs (BuildRequest's strings, parsed here so a typo fails before the build).
  std::vector<IOFormatSpec> inputFormats;       // one per network input, in order (setType/setAllowedFormats)
  std::vector<IOFormatSpec> outputFormats;      // one per network output
  std::vector<LayerTypeSpec> layerPrecisions;   // 10.x: ILayer::setPrecision ("*" = every layer)
  std::vector<LayerTypeSpec> layerOutputTypes;  // 10.x: ILayer::setOutputType, one type per output
  bool setTacticSources = false;
  uint32_t enableTactics = 0;   // bits of TacticSource added to TensorRT's defaults
  uint32_t disableTactics = 0;  // bits removed from them
  int32_t avgTiming = -1;       // -1: TensorRT's default (IBuilderConfig::setAvgTimingIterations)
  std::vector<std::pair<nvinfer1::PreviewFeature, bool>> preview;
  int32_t dlaCore = -1;  // -1: GPU only; else setDefaultDeviceType(kDLA) + setDLACore (the GPU must have DLA)
};

// trtexec's spec text → the plan's parts; false with an error naming the option and the bad part.
bool parseIOFormats(char const* option, std::string const& spec, std::vector<IOFormatSpec>& out, std::string& error);
bool parseLayerTypes(char const* option, std::string const& spec, bool severalTypes, std::vector<LayerTypeSpec>& out, std::string& error);

// Fills `plan` from `request` for the library whose getInferLibVersion() is `libVersion`; false
// with a user-facing `error` naming the offending option (and the version that would have it).
bool planBuilderConfig(BuildRequest const& request, int32_t libVersion, ConfigPlan& plan, std::string& error);

// A network input as the parsed network describes it (-1 marks a dynamic dimension).
struct InputDesc {
  std::string name;
  std::vector<int64_t> dims;
  bool isShapeTensor = false;
};

struct ProfileEntry {
  std::string input;
  bool setDims = false;  // a dynamic input: setDimensions(min/opt/max)
  nvinfer1::Dims min{}, opt{}, max{};
  bool setValues = false;  // a shape-tensor input: setShapeValues(V2)(min/opt/max)
  std::vector<int64_t> minValues, optValues, maxValues;
};

// The optimization profile for the network's inputs: one entry per dynamic input (from
// request.shapes) and per shape-tensor input (from request.shapeValues). Empty when every input
// is static and none is a shape tensor. False with an error that names the input when a dynamic
// input has no shapes, shapes name an unknown input, ranks differ, a fixed dimension is
// contradicted, min <= opt <= max does not hold, a shape-tensor input has no values, or values
// are given for an input TensorRT does not treat as a shape tensor.
bool planOptimizationProfile(std::vector<InputDesc> const& inputs, std::map<std::string, ShapeRange> const& shapes,
                             std::map<std::string, ShapeValueRange> const& shapeValues, std::vector<ProfileEntry>& profile,
                             std::string& error);

std::string formatDims(std::vector<int64_t> const& dims);  // "[-1,3,224,224]"

char const* parserErrorCodeName(nvonnxparser::ErrorCode code) noexcept;

// One line per parser error, naming the node index, name and operator when the error is tied to
// a node (node < 0 otherwise), the code and TensorRT's description.
std::string formatParserError(nvonnxparser::ErrorCode code, char const* desc, int node, char const* nodeName, char const* nodeOperator);

}  // namespace tbs::trt
