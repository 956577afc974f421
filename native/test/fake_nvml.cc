// A stand-in for libnvidia-ml.so.1 with the C signatures the GPU probe uses
// (native/src/gpu/gpu_probe.cc), for the tests of the probe and of the worker's heartbeats.
// Two GPUs in PCI order: NVML index 0 on bus 3B, index 1 on bus 5E. Behaviour from the
// environment, read on each call:
//   FAKE_NVML_UTIL_3B / FAKE_NVML_UTIL_5E  utilisation of that GPU, percent (default 10 / 40)
//   FAKE_NVML_INIT_RESULT                  what nvmlInit_v2 returns (default 0)
//   FAKE_NVML_UNSUPPORTED=1                utilisation is NVML_ERROR_NOT_SUPPORTED
//   FAKE_NVML_PROCS_3B / FAKE_NVML_PROCS_5E compute processes on that GPU: "pid:bytes,pid:bytes",
//                                          pid "self" = the calling process, bytes "na" =
//                                          NVML_VALUE_NOT_AVAILABLE (default: none)
//   FAKE_NVML_NO_PROCESSES=1               nvmlDeviceGetComputeRunningProcesses_v3 is NOT_SUPPORTED
// Device memory is 80 GiB total with 10 GiB plus the listed processes plus FAKE_NVML_OTHERS_MIB
// (another process's allocations, not in the list) used; the driver reserves 480 MiB more, which
// nvmlDeviceGetMemoryInfo counts as used and nvmlDeviceGetMemoryInfo_v2 reports apart, as a real
// H100 does. Built twice (CMakeLists.txt): libnvidia-ml.so.1 exports nvmlDeviceGetMemoryInfo_v2,
// the copy built with FAKE_NVML_NO_MEMORY_V2 (gpu-fakes/libnvidia-ml-v1.so) is an older driver
// without it.
//   FAKE_NVML_MEMORY_V2_RESULT             what nvmlDeviceGetMemoryInfo_v2 returns (default 0; 25 =
//                                          NVML_ERROR_ARGUMENT_VERSION_MISMATCH, as a driver that
//                                          knows the call but not this struct version answers)
// SM clock 1980 MHz on 3B and 1410 on 5E; temperature 45 / 67 °C.
// nvmlSystemGetDriverVersion: FAKE_NVML_DRIVER_VERSION, default "580.95.05".
// fake_nvml_open_inits() says how many nvmlInit_v2 calls are not yet shut down (the tests check
// that every probe releases NVML).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct FakeDevice {
  unsigned bus;
  char const* utilEnv;
  unsigned defaultUtil;
  char const* procsEnv;
  unsigned clockMhz;
  unsigned temperatureC;
};
FakeDevice gDevices[] = {{0x3B, "FAKE_NVML_UTIL_3B", 10, "FAKE_NVML_PROCS_3B", 1980, 45},
                         {0x5E, "FAKE_NVML_UTIL_5E", 40, "FAKE_NVML_PROCS_5E", 1410, 67}};

struct FakeProcess {
  unsigned pid;
  unsigned long long bytes;
};

std::vector<FakeProcess> processesOf(FakeDevice const& d) {
  std::vector<FakeProcess> out;
  char const* v = std::getenv(d.procsEnv);
  std::string spec = v != nullptr ? v : "";
  size_t at = 0;
  while (at < spec.size()) {
    size_t comma = spec.find(',', at);
    std::string item = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    at = comma == std::string::npos ? spec.size() : comma + 1;
    size_t colon = item.find(':');
    if (colon == std::string::npos) continue;
    std::string pid = item.substr(0, colon), bytes = item.substr(colon + 1);
    out.push_back({pid == "self" ? static_cast<unsigned>(getpid()) : static_cast<unsigned>(std::strtoul(pid.c_str(), nullptr, 10)),
                   bytes == "na" ? ~0ULL : std::strtoull(bytes.c_str(), nullptr, 10)});
  }
  return out;
}
int gInits = 0;

int envInt(char const* name, int fallback) {
  char const* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

}  // namespace

