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
//
// Device memory is nvmlDeviceGetMemoryInfo_v2's where the driver has it: its `used` leaves out the
// memory the driver reserves for itself, as nvidia-smi's memory.used does; the older call counts
// that reserve as used, and is used only where _v2 is missing or refused. On a real H100 (driver
// 580.159.04, native/test/device/gpu_memory.cc): v1 483.2 MiB used, v2 3.2 MiB with 480 reserved,
// nvidia-smi 4 MiB; after a context and 1 GiB, v1 2030.8, v2 1550.8, nvidia-smi 1551.
//
// This process's memory: where NVML does not list this process and it runs in a PID namespace of
// its own (a container), "not listed" does not mean "holds nothing" (NVML lists processes by PID,
// and whether it translates them into a container's namespace depends on the driver and the
// runtime), so the figure is then unknown, with a reason, and the device's used memory since the
// probe's first sample (deviceUsedDeltaBytes, everyone's allocations included) is what a caller
// can show instead, labelled as such. On the H100 above, in `unshare --pid --fork --mount-proc`,
// driver 580 did list the process under its namespace's PID (1) once it had a context, and the
// per-process figure was used; before the context it was unknown (with the delta, 0).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shared_library.h"

namespace tbs::gpu {

struct GpuUtilization {
  // Percent of the driver's last sample period (1/6 s to 1 s) in which a kernel ran.
  unsigned gpuPercent = 0;
  // Percent of it in which device memory was read or written.
  unsigned memoryPercent = 0;
  // Device memory this process holds on the GPU (nvmlDeviceGetComputeRunningProcesses), -1 when
  // NVML cannot say, with processMemoryUnknown saying why (the call is missing or refused, the
  // driver withholds the figure, or this process runs in its own PID namespace and is not listed
  // by its PID). Not listed while in the host's PID namespace is 0: a process appears once it has
  // a CUDA context, and before that it holds nothing.
  int64_t processMemoryBytes = -1;
  std::string processMemoryUnknown;
  // Device memory in use by everyone, and the total; -1 when unknown. From
  // nvmlDeviceGetMemoryInfo_v2 (memoryInfoVersion 2: `used` without the driver's reserve, which
  // is deviceReservedBytes) or nvmlDeviceGetMemoryInfo (1: reserve counted as used; reserved -1).
  int64_t deviceUsedBytes = -1;
  int64_t deviceTotalBytes = -1;
  int64_t deviceReservedBytes = -1;
  int memoryInfoVersion = 0;
  // deviceUsedBytes minus its value at the probe's first sample, floored at 0 (others freeing
  // memory is not this build's); -1 when unknown. Every process's allocations on the device count.
  int64_t deviceUsedDeltaBytes = -1;
  // SM clock in MHz and core temperature in °C; -1 when unknown.
  int32_t smClockMhz = -1;
  int32_t temperatureC = -1;
};

// The NVIDIA driver's own version ("580.95.05", nvmlSystemGetDriverVersion: what nvidia-smi
// shows as "Driver Version"), for an engine's manifest and `backends --json`. NVML is started and
// shut down around the one call. False with `error` when NVML is missing or does not say.
bool nvidiaDriverVersion(std::string& out, std::string& error);

// Who this process is for NVML: its PIDs, and whether it runs in a PID namespace of its own.
struct PidIdentity {
  // PIDs NVML may list this process by: getpid(), and the outermost entry of /proc/self/status's
  // NSpid (the PID in the namespace /proc was mounted from, the host's when a container shares it).
  std::vector<unsigned> pids;
  // Not the kernel's initial PID namespace (/proc/self/ns/pid is not pid:[4026531836],
  // PROC_PID_INIT_INO), or unreadable: NVML's list may then not name this process at all.
  bool ownNamespace = false;
  // Why ownNamespace is set, for the reason beside an unknown figure.
  std::string how;
};
// Read from `procSelf` ("/proc/self"; tests pass a folder laid out the same way).
PidIdentity readPidIdentity(std::string const& procSelf = "/proc/self");

class GpuProbe {
 public:
  // A probe of CUDA device `device`, or null with `error` saying why (no driver, no such device,
  // NVML does not know the bus). `self` is this process as NVML may list it.
  static std::unique_ptr<GpuProbe> open(int32_t device, std::string& error);
  static std::unique_ptr<GpuProbe> open(int32_t device, std::string& error, PidIdentity self);
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
  // nvmlMemory_v2_t.
  struct MemoryV2 {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
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
  using MemoryV2Fn = int (*)(void*, MemoryV2*);
  using ClockFn = int (*)(void*, int, unsigned int*);
  using TemperatureFn = int (*)(void*, int, unsigned int*);

  // This process's device memory, or -1 with `why` (see GpuUtilization::processMemoryBytes).
  int64_t processMemory(std::string& why) const;
  void deviceMemory(GpuUtilization& out);

  std::string nvmlError(int code) const;

  SharedLibrary nvml_;
  bool initialised_ = false;
  ShutdownFn shutdown_ = nullptr;
  ErrorStringFn errorString_ = nullptr;
  UtilizationFn utilization_ = nullptr;
  // Optional: older drivers lack some; each missing one only leaves its figure unknown.
  ProcessesFn processes_ = nullptr;
  MemoryFn memory_ = nullptr;
  MemoryV2Fn memoryV2_ = nullptr;
  int64_t usedAtStart_ = -1;  // deviceUsedBytes at the first sample that had it
  PidIdentity self_;
  ClockFn clock_ = nullptr;
  TemperatureFn temperature_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t: owned by NVML, valid until nvmlShutdown
  std::string busId_;
};

// A probe sampled on its own thread every `period`, so that whoever shows the figure (the
// worker's JS thread, at each heartbeat) reads the latest sample instead of waiting for NVML
// (a sample took up to 9.6 ms on an H100: three to five NVML calls, each a driver ioctl).
// The first sample is taken by the constructor, so latest() always has one.
class GpuSampler {
 public:
  GpuSampler(std::unique_ptr<GpuProbe> probe, int periodMs);
  ~GpuSampler();  // stops and joins the thread (waits for at most one sample in flight)
  GpuSampler(GpuSampler const&) = delete;
  GpuSampler& operator=(GpuSampler const&) = delete;

  struct Sample {
    bool ok = false;
    GpuUtilization value;
    std::string error;
    bool permanent = false;
    uint64_t number = 0;  // 1 for the constructor's sample, then one more per sample
  };
  Sample latest() const;
  std::string const& pciBusId() const { return probe_->pciBusId(); }

 private:
  void take();
  void run(int periodMs);

  std::unique_ptr<GpuProbe> probe_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  Sample latest_;
  std::thread thread_;
};

}  // namespace tbs::gpu
