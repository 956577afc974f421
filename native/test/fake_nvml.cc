// A stand-in for libnvidia-ml.so.1 with the C signatures the GPU probe uses
// (native/src/gpu/gpu_probe.cc), for the tests of the probe and of the worker's heartbeats.
// Two GPUs in PCI order: NVML index 0 on bus 3B, index 1 on bus 5E. Behaviour from the
// environment, read on each call:
//   FAKE_NVML_UTIL_3B / FAKE_NVML_UTIL_5E  utilisation of that GPU, percent (default 10 / 40)
//   FAKE_NVML_INIT_RESULT                  what nvmlInit_v2 returns (default 0)
//   FAKE_NVML_UNSUPPORTED=1                utilisation is NVML_ERROR_NOT_SUPPORTED
// fake_nvml_open_inits() says how many nvmlInit_v2 calls are not yet shut down (the tests check
// that every probe releases NVML).
#include <cstdio>
#include <cstdlib>

namespace {

struct FakeDevice {
  unsigned bus;
  char const* utilEnv;
  unsigned defaultUtil;
};
FakeDevice gDevices[] = {{0x3B, "FAKE_NVML_UTIL_3B", 10}, {0x5E, "FAKE_NVML_UTIL_5E", 40}};
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

__attribute__((visibility("default"))) char const* nvmlErrorString(int rc) {
  switch (rc) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 6: return "Not Found";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
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

}  // extern "C"
