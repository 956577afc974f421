#include "gpu_probe.h"

#include <unistd.h>

#include "cuda_driver.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
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
// PROC_PID_INIT_INO: the inode of the kernel's initial PID namespace (fixed since Linux 3.8).
constexpr char const* kInitPidNamespace = "pid:[4026531836]";

std::vector<std::string> libraryNames(char const* envName, std::vector<std::string> defaults) {
  char const* env = std::getenv(envName);
  if (env != nullptr && *env != '\0') return {env};
  return defaults;
}

std::string readLink(std::string const& path) {
  char buf[128];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

PidIdentity readPidIdentity(std::string const& procSelf) {
  PidIdentity id;
  id.pids.push_back(static_cast<unsigned>(getpid()));
  std::ifstream status(procSelf + "/status");
  std::string line;
  size_t nspids = 0;
  while (std::getline(status, line)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream in(line.substr(6));
    unsigned pid = 0;
    bool first = true;
    while (in >> pid) {
      ++nspids;
      if (first && pid != id.pids[0]) id.pids.push_back(pid);
      first = false;
    }
    break;
  }
  std::string ns = readLink(procSelf + "/ns/pid");
  if (ns.empty()) {
    id.ownNamespace = true;
    id.how = "its PID namespace could not be read (" + procSelf + "/ns/pid)";
  } else if (ns != kInitPidNamespace) {
    id.ownNamespace = true;
    id.how = nspids > 1 ? "this process runs in a PID namespace of its own (NSpid has " + std::to_string(nspids) + " entries)"
                        : "this process runs in a PID namespace of its own (a container: " + ns + ")";
  }
  return id;
}

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

std::unique_ptr<GpuProbe> GpuProbe::open(int32_t device, std::string& error) { return open(device, error, readPidIdentity()); }

std::unique_ptr<GpuProbe> GpuProbe::open(int32_t device, std::string& error, PidIdentity self) {
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
  p->self_ = std::move(self);
  p->nvml_ = std::move(nvml);
  auto init = p->nvml_.function<InitFn>("nvmlInit_v2");
  p->shutdown_ = p->nvml_.function<ShutdownFn>("nvmlShutdown");
  p->errorString_ = p->nvml_.function<ErrorStringFn>("nvmlErrorString");
  auto byBus = p->nvml_.function<HandleByBusFn>("nvmlDeviceGetHandleByPciBusId_v2");
  p->utilization_ = p->nvml_.function<UtilizationFn>("nvmlDeviceGetUtilizationRates");
  p->processes_ = p->nvml_.function<ProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3");
  if (p->processes_ == nullptr) p->processes_ = p->nvml_.function<ProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v2");
  p->memory_ = p->nvml_.function<MemoryFn>("nvmlDeviceGetMemoryInfo");
  p->memoryV2_ = p->nvml_.function<MemoryV2Fn>("nvmlDeviceGetMemoryInfo_v2");  // drivers since r510
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
  out.processMemoryUnknown.clear();
  out.processMemoryBytes = processMemory(out.processMemoryUnknown);
  deviceMemory(out);
  unsigned int v = 0;
  if (clock_ != nullptr && clock_(device_, kNvmlClockSm, &v) == kNvmlSuccess) out.smClockMhz = static_cast<int32_t>(v);
  if (temperature_ != nullptr && temperature_(device_, kNvmlTemperatureGpu, &v) == kNvmlSuccess) {
    out.temperatureC = static_cast<int32_t>(v);
  }
  return true;
}

void GpuProbe::deviceMemory(GpuUtilization& out) {
  out.deviceUsedBytes = out.deviceTotalBytes = out.deviceReservedBytes = out.deviceUsedDeltaBytes = -1;
  out.memoryInfoVersion = 0;
  MemoryV2 m2{};
  // nvmlMemory_v2 (NVML_STRUCT_VERSION(Memory, 2)): the struct's size, the version in the top byte.
  static_assert(sizeof(MemoryV2) == 40, "nvmlMemory_v2_t is 40 bytes");
  m2.version = static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24);
  Memory m{};
  // A driver that has the symbol may still refuse the version (NVML_ERROR_ARGUMENT_VERSION_MISMATCH):
  // then the older call, for this sample.
  if (memoryV2_ != nullptr && memoryV2_(device_, &m2) == kNvmlSuccess) {
    out.deviceUsedBytes = static_cast<int64_t>(m2.used);
    out.deviceTotalBytes = static_cast<int64_t>(m2.total);
    out.deviceReservedBytes = static_cast<int64_t>(m2.reserved);
    out.memoryInfoVersion = 2;
  } else if (memory_ != nullptr && memory_(device_, &m) == kNvmlSuccess) {
    out.deviceUsedBytes = static_cast<int64_t>(m.used);
    out.deviceTotalBytes = static_cast<int64_t>(m.total);
    out.memoryInfoVersion = 1;
  }
  if (out.deviceUsedBytes < 0) return;
  if (usedAtStart_ < 0) usedAtStart_ = out.deviceUsedBytes;
  out.deviceUsedDeltaBytes = out.deviceUsedBytes > usedAtStart_ ? out.deviceUsedBytes - usedAtStart_ : 0;
}

