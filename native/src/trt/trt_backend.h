// The "tensorrt" backend: a thin adapter from TensorRT 10's C++ API to the backend seam
// (core/backend.h). Compiled only when TensorRT 10 headers were found at configure time
// (TBS_HAVE_TENSORRT, see native/trt.cmake); libnvinfer / libnvonnxparser are loaded with dlopen
// on first use, so the addon also runs where TensorRT is not installed (probe() says why).
#pragma once

#include <memory>

#include "../core/backend.h"

namespace tbs {

std::unique_ptr<Backend> makeTensorRtBackend();

}  // namespace tbs
