// The CUDA driver API (libcuda.so.1, the library every CUDA runtime sits on), reached through
// dlopen/dlsym: no CUDA header, no link. Shared by the GPU probe (PCI bus of a device ordinal)
// and the TensorRT adapters (the driver's CUDA version, naming a GPU without creating a context,
// and selecting the device a build runs on).
//
// Why the driver and not a CUDA runtime: whichever libcudart TensorRT uses (its own, or one the
// user installed) sits on this one driver, and the runtime adopts the driver's current context
// when it is a device's primary context. Making device N's primary context current on the build
// thread (cuDevicePrimaryCtxRetain + cuCtxSetCurrent) is therefore seen by any runtime instance,
// and needs no runtime of a particular CUDA major, which may be newer than the driver supports.
//
// Library: TBS_CUDA_DRIVER_LIB replaces "libcuda.so.1" (tests point it at a fake).
// Tested in the suite against native/test/fake_cuda_driver.cc (same C signatures; no GPU on the
// development and CI machines). Run against a REAL driver once, on an NVIDIA H200 with driver 580
// (CUDA 13.0), through native/test/device/gpu_facts.cc (this class itself) and driver_select.cc:
// version before cuInit, name and compute capability without a context, the primary context made
// current on the building thread and adopted by the CUDA runtime there. Not in CI.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace tbs::gpu {

class CudaDriver {
 public:
  // The process-wide driver, or null with `error` saying why (not found, not the CUDA driver).
  // A failed load is retried on the next call; a loaded one stays for the process.
  static CudaDriver* get(std::string& error);

  std::string const& path() const { return path_; }

  // cuDriverGetVersion: the newest CUDA version this driver supports, encoded as CUDA does
  // (13000 = 13.0); -1 when the driver does not say. Needs no cuInit.
  int32_t version() const;

  // The PCI bus id of CUDA device `ordinal`, in CUDA's order (CUDA_VISIBLE_DEVICES applies).
  bool busIdOf(int32_t ordinal, std::string& out, std::string& error) const;

  // Name and compute capability of `ordinal` (cuDeviceGetName / cuDeviceGetAttribute): no
  // context is created, so this costs no GPU memory.
  bool describe(int32_t ordinal, std::string& name, std::string& computeCapability, std::string& error) const;

  // The GPU's UUID, written as nvidia-smi and NVML write it ("GPU-" and 8-4-4-4-12 hex digits):
  // cuDeviceGetUuid_v2 (CUDA 11.4+), else cuDeviceGetUuid. No context is created. That the
  // driver's 16 bytes are the ones NVML prints is what CUDA documents for the _v2 call
  // ("compatible with NVML"); the plain call may differ for MIG instances.
  bool uuidOf(int32_t ordinal, std::string& out, std::string& error) const;

  // Makes device `ordinal`'s primary context current on the CALLING thread (retained once per
  // device for the life of the process, as the CUDA runtime's cudaSetDevice does). False with an
  // error naming the device and how many there are.
  bool selectOnThisThread(int32_t ordinal, std::string& error);

 private:
  CudaDriver() = default;
  bool start(std::string& error) const;
  // cuInit + cuDeviceGet; with `sayCount`, an ordinal out of range is named with the count.
  bool device(int32_t ordinal, int& out, std::string& error, bool sayCount) const;
  std::string text(int rc) const;

  using InitFn = int (*)(unsigned int);
  using IntPtrFn = int (*)(int*);
  using DeviceGetFn = int (*)(int*, int);
  using BusIdFn = int (*)(char*, int, int);
  using NameFn = int (*)(char*, int, int);
  using AttrFn = int (*)(int*, int, int);
  using RetainFn = int (*)(void**, int);
  using SetCurrentFn = int (*)(void*);
  using ErrorStringFn = int (*)(int, char const**);
  using UuidFn = int (*)(unsigned char*, int);  // CUuuid* is a struct of 16 chars

  std::string path_;
  InitFn init_ = nullptr;
  IntPtrFn driverVersion_ = nullptr;
  IntPtrFn deviceCount_ = nullptr;
  DeviceGetFn deviceGet_ = nullptr;
  BusIdFn busId_ = nullptr;
  NameFn name_ = nullptr;
  AttrFn attribute_ = nullptr;
  RetainFn retain_ = nullptr;
  SetCurrentFn setCurrent_ = nullptr;
  ErrorStringFn errorString_ = nullptr;
  UuidFn uuid_ = nullptr;
  std::mutex mu_;
  std::map<int32_t, void*> primary_;  // ordinal -> retained primary context (never released)
};

// "13.0" for 13000; "" for a negative version.
std::string cudaVersionText(int32_t encoded);

// The driver against the CUDA runtime TensorRT is expected to use. Empty when the driver is new
// enough (or either version is unknown). A driver of an older CUDA MAJOR than the runtime cannot
// run it: `fatal` is set and the text says so in those words. An older minor of the same major
// runs through CUDA's minor version compatibility (PTX JIT excepted): a warning, not fatal.
std::string driverVersionProblem(int32_t driver, int32_t runtime, std::string const& runtimeName, bool& fatal);

}  // namespace tbs::gpu
