// The CUDA runtime TensorRT uses, read for one fact: which CUDA version it needs from the driver
// (cudaRuntimeGetVersion, which starts nothing). Devices are chosen and named through the CUDA
// driver instead (gpu/cuda_driver.h): a runtime of our own choosing may be of another CUDA major
// than TensorRT's, or a second runtime instance whose device choice TensorRT never sees.
//
// Which runtime: TBS_CUDART_LIB when set; else a libcudart already in the process (preloaded
// from TBS_TRT_LIB_DIR, or loaded by libnvinfer as its dependency). No runtime is opened that
// is not already there: when none is, the needed version is unknown and not checked, and
// TensorRT itself reports a driver it cannot use when the builder is created.
//
// NOT RUN HERE against a real CUDA runtime (no GPU on the development machines); tested against
// a fake libcudart (native/test/trt/fake_cudart.cc) with the same C signatures.
#pragma once

#include <cstdint>
#include <string>

namespace tbs::trt {

struct CudaRuntimeFact {
  std::string path;      // empty: none in the process (and none named by TBS_CUDART_LIB)
  int32_t version = -1;  // cudaRuntimeGetVersion, e.g. 12040; -1 when unknown
};

// Looks each time (a runtime may be loaded later, with libnvinfer).
CudaRuntimeFact cudaRuntimeInProcess();

}  // namespace tbs::trt
