// GPU utilisation, this process's GPU memory, clocks and temperature for the liveness line: in TensorRT's long silent stretches (tactic
// timing can go 100 s without a progress callback) a GPU that is running kernels says the builder works even when its CPU use is low.
//
// Read through NVML (libnvidia-ml.so.1, the library nvidia-smi uses), found at run time with
// dlopen: nothing links against NVIDIA libraries and no NVIDIA header is included (the few C
// declarations needed are written out in gpu_probe.cc). Without the NVIDIA driver there is no
// figure and a reason says why.
//
// Which GPU: builds name a CUDA device ordinal (the --device of trtexec), and CUDA's order
// (fastest first by default, filtered by CUDA_VISIBLE_DEVICES) is not NVML's (PCI bus order),
// so the ordinal is turned into a PCI bus id through the CUDA driver (libcuda.so.1,
// cuDeviceGetPCIBusId) and NVML is asked for the device on that bus.
//
// The figure is the device's: other processes' kernels on the same GPU count too.
//
// Libraries: TBS_NVML_LIB and TBS_CUDA_DRIVER_LIB replace the default names (tests point them at
// fakes). Tested in the suite against fakes (native/test/fake_nvml.cc, fake_cuda_driver.cc) with
// the same C signatures. Run once against a REAL driver and NVML (H200, driver 580, CUDA 13.0) by
// native/test/device/gpu_facts.cc: utilisation, device memory, SM clock and temperature sampled,
// and this process's memory 0 before its CUDA context and 518 MiB after it (NVML lists a process
// once it has a context). Not in CI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shared_library.h"

namespace tbs::gpu {

struct GpuUtilization {
  // Percent of the driver's last sample period (1/6 s to 1 s) in which a kernel ran.
  unsigned gpuPercent = 0;
  // Percent of it in which device memory was read or written.
  unsigned memoryPercent = 0;
  // Device memory this process holds on the GPU (nvmlDeviceGetComputeRunningProcesses), -1 when
  // NVML cannot say (the call is missing, refused, or this process is not listed yet: a process
  // appears once it has a CUDA context; then 0 is reported, as it holds nothing).
  int64_t processMemoryBytes = -1;
  // Device memory in use by everyone, and the total (nvmlDeviceGetMemoryInfo); -1 when unknown.
  int64_t deviceUsedBytes = -1;
  int64_t deviceTotalBytes = -1;
  // SM clock in MHz and core temperature in °C; -1 when unknown.
  int32_t smClockMhz = -1;
  int32_t temperatureC = -1;
};

// The NVIDIA driver's own version ("580.95.05", nvmlSystemGetDriverVersion: what nvidia-smi
// shows as "Driver Version"), for an engine's manifest and `backends --json`. NVML is started and
// shut down around the one call. False with `error` when NVML is missing or does not say.
bool nvidiaDriverVersion(std::string& out, std::string& error);

class GpuProbe {
 public:
  // A probe of CUDA device `device`, or null with `error` saying why (no driver, no such device,
  // NVML does not know the bus).
  static std::unique_ptr<GpuProbe> open(int32_t device, std::string& error);
  ~GpuProbe();
  GpuProbe(GpuProbe const&) = delete;
  GpuProbe& operator=(GpuProbe const&) = delete;

  // The current figure; false with `error` when NVML cannot give it. `permanent` is set when
  // asking again will not help (the device does not report utilisation, e.g. some Jetson boards).
  bool sample(GpuUtilization& out, std::string& error, bool& permanent);

  // "0000:3B:00.0", as the CUDA driver named it.
  std::string const& pciBusId() const { return busId_; }

 private:
  GpuProbe() = default;

  struct Utilization {
    unsigned int gpu;
    unsigned int memory;
  };
  // nvmlProcessInfo_t of the _v2 and _v3 calls (the same layout).
  struct ProcessInfo {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
  };
  struct Memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
  };
  using InitFn = int (*)();
  using ShutdownFn = int (*)();
  using ErrorStringFn = char const* (*)(int);
  using HandleByBusFn = int (*)(char const*, void**);
  using UtilizationFn = int (*)(void*, Utilization*);
  using ProcessesFn = int (*)(void*, unsigned int*, ProcessInfo*);
  using MemoryFn = int (*)(void*, Memory*);
  using ClockFn = int (*)(void*, int, unsigned int*);
  using TemperatureFn = int (*)(void*, int, unsigned int*);

  // This process's device memory, or -1 (see GpuUtilization::processMemoryBytes).
  int64_t processMemory() const;

  std::string nvmlError(int code) const;

  SharedLibrary nvml_;
  bool initialised_ = false;
  ShutdownFn shutdown_ = nullptr;
  ErrorStringFn errorString_ = nullptr;
  UtilizationFn utilization_ = nullptr;
  // Optional: older drivers lack some; each missing one only leaves its figure unknown.
  ProcessesFn processes_ = nullptr;
  MemoryFn memory_ = nullptr;
  ClockFn clock_ = nullptr;
  TemperatureFn temperature_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t: owned by NVML, valid until nvmlShutdown
  std::string busId_;
};

}  // namespace tbs::gpu
