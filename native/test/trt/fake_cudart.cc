// A stand-in for libcudart.so (test-only, our own code): two "GPUs", the C signatures the
// adapter resolves with dlsym (cuda_device.cc), and a journal of cudaSetDevice calls.
#include <cstring>
#include <string>

namespace {
int current = 0;
std::string calls;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) char const* fakeCudartCalls() { return calls.c_str(); }

int cudaGetDeviceCount(int* n) {
  *n = 2;
  return 0;
}

int cudaSetDevice(int d) {
  if (d < 0 || d > 1) return 101;  // cudaErrorInvalidDevice
  current = d;
  calls += "setDevice " + std::to_string(d) + "\n";
  return 0;
}

int cudaRuntimeGetVersion(int* v) {
  *v = 12040;
  return 0;
}

int cudaDeviceGetAttribute(int* value, int attr, int device) {
  if (device < 0 || device > 1) return 101;
  if (attr == 75) *value = device == 0 ? 8 : 9;  // compute capability major
  else if (attr == 76) *value = device == 0 ? 6 : 0;
  else return 1;
  return 0;
}

int cudaGetDeviceProperties_v2(void* props, int device) {
  if (device < 0 || device > 1) return 101;
  std::strcpy(static_cast<char*>(props), device == 0 ? "Fake RTX 3090" : "Fake H100");
  return 0;
}

char const* cudaGetErrorString(int code) { return code == 101 ? "invalid device ordinal" : "fake error"; }

}  // extern "C"
