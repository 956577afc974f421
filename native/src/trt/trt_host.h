// The addon's side of the "tensorrt" backend. It includes no TensorRT header: it finds a
// libnvinfer (11 first, then 10), reads its version with getInferLibVersion, and loads the
// adapter library compiled for that major (libtbs_trt<major>.so, next to the .node), which then
// drives TensorRT (adapter_api.h). Like NVIDIA's own Python packages, it first preloads from
// TBS_TRT_LIB_DIR the libraries libnvinfer needs (the CUDA runtime, the builder resource
// libraries), so an unpacked tarball or pip install works without LD_LIBRARY_PATH.
//
// Environment:
//   TBS_TRT_LIB_DIR       folder holding libnvinfer.so.<major>, libnvonnxparser.so.<major> and
//                         optionally libcudart.so.* and libnvinfer_builder_resource*.so*
//   TBS_NVINFER_LIB       file name or path of libnvinfer (wins over TBS_TRT_LIB_DIR)
//   TBS_NVONNXPARSER_LIB  file name or path of libnvonnxparser
//   TBS_TRT_ADAPTER_DIR   where the adapter libraries are (default: the addon's folder)
//
// NOT RUN HERE against a real TensorRT; tested with fake libraries of both majors side by side.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../core/backend.h"

namespace tbs::trt {

// The adapters this build of the addon has, e.g. "10:10.3.0,11:11.1.0" (set by CMake), parsed.
std::vector<AdapterFact> parseAdapterList(std::string const& text);

// Probe of the tensorrt backend (never throws): what this build can drive, what was found, the
// adapter in use, preloaded libraries, GPU; reason when unavailable.
BackendProbe probeTensorRt(std::vector<AdapterFact> const& builtAdapters);

// A backend that finds the library and adapter when it is used; a build fails with the reason
// when none fits.
std::unique_ptr<Backend> makeTensorRtHostBackend(std::vector<AdapterFact> const& builtAdapters);

}  // namespace tbs::trt