extern "C" {

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

__attribute__((visibility("default"))) int nvmlInit_v2() {
  int rc = envInt("FAKE_NVML_INIT_RESULT", 0);
  if (rc == 0) ++gInits;
  return rc;
}

__attribute__((visibility("default"))) int nvmlShutdown() {
  if (gInits == 0) return 1;  // NVML_ERROR_UNINITIALIZED
  --gInits;
  return 0;
}

__attribute__((visibility("default"))) int fake_nvml_open_inits() { return gInits; }

// FAKE_NVML_DRIVER_VERSION (default "580.95.05"); NVML_ERROR_UNINITIALIZED before nvmlInit_v2.
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (gInits == 0) return 1;
  char const* v = std::getenv("FAKE_NVML_DRIVER_VERSION");
  std::string text = v != nullptr && *v != '\0' ? v : "580.95.05";
  if (text.size() + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(version, text.c_str(), text.size() + 1);
  return 0;
}

__attribute__((visibility("default"))) char const* nvmlErrorString(int rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 3:
      return "Not Supported";
    case 6:
      return "Not Found";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

// Accepts "0000:3b:00.0" (CUDA's spelling) and "00000000:3B:00.0" (NVML's).
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByPciBusId_v2(char const* busId, void** device) {
  if (gInits == 0) return 1;
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (busId == nullptr || std::sscanf(busId, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return 2;  // INVALID_ARGUMENT
  for (auto& d : gDevices) {
    if (domain == 0 && d.bus == bus && dev == 0 && fn == 0) {
      *device = &d;
      return 0;
    }
  }
  return 6;  // NVML_ERROR_NOT_FOUND
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* device, Utilization* out) {
  if (gInits == 0) return 1;
  if (envInt("FAKE_NVML_UNSUPPORTED", 0) == 1) return 3;
  auto* d = static_cast<FakeDevice*>(device);
  out->gpu = static_cast<unsigned>(envInt(d->utilEnv, static_cast<int>(d->defaultUtil)));
  out->memory = out->gpu / 2;
  return 0;
}

struct ProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, ProcessInfo* out) {
  if (gInits == 0) return 1;
  if (envInt("FAKE_NVML_NO_PROCESSES", 0) == 1) return 3;
  auto procs = processesOf(*static_cast<FakeDevice*>(device));
  if (*count < procs.size()) {
    *count = static_cast<unsigned>(procs.size());
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  for (size_t i = 0; i < procs.size(); ++i) out[i] = {procs[i].pid, procs[i].bytes, 0xFFFFFFFFu, 0xFFFFFFFFu};
  *count = static_cast<unsigned>(procs.size());
  return 0;
}

struct Memory {
  unsigned long long total, free, used;
};

constexpr unsigned long long kReserved = 480ULL << 20;

// Used memory without the driver's reserve (what nvidia-smi shows).
unsigned long long usedOf(void* device) {
  unsigned long long used = (10ULL << 30) + (static_cast<unsigned long long>(envInt("FAKE_NVML_OTHERS_MIB", 0)) << 20);
  for (auto const& p : processesOf(*static_cast<FakeDevice*>(device))) used += p.bytes == ~0ULL ? 0 : p.bytes;
  return used;
}

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device, Memory* out) {
  if (gInits == 0) return 1;
  unsigned long long used = usedOf(device) + kReserved;
  out->total = 80ULL << 30;
  out->used = used;
  out->free = out->total > used ? out->total - used : 0;
  return 0;
}

#ifndef FAKE_NVML_NO_MEMORY_V2
struct MemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo_v2(void* device, MemoryV2* out) {
  if (gInits == 0) return 1;
  int rc = envInt("FAKE_NVML_MEMORY_V2_RESULT", 0);
  if (rc != 0) return rc;
  if (out->version != (static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24))) return 25;  // ARGUMENT_VERSION_MISMATCH
  unsigned long long used = usedOf(device);
  out->total = 80ULL << 30;
  out->reserved = kReserved;
  out->used = used;
  out->free = out->total > used + kReserved ? out->total - used - kReserved : 0;
  return 0;
}
#endif

__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(void* device, int type, unsigned int* mhz) {
  if (gInits == 0) return 1;
  if (type != 1) return 2;
  *mhz = static_cast<FakeDevice*>(device)->clockMhz;
  return 0;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* c) {
  if (gInits == 0) return 1;
  if (sensor != 0) return 2;
  *c = static_cast<FakeDevice*>(device)->temperatureC;
  return 0;
}

}  // extern "C"
