// The product's own GPU code (native/src/gpu: CudaDriver and GpuProbe, as the worker uses them for
// the liveness line and the memory figures) run against a REAL NVIDIA driver and NVML: no
// TensorRT, Node or CUDA toolkit needed. Prints one JSON object and exits non-zero on the first
// thing that differs from what the product assumes. For a machine with an NVIDIA GPU.
//
// Build and run (from the repository root):
//   g++ -std=c++17 -O1 -Inative/src -o /tmp/gpu_facts native/test/device/gpu_facts.cc
//     native/src/gpu/gpu_probe.cc native/src/gpu/cuda_driver.cc -ldl -lpthread && /tmp/gpu_facts
//
// What it checks:
//   - the driver loads, says its CUDA version, names every device and its compute capability;
//   - /proc/driver/nvidia/gpus lists as many GPUs as CUDA counts (what `worker --gpus all` uses);
//   - a probe opens for device 0 and samples utilisation, device memory, SM clock, temperature;
//   - before this process has a CUDA context NVML lists no memory of it (0 or -1); after the
//     primary context is made current on this thread, NVML lists this process with some memory
//     (the per-process figure the memory limit watches);
//   - each device's UUID from the CUDA driver (CudaDriver::uuidOf, what an engine's manifest
//     records) equals NVML's nvmlDeviceGetUUID for the same PCI bus (what nvidia-smi prints), and
//     the NVIDIA driver version (nvidiaDriverVersion) is read. These two checks were added after
//     the H200 run below and have NOT run on a real GPU yet (the H200's nvidia-smi printed
//     "GPU-2c7b7e35-8c42-6402-4e2c-bfdd230a68e4" and "580.159.04": the forms the product writes).
#include <dirent.h>
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "gpu/cuda_driver.h"
#include "gpu/gpu_probe.h"

using tbs::gpu::CudaDriver;
using tbs::gpu::GpuProbe;
using tbs::gpu::GpuUtilization;

namespace {

int procGpuCount() {
  DIR* d = opendir("/proc/driver/nvidia/gpus");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

int fail(char const* what, std::string const& why) {
  std::printf("\n  \"failed\": \"%s: %s\"\n}\n", what, why.c_str());
  return 1;
}

// NVML's own UUID of the GPU on `busId` ("GPU-…"), for comparison; "" when NVML cannot say.
std::string nvmlUuidOf(std::string const& busId) {
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return {};
  auto init = reinterpret_cast<int (*)()>(dlsym(h, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<int (*)()>(dlsym(h, "nvmlShutdown"));
  auto byBus = reinterpret_cast<int (*)(char const*, void**)>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto uuid = reinterpret_cast<int (*)(void*, char*, unsigned)>(dlsym(h, "nvmlDeviceGetUUID"));
  std::string out;
  if (init != nullptr && shutdown != nullptr && byBus != nullptr && uuid != nullptr && init() == 0) {
    void* dev = nullptr;
    char buf[96] = {};
    if (byBus(busId.c_str(), &dev) == 0 && uuid(dev, buf, sizeof buf) == 0) out = buf;
    shutdown();
  }
  return out;
}

void printSample(char const* key, GpuUtilization const& u) {
  std::printf(
      "  \"%s\": {\"gpuPercent\": %u, \"memoryPercent\": %u, \"processMemoryBytes\": %lld, \"deviceUsedBytes\": %lld, "
      "\"deviceTotalBytes\": %lld, \"smClockMhz\": %d, \"temperatureC\": %d},\n",
      key, u.gpuPercent, u.memoryPercent, static_cast<long long>(u.processMemoryBytes), static_cast<long long>(u.deviceUsedBytes),
      static_cast<long long>(u.deviceTotalBytes), u.smClockMhz, u.temperatureC);
}

}  // namespace

int main() {
  std::printf("{\n");
  std::string error;
  CudaDriver* cuda = CudaDriver::get(error);
  if (cuda == nullptr) return fail("CudaDriver::get", error);
  std::printf("  \"driverPath\": \"%s\",\n  \"cudaDriverVersion\": %d,\n", cuda->path().c_str(), cuda->version());
  int devices = 0;
  std::printf("  \"devices\": [");
  for (int i = 0; i < 64; ++i) {
    std::string name, cc, err;
    if (!cuda->describe(i, name, cc, err)) break;
    std::string bus, uuid;
    cuda->busIdOf(i, bus, err);
    if (!cuda->uuidOf(i, uuid, err)) return fail("uuidOf", err);
    std::string nvmlUuid = nvmlUuidOf(bus);
    std::printf(
        "%s{\"ordinal\": %d, \"name\": \"%s\", \"computeCapability\": \"%s\", \"pciBusId\": \"%s\", \"uuid\": \"%s\", \"nvmlUuid\": "
        "\"%s\"}",
        i ? ", " : "", i, name.c_str(), cc.c_str(), bus.c_str(), uuid.c_str(), nvmlUuid.c_str());
    if (uuid != nvmlUuid) return fail("uuid", "the CUDA driver's " + uuid + " is not NVML's " + nvmlUuid);
    ++devices;
  }
  std::printf("],\n  \"procGpus\": %d,\n", procGpuCount());
  std::string driverVersion;
  if (!tbs::gpu::nvidiaDriverVersion(driverVersion, error)) return fail("nvidiaDriverVersion", error);
  std::printf("  \"nvidiaDriverVersion\": \"%s\",\n", driverVersion.c_str());
  if (devices == 0) return fail("describe", "no CUDA device");
  if (procGpuCount() >= 0 && procGpuCount() != devices && std::getenv("CUDA_VISIBLE_DEVICES") == nullptr) {
    return fail("/proc/driver/nvidia/gpus", "lists " + std::to_string(procGpuCount()) + " GPUs, CUDA counts " + std::to_string(devices));
  }
  auto probe = GpuProbe::open(0, error);
  if (!probe) return fail("GpuProbe::open(0)", error);
  std::printf("  \"probeBusId\": \"%s\",\n", probe->pciBusId().c_str());
  GpuUtilization before;
  bool permanent = false;
  if (!probe->sample(before, error, permanent)) return fail("sample before a context", error);
  printSample("beforeContext", before);
  if (before.processMemoryBytes > 0) return fail("processMemoryBytes before a context", std::to_string(before.processMemoryBytes));
  if (before.deviceTotalBytes <= 0 || before.smClockMhz <= 0 || before.temperatureC < 0) return fail("device figures", "missing");
  if (!cuda->selectOnThisThread(0, error)) return fail("selectOnThisThread(0)", error);
  GpuUtilization after;
  if (!probe->sample(after, error, permanent)) return fail("sample after a context", error);
  printSample("afterContext", after);
  if (after.processMemoryBytes <= 0)
    return fail("processMemoryBytes after a context", std::to_string(after.processMemoryBytes) + " (NVML does not list this process)");
  std::printf("  \"ok\": true\n}\n");
  return 0;
}