int64_t GpuProbe::processMemory(std::string& why) const {
  if (processes_ == nullptr) {
    why = "this NVML has no nvmlDeviceGetComputeRunningProcesses";
    return -1;
  }
  std::vector<ProcessInfo> list(kMaxProcesses);
  unsigned int count = kMaxProcesses;
  int rc = processes_(device_, &count, list.data());
  if (rc == kNvmlInsufficientSize) {  // count now says how many there are
    list.resize(count + 8);
    count = static_cast<unsigned int>(list.size());
    rc = processes_(device_, &count, list.data());
  }
  if (rc != kNvmlSuccess) {
    why = "NVML did not list the GPU's processes: " + nvmlError(rc);
    return -1;
  }
  int64_t total = 0;
  bool listed = false;
  // Several entries for one process (MIG instances) add up. usedGpuMemory is
  // NVML_VALUE_NOT_AVAILABLE (~0ULL) where the driver withholds it (Windows WDDM, some containers).
  for (unsigned int i = 0; i < count && i < list.size(); ++i) {
    bool mine = false;
    for (unsigned pid : self_.pids) mine = mine || list[i].pid == pid;
    if (!mine) continue;
    if (list[i].usedGpuMemory == ~0ULL) {
      why = "the driver withholds per-process GPU memory";
      return -1;
    }
    listed = true;
    total += static_cast<int64_t>(list[i].usedGpuMemory);
  }
  if (!listed && self_.ownNamespace) {
    why = "NVML does not list this process, and " + self_.how + ", where NVML may list it under another PID";
    return -1;
  }
  return total;
}

std::string GpuProbe::nvmlError(int code) const {
  char const* s = errorString_ != nullptr ? errorString_(code) : nullptr;
  return (s != nullptr ? std::string(s) + " " : std::string()) + "(NVML error " + std::to_string(code) + ")";
}

GpuSampler::GpuSampler(std::unique_ptr<GpuProbe> probe, int periodMs) : probe_(std::move(probe)) {
  take();
  thread_ = std::thread([this, periodMs] { run(periodMs < 1 ? 1 : periodMs); });
}

GpuSampler::~GpuSampler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

GpuSampler::Sample GpuSampler::latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

void GpuSampler::take() {
  // Only this thread (after the constructor's sample) calls the probe, so NVML is never asked
  // twice at once and the lock is held only to publish.
  Sample s;
  s.ok = probe_->sample(s.value, s.error, s.permanent);
  std::lock_guard<std::mutex> lock(mu_);
  s.number = latest_.number + 1;
  latest_ = std::move(s);
}

void GpuSampler::run(int periodMs) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (wake_.wait_for(lock, std::chrono::milliseconds(periodMs), [this] { return stop_; })) break;
    if (latest_.permanent) continue;  // asking again will not help; keep the reason
    lock.unlock();
    take();
    lock.lock();
  }
}

}  // namespace tbs::gpu
