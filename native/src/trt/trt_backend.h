// The "tensorrt" backend inside an adapter library (libtbs_trt<major>.so): a thin adapter from
// one TensorRT major's C++ API to the backend seam (core/backend.h), compiled once per major
// against that major's headers (see adapter_api.h for why each major is its own library).
// libnvinfer / libnvonnxparser are loaded with dlopen on first use; nothing links them.
#pragma once

#include <memory>

#include "../core/backend.h"
#include "adapter_api.h"

namespace tbs {

// Drives the libraries the addon found (context.nvinferPath / onnxParserPath).
std::unique_ptr<Backend> makeTensorRtBackend(trt::AdapterContext const& context);

// Finds the libraries itself from TBS_TRT_LIB_DIR / TBS_NVINFER_LIB / TBS_NVONNXPARSER_LIB or
// the default names of this adapter's major (used by the adapter's own tests).
std::unique_ptr<Backend> makeTensorRtBackend();

}  // namespace tbs
