#include "gpu_probe.h"

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

std::vector<std::string> libraryNames(char const* envName, std::vector<std::string> defaults) {
  char const* env = std::getenv(envName);
  if (env != nullptr && *env != '\0') return {env};
  return defaults;
}

}  // namespace

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
  if (init == nullptr || p->shutdown_ == nullptr || byBus == nullptr || p->utilization_ == nullptr) {
    error = p->nvml_.name() +
            " lacks nvmlInit_v2 / nvmlShutdown / nvmlDeviceGetHandleByPciBusId_v2 / nvmlDeviceGetUtilizationRates: not NVML?";
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
    error = rc == kNvmlNotSupported ? "this GPU does not report its utilisation through NVML" : "NVML gave no utilisation: " + nvmlError(rc);
    return false;
  }
  permanent = false;
  out.gpuPercent = u.gpu > 100 ? 100 : u.gpu;
  out.memoryPercent = u.memory > 100 ? 100 : u.memory;
  return true;
}

std::string GpuProbe::nvmlError(int code) const {
  char const* s = errorString_ != nullptr ? errorString_(code) : nullptr;
  return (s != nullptr ? std::string(s) + " " : std::string()) + "(NVML error " + std::to_string(code) + ")";
}

}  // namespace tbs::gpu
