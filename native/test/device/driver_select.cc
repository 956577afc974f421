// The CUDA driver calls the TensorRT backend makes (native/src/gpu/cuda_driver.cc), run against a
// REAL driver: no TensorRT, no Node, no CUDA header or toolkit needed (libcuda.so.1 is opened with
// dlopen, as the product does). For a machine with an NVIDIA GPU; it prints what it saw and exits
// non-zero on the first thing that differs from what the product assumes.
//
// Build and run (one line):
//   g++ -std=c++17 -O1 -o /tmp/driver_select native/test/device/driver_select.cc -ldl -lpthread && /tmp/driver_select
//
// What it checks, for every device:
//   - cuDriverGetVersion works before cuInit (the product reads it when listing backends);
//   - cuDeviceGetName / cuDeviceGetAttribute (compute capability) answer without a context
//     (cuCtxGetCurrent stays null), i.e. naming a GPU costs no GPU memory;
//   - cuDevicePrimaryCtxRetain + cuCtxSetCurrent on a new thread make that device current on that
//     thread only (cuCtxGetDevice there; another thread still has no context);
//   - if libcudart is loadable, cudaGetDevice on that thread reports the same device (the
//     runtime adopts the primary context) - skipped, and said, when no libcudart is found.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

using InitFn = int (*)(unsigned);
using IntPtrFn = int (*)(int*);
using DeviceGetFn = int (*)(int*, int);
using NameFn = int (*)(char*, int, int);
using AttrFn = int (*)(int*, int, int);
using RetainFn = int (*)(void**, int);
using ReleaseFn = int (*)(int);
using SetCurrentFn = int (*)(void*);
using GetCurrentFn = int (*)(void**);

int failures = 0;

void expect(bool ok, std::string const& what) {
  std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

template <class F>
F sym(void* h, char const* name) {
  F f = reinterpret_cast<F>(dlsym(h, name));
  if (f == nullptr) {
    std::printf("FAIL  libcuda.so.1 lacks %s\n", name);
    std::exit(2);
  }
  return f;
}

}  // namespace

int main() {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) {
    std::printf("FAIL  cannot load libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  auto driverVersion = sym<IntPtrFn>(cuda, "cuDriverGetVersion");
  auto init = sym<InitFn>(cuda, "cuInit");
  auto count = sym<IntPtrFn>(cuda, "cuDeviceGetCount");
  auto deviceGet = sym<DeviceGetFn>(cuda, "cuDeviceGet");
  auto name = sym<NameFn>(cuda, "cuDeviceGetName");
  auto attr = sym<AttrFn>(cuda, "cuDeviceGetAttribute");
  auto retain = sym<RetainFn>(cuda, "cuDevicePrimaryCtxRetain");
  auto release = sym<ReleaseFn>(cuda, "cuDevicePrimaryCtxRelease_v2");
  auto setCurrent = sym<SetCurrentFn>(cuda, "cuCtxSetCurrent");
  auto getCurrent = sym<GetCurrentFn>(cuda, "cuCtxGetCurrent");
  auto ctxDevice = sym<IntPtrFn>(cuda, "cuCtxGetDevice");

  int v = 0;
  int rc = driverVersion(&v);
  expect(rc == 0 && v > 0, "cuDriverGetVersion before cuInit: rc " + std::to_string(rc) + ", CUDA " + std::to_string(v / 1000) + "." +
                               std::to_string((v % 1000) / 10));
  rc = init(0);
  expect(rc == 0, "cuInit(0): rc " + std::to_string(rc));
  if (rc != 0) return 1;
  int n = 0;
  expect(count(&n) == 0 && n > 0, "cuDeviceGetCount: " + std::to_string(n));

  using RtGetDevice = int (*)(int*);
  void* cudart = nullptr;
  for (char const* lib : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}) {
    if ((cudart = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) != nullptr) {
      std::printf("info  CUDA runtime for the adoption check: %s\n", lib);
      break;
    }
  }
  if (cudart == nullptr) std::printf("info  no libcudart found: the runtime adoption check is skipped\n");
  auto rtGetDevice = cudart != nullptr ? reinterpret_cast<RtGetDevice>(dlsym(cudart, "cudaGetDevice")) : nullptr;

  for (int i = 0; i < n; ++i) {
    int dev = -1;
    expect(deviceGet(&dev, i) == 0, "cuDeviceGet(" + std::to_string(i) + ")");
    char buf[256] = {};
    int major = 0, minor = 0;
    bool named = name(buf, sizeof buf - 1, dev) == 0 && attr(&major, 75, dev) == 0 && attr(&minor, 76, dev) == 0;
    expect(named,
           "device " + std::to_string(i) + ": " + buf + ", compute capability " + std::to_string(major) + "." + std::to_string(minor));
    void* none = reinterpret_cast<void*>(1);
    expect(getCurrent(&none) == 0 && none == nullptr, "naming it made no context current on this thread");

    int seen = -1, runtimeSeen = -1, other = -2;
    std::thread builder([&] {
      void* ctx = nullptr;
      if (retain(&ctx, dev) != 0 || setCurrent(ctx) != 0) return;
      ctxDevice(&seen);
      if (rtGetDevice != nullptr) rtGetDevice(&runtimeSeen);
    });
    builder.join();
    expect(seen == dev, "primary context of device " + std::to_string(i) + " current on the building thread (cuCtxGetDevice " +
                            std::to_string(seen) + ")");
    if (rtGetDevice != nullptr) {
      expect(runtimeSeen == i, "the CUDA runtime on that thread adopted it (cudaGetDevice " + std::to_string(runtimeSeen) + ")");
    }
    std::thread([&] {
      void* ctx = reinterpret_cast<void*>(1);
      other = getCurrent(&ctx) == 0 && ctx == nullptr ? -1 : 0;
    }).join();
    expect(other == -1, "another thread has no current context");
    release(dev);
  }
  std::printf("%s\n", failures == 0 ? "ALL OK" : "FAILURES");
  return failures == 0 ? 0 : 1;
}
