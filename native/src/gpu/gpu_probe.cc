#include "gpu_probe.h"

#include <unistd.h>

#include "cuda_driver.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace tbs::gpu {
namespace {

// nvmlReturn_t values used here (stable since NVML's first releases).
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlNotSupported = 3;
constexpr int kNvmlGpuIsLost = 15;
constexpr int kNvmlInsufficientSize = 7;
// nvmlClockType_t NVML_CLOCK_SM and nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU.
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlTemperatureGpu = 0;
// Processes listed per call; a GPU with more compute processes than this is asked again.
constexpr unsigned kMaxProcesses = 64;

std::vector<std::string> libraryNames(char const* envName, std::vector<std::string> defaults) {
  char const* env = std::getenv(envName);
  if (env != nullptr && *env != '\0') return {env};
  return defaults;
}

}  // namespace

bool nvidiaDriverVersion(std::string& out, std::string& error) {
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned int);
  std::string tried;
  SharedLibrary nvml = SharedLibrary::openFirst(libraryNames("TBS_NVML_LIB", {"libnvidia-ml.so.1"}), tried);
  if (!nvml) {
    error = "NVML was not found (" + tried + ")";
    return false;
  }
  auto init = nvml.function<InitFn>("nvmlInit_v2");
  auto shutdown = nvml.function<InitFn>("nvmlShutdown");
  auto version = nvml.function<VersionFn>("nvmlSystemGetDriverVersion");
  if (init == nullptr || shutdown == nullptr || version == nullptr) {
    error = nvml.name() + " lacks nvmlInit_v2 / nvmlShutdown / nvmlSystemGetDriverVersion";
    return false;
  }
  int rc = init();
  if (rc != kNvmlSuccess) {
    error = "NVML did not start (NVML error " + std::to_string(rc) + ")";
    return false;
  }
  char buf[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
  rc = version(buf, sizeof buf - 1);
  shutdown();
  if (rc != kNvmlSuccess || buf[0] == '\0') {
    error = "NVML did not give the driver version (NVML error " + std::to_string(rc) + ")";
    return false;
  }
  out = buf;
  return true;
}

std::unique_ptr<GpuProbe> GpuProbe::open(int32_t device, std::string& error) {
  if (device < 0) {
    error = "device " + std::to_string(device) + " is not a CUDA device ordinal";
    return nullptr;
  }
  // NVML first: without it there is nothing to show, and asking the CUDA driver would be wasted.
  std::string tried;
  SharedLibrary nvml = SharedLibrary::openFirst(libraryNames("TBS_NVML_LIB", {"libnvidia-ml.so.1"}), tried);
  if (!nvml) {
    error = "NVML (the NVIDIA driver's management library) was not found (" + tried + ")";
    return nullptr;
  }
  auto p = std::unique_ptr<GpuProbe>(new GpuProbe());
  p->nvml_ = std::move(nvml);
  auto init = p->nvml_.function<InitFn>("nvmlInit_v2");
  p->shutdown_ = p->nvml_.function<ShutdownFn>("nvmlShutdown");
  p->errorString_ = p->nvml_.function<ErrorStringFn>("nvmlErrorString");
  auto byBus = p->nvml_.function<HandleByBusFn>("nvmlDeviceGetHandleByPciBusId_v2");
  p->utilization_ = p->nvml_.function<UtilizationFn>("nvmlDeviceGetUtilizationRates");
  p->processes_ = p->nvml_.function<ProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3");
  if (p->processes_ == nullptr) p->processes_ = p->nvml_.function<ProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v2");
  p->memory_ = p->nvml_.function<MemoryFn>("nvmlDeviceGetMemoryInfo");
  p->clock_ = p->nvml_.function<ClockFn>("nvmlDeviceGetClockInfo");
  p->temperature_ = p->nvml_.function<TemperatureFn>("nvmlDeviceGetTemperature");
  if (init == nullptr || p->shutdown_ == nullptr || byBus == nullptr || p->utilization_ == nullptr) {
    error =
        p->nvml_.name() + " lacks nvmlInit_v2 / nvmlShutdown / nvmlDeviceGetHandleByPciBusId_v2 / nvmlDeviceGetUtilizationRates: not NVML?";
    return nullptr;
  }
  std::string cudaError;
  CudaDriver* cuda = CudaDriver::get(cudaError);
  if (cuda == nullptr) {
    error = cudaError;
    return nullptr;
  }
  if (!cuda->busIdOf(device, p->busId_, error)) return nullptr;
  int rc = init();
  if (rc != kNvmlSuccess) {
    error = "NVML did not start: " + p->nvmlError(rc);
    return nullptr;
  }
  p->initialised_ = true;  // from here the destructor shuts NVML down
  rc = byBus(p->busId_.c_str(), &p->device_);
  if (rc != kNvmlSuccess) {
    error = "NVML does not know the GPU at " + p->busId_ + " (CUDA device " + std::to_string(device) + "): " + p->nvmlError(rc);
    return nullptr;
  }
  return p;
}

