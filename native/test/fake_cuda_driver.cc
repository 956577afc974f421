// A stand-in for libcuda.so.1 with the driver calls the GPU probe uses. Two devices in CUDA's
// order, which is not PCI order (CUDA puts the fastest first): ordinal 0 is the GPU on bus 5E,
// ordinal 1 the one on bus 3B. FAKE_CUDA_INIT_RESULT sets what cuInit returns (default 0).
#include <cstdio>
#include <cstdlib>

extern "C" {

__attribute__((visibility("default"))) int cuInit(unsigned int flags) {
  if (flags != 0) return 1;  // CUDA_ERROR_INVALID_VALUE
  char const* v = std::getenv("FAKE_CUDA_INIT_RESULT");
  return v != nullptr && *v != '\0' ? std::atoi(v) : 0;
}

__attribute__((visibility("default"))) int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal > 1) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = ordinal;
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetPCIBusId(char* busId, int len, int device) {
  if (device < 0 || device > 1) return 101;
  std::snprintf(busId, static_cast<size_t>(len), "0000:%02x:00.0", device == 0 ? 0x5E : 0x3B);
  return 0;
}

__attribute__((visibility("default"))) int cuGetErrorString(int rc, char const** text) {
  switch (rc) {
    case 100: *text = "no CUDA-capable device is detected"; return 0;
    case 101: *text = "invalid device ordinal"; return 0;
    default: return 1;
  }
}

}  // extern "C"
