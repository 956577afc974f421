// A stand-in for libcuda.so.1 with the driver calls the GPU probe and the TensorRT adapters use
// (our own code; signatures as in cuda.h). Two devices in CUDA's order, which is not PCI order
// (CUDA puts the fastest first): ordinal 0 is the GPU on bus 5E ("Fake RTX 3090", 8.6), ordinal
// 1 the one on bus 3B ("Fake H100", 9.0).
// Environment: FAKE_CUDA_INIT_RESULT sets what cuInit returns (default 0);
// FAKE_CUDA_DRIVER_VERSION what cuDriverGetVersion reports (default 13000, CUDA 13.0).
// cuDeviceGetUuid(_v2): device 0 GPU-10111213-1415-1617-1819-1a1b1c1d1e1f, device 1 GPU-a0a1a2a3-….
// The current context is per thread, as in the real driver; fakeCudaCurrentDevice() tells the
// calling thread's device (-1: none), fakeCudaDriverCalls() the journal of retain/set calls.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

struct Context {
  int device;
};
Context contexts[2] = {{0}, {1}};
thread_local Context* current = nullptr;
std::mutex journalMu;
std::string journal;

void note(std::string const& line) {
  std::lock_guard<std::mutex> lock(journalMu);
  journal += line + "\n";
}

bool valid(int device) { return device >= 0 && device <= 1; }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuInit(unsigned int flags) {
  if (flags != 0) return 1;  // CUDA_ERROR_INVALID_VALUE
  char const* v = std::getenv("FAKE_CUDA_INIT_RESULT");
  return v != nullptr && *v != '\0' ? std::atoi(v) : 0;
}

__attribute__((visibility("default"))) int cuDriverGetVersion(int* version) {
  char const* v = std::getenv("FAKE_CUDA_DRIVER_VERSION");
  *version = v != nullptr && *v != '\0' ? std::atoi(v) : 13000;
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetCount(int* count) {
  *count = 2;
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGet(int* device, int ordinal) {
  if (!valid(ordinal)) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = ordinal;
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetPCIBusId(char* busId, int len, int device) {
  if (!valid(device)) return 101;
  std::snprintf(busId, static_cast<size_t>(len), "0000:%02x:00.0", device == 0 ? 0x5E : 0x3B);
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetName(char* name, int len, int device) {
  if (!valid(device) || len <= 0) return 101;
  std::snprintf(name, static_cast<size_t>(len), "%s", device == 0 ? "Fake RTX 3090" : "Fake H100");
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (!valid(device)) return 101;
  if (attribute == 75) *value = device == 0 ? 8 : 9;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  else if (attribute == 76) *value = device == 0 ? 6 : 0;
  else return 1;
  return 0;
}

// 16 bytes per device, as CUuuid holds them; device 1's differ from device 0's in every byte.
int fakeUuid(unsigned char* uuid, int device) {
  if (!valid(device)) return 101;
  for (int i = 0; i < 16; ++i) uuid[i] = static_cast<unsigned char>(device == 0 ? 0x10 + i : 0xa0 + i);
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetUuid(unsigned char* uuid, int device) { return fakeUuid(uuid, device); }

__attribute__((visibility("default"))) int cuDeviceGetUuid_v2(unsigned char* uuid, int device) {
  note("deviceGetUuid_v2 " + std::to_string(device));
  return fakeUuid(uuid, device);
}

__attribute__((visibility("default"))) int cuDevicePrimaryCtxRetain(void** ctx, int device) {
  if (!valid(device)) return 101;
  *ctx = &contexts[device];
  note("primaryCtxRetain " + std::to_string(device));
  return 0;
}

__attribute__((visibility("default"))) int cuCtxSetCurrent(void* ctx) {
  current = static_cast<Context*>(ctx);
  note("ctxSetCurrent " + std::to_string(current != nullptr ? current->device : -1));
  return 0;
}

__attribute__((visibility("default"))) int cuGetErrorString(int rc, char const** text) {
  switch (rc) {
    case 100:
      *text = "no CUDA-capable device is detected";
      return 0;
    case 101:
      *text = "invalid device ordinal";
      return 0;
    default:
      return 1;
  }
}

__attribute__((visibility("default"))) int fakeCudaCurrentDevice() { return current != nullptr ? current->device : -1; }

__attribute__((visibility("default"))) char const* fakeCudaDriverCalls() {
  static std::string copy;
  std::lock_guard<std::mutex> lock(journalMu);
  copy = journal;
  return copy.c_str();
}

}  // extern "C"