GpuProbe::~GpuProbe() {
  // NVML counts nvmlInit_v2 calls; this releases ours before the library goes.
  if (initialised_ && shutdown_ != nullptr) shutdown_();
}

bool GpuProbe::sample(GpuUtilization& out, std::string& error, bool& permanent) {
  Utilization u{};
  int rc = utilization_(device_, &u);
  if (rc != kNvmlSuccess) {
    permanent = rc == kNvmlNotSupported || rc == kNvmlGpuIsLost;
    error =
        rc == kNvmlNotSupported ? "this GPU does not report its utilisation through NVML" : "NVML gave no utilisation: " + nvmlError(rc);
    return false;
  }
  permanent = false;
  out.gpuPercent = u.gpu > 100 ? 100 : u.gpu;
  out.memoryPercent = u.memory > 100 ? 100 : u.memory;
  out.processMemoryBytes = processMemory();
  Memory m{};
  if (memory_ != nullptr && memory_(device_, &m) == kNvmlSuccess) {
    out.deviceUsedBytes = static_cast<int64_t>(m.used);
    out.deviceTotalBytes = static_cast<int64_t>(m.total);
  }
  unsigned int v = 0;
  if (clock_ != nullptr && clock_(device_, kNvmlClockSm, &v) == kNvmlSuccess) out.smClockMhz = static_cast<int32_t>(v);
  if (temperature_ != nullptr && temperature_(device_, kNvmlTemperatureGpu, &v) == kNvmlSuccess) {
    out.temperatureC = static_cast<int32_t>(v);
  }
  return true;
}

int64_t GpuProbe::processMemory() const {
  if (processes_ == nullptr) return -1;
  std::vector<ProcessInfo> list(kMaxProcesses);
  unsigned int count = kMaxProcesses;
  int rc = processes_(device_, &count, list.data());
  if (rc == kNvmlInsufficientSize) {  // count now says how many there are
    list.resize(count + 8);
    count = static_cast<unsigned int>(list.size());
    rc = processes_(device_, &count, list.data());
  }
  if (rc != kNvmlSuccess) return -1;
  auto self = static_cast<unsigned int>(getpid());
  int64_t total = 0;
  // Several entries for one process (MIG instances) add up. usedGpuMemory is
  // NVML_VALUE_NOT_AVAILABLE (~0ULL) where the driver withholds it (Windows WDDM, some containers).
  for (unsigned int i = 0; i < count && i < list.size(); ++i) {
    if (list[i].pid != self) continue;
    if (list[i].usedGpuMemory == ~0ULL) return -1;
    total += static_cast<int64_t>(list[i].usedGpuMemory);
  }
  return total;
}

std::string GpuProbe::nvmlError(int code) const {
  char const* s = errorString_ != nullptr ? errorString_(code) : nullptr;
  return (s != nullptr ? std::string(s) + " " : std::string()) + "(NVML error " + std::to_string(code) + ")";
}

}  // namespace tbs::gpu
