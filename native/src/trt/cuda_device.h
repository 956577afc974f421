// The CUDA runtime, reached through dlopen/dlsym (no CUDA header, no link), for what TensorRT's
// API does not offer: choosing the device a build runs on (cudaSetDevice before the builder is
// created, as trtexec does with --device) and naming the GPU (cudaGetDeviceProperties,
// cudaDeviceGetAttribute).
//
// Which library: TBS_CUDART_LIB when set, else a libcudart already loaded in the process (e.g.
// preloaded from TBS_TRT_LIB_DIR), else libcudart.so.13 / .so.12 / .so.11 / .so from the
// dynamic linker's search path.
//
// NOT RUN HERE against a real CUDA runtime (no GPU on the development machines); tested against
// a fake libcudart (native/test/trt/fake_cudart.cc) that implements the same C signatures.
#pragma once

#include <cstdint>
#include <string>

#include "../core/backend.h"

namespace tbs::trt {

class CudaRuntime {
 public:
  // The process-wide runtime, or null with `error` saying why (not found, symbols missing).
  // Failed loads are retried on the next call.
  static CudaRuntime* get(std::string& error);

  // cudaSetDevice(device) on the calling thread; false with an error naming the device and the
  // number of devices when it fails.
  bool setDevice(int32_t device, std::string& error);

  // Name, compute capability and index of `device`; false with `error` when CUDA cannot tell.
  bool describe(int32_t device, GpuFact& out, std::string& error);

  std::string const& path() const { return path_; }
  std::string version() const;  // "12.4", or "" when cudaRuntimeGetVersion is missing

 private:
  CudaRuntime() = default;
  std::string errorText(int code) const;

  using IntFn = int (*)(int);
  using IntPtrFn = int (*)(int*);
  using AttrFn = int (*)(int*, int, int);
  using PropsFn = int (*)(void*, int);
  using ErrStrFn = char const* (*)(int);

  void* handle_ = nullptr;
  std::string path_;
  IntFn setDevice_ = nullptr;
  IntPtrFn getDeviceCount_ = nullptr;
  IntPtrFn runtimeVersion_ = nullptr;
  AttrFn getAttribute_ = nullptr;
  PropsFn getProperties_ = nullptr;
  ErrStrFn errorString_ = nullptr;
};

}  // namespace tbs::trt
