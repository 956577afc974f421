// The TensorRT headers an adapter is compiled against, and the compile-time gate on their
// version. Every feature that some supported header release lacks is used only under
// TBS_TRT_HEADERS_AT_LEAST(major, minor); the matching run-time gate on the loaded library is in
// trt_version.h (libHas). Both are needed: the headers decide what can be spelled, the library
// what may be called.
#pragma once

#include <NvInfer.h>
#include <NvInferVersion.h>
#include <NvOnnxParser.h>

#define TBS_TRT_HEADERS_AT_LEAST(maj, min) (NV_TENSORRT_MAJOR > (maj) || (NV_TENSORRT_MAJOR == (maj) && NV_TENSORRT_MINOR >= (min)))

namespace tbs::trt {

inline constexpr int32_t kHeaderVersion = NV_TENSORRT_MAJOR * 10000 + NV_TENSORRT_MINOR * 100 + NV_TENSORRT_PATCH;

}  // namespace tbs::trt
