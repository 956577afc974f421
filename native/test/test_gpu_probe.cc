// The GPU probe (native/src/gpu) against fake NVML and CUDA driver libraries: the CUDA ordinal
// is mapped through the PCI bus, not taken as an NVML index; every failure has a reason; NVML
// is shut down by every probe that started it.
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "check.h"
#include "gpu/gpu_probe.h"

using tbs::gpu::GpuProbe;
using tbs::gpu::GpuUtilization;

namespace {

// The fakes stay loaded through this handle, so their counters survive the probes' dlclose.
int openInits() {
  static void* h = dlopen(FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  auto fn = h != nullptr ? reinterpret_cast<int (*)()>(dlsym(h, "fake_nvml_open_inits")) : nullptr;
  return fn != nullptr ? fn() : -1;
}

void useFakes() {
  setenv("TBS_NVML_LIB", FAKE_NVML, 1);
  setenv("TBS_CUDA_DRIVER_LIB", FAKE_CUDA_DRIVER, 1);
  for (char const* v : {"FAKE_NVML_UTIL_3B", "FAKE_NVML_UTIL_5E", "FAKE_NVML_INIT_RESULT", "FAKE_NVML_UNSUPPORTED", "FAKE_CUDA_INIT_RESULT",
                        "FAKE_NVML_PROCS_3B", "FAKE_NVML_PROCS_5E", "FAKE_NVML_NO_PROCESSES", "FAKE_NVML_DRIVER_VERSION"}) {
    unsetenv(v);
  }
}

bool contains(std::string const& s, std::string const& part) { return s.find(part) != std::string::npos; }

}  // namespace

// First: the CUDA driver, once loaded, stays for the process.
TEST(missing_cuda_driver_says_so) {
  useFakes();
  setenv("TBS_CUDA_DRIVER_LIB", "/nonexistent/libcuda.so.1", 1);
  std::string error;
  CHECK(GpuProbe::open(0, error) == nullptr);
  CHECK_MSG(contains(error, "CUDA driver library was not found") && contains(error, "/nonexistent/libcuda.so.1"), error);
}

TEST(cuda_ordinal_is_mapped_through_the_pci_bus) {
  useFakes();
  setenv("FAKE_NVML_UTIL_3B", "12", 1);
  setenv("FAKE_NVML_UTIL_5E", "87", 1);
  std::string error;
  {
    auto p0 = GpuProbe::open(0, error);
    CHECK_MSG(p0 != nullptr, error);
    if (p0 == nullptr) return;
    CHECK_EQ(p0->pciBusId(), std::string("0000:5e:00.0"));
    GpuUtilization u;
    bool permanent = true;
    CHECK(p0->sample(u, error, permanent));
    CHECK_EQ(u.gpuPercent, 87u);  // CUDA device 0 is NVML index 1: bus 5E
    CHECK_EQ(u.memoryPercent, 43u);
    CHECK(!permanent);
    auto p1 = GpuProbe::open(1, error);
    CHECK(p1 != nullptr && p1->sample(u, error, permanent) && u.gpuPercent == 12u);
    CHECK_EQ(openInits(), 2);
  }
  CHECK_EQ(openInits(), 0);
}

TEST(sample_follows_the_device_and_is_clamped) {
  useFakes();
  std::string error;
  auto p = GpuProbe::open(0, error);
  CHECK(p != nullptr);
  if (p == nullptr) return;
  GpuUtilization u;
  bool permanent = false;
  setenv("FAKE_NVML_UTIL_5E", "0", 1);
  CHECK(p->sample(u, error, permanent) && u.gpuPercent == 0u);
  setenv("FAKE_NVML_UTIL_5E", "250", 1);
  CHECK(p->sample(u, error, permanent) && u.gpuPercent == 100u);
}

// Only this process's entries count, on the build's device; the device's used/total, SM clock and
// temperature come with the sample.
TEST(process_memory_is_this_process_on_this_device) {
  useFakes();
  setenv("FAKE_NVML_PROCS_5E", "1:1000,self:3000000000,self:5000,99999:7", 1);
  setenv("FAKE_NVML_PROCS_3B", "self:42", 1);
  std::string error;
  auto p = GpuProbe::open(0, error);  // bus 5E
  CHECK_MSG(p != nullptr, error);
  if (p == nullptr) return;
  GpuUtilization u;
  bool permanent = false;
  CHECK(p->sample(u, error, permanent));
  CHECK_EQ(u.processMemoryBytes, int64_t{3000005000});
  CHECK_EQ(u.deviceTotalBytes, int64_t{80} << 30);
  CHECK_EQ(u.deviceUsedBytes, (int64_t{10} << 30) + 1000 + 3000005000 + 7);
  CHECK_EQ(u.smClockMhz, 1410);
  CHECK_EQ(u.temperatureC, 67);
  // Not listed yet (no CUDA context): holds nothing.
  setenv("FAKE_NVML_PROCS_5E", "1:1000", 1);
  CHECK(p->sample(u, error, permanent) && u.processMemoryBytes == 0);
  // More processes than one call's buffer: asked again with room for all.
  std::string many;
  for (int i = 0; i < 100; ++i) many += std::to_string(100000 + i) + ":1,";
  many += "self:77";
  setenv("FAKE_NVML_PROCS_5E", many.c_str(), 1);
  CHECK(p->sample(u, error, permanent) && u.processMemoryBytes == 77);
}

TEST(process_memory_unknown_is_minus_one_and_not_an_error) {
  useFakes();
  setenv("FAKE_NVML_PROCS_5E", "self:na", 1);
  std::string error;
  auto p = GpuProbe::open(0, error);
  CHECK(p != nullptr);
  if (p == nullptr) return;
  GpuUtilization u;
  bool permanent = false;
  CHECK(p->sample(u, error, permanent));
  CHECK_EQ(u.processMemoryBytes, int64_t{-1});
  setenv("FAKE_NVML_NO_PROCESSES", "1", 1);
  CHECK(p->sample(u, error, permanent));  // utilisation is still there
  CHECK_EQ(u.processMemoryBytes, int64_t{-1});
  CHECK_EQ(u.gpuPercent, 40u);
}

TEST(unsupported_utilisation_is_permanent) {
  useFakes();
  setenv("FAKE_NVML_UNSUPPORTED", "1", 1);
  std::string error;
  auto p = GpuProbe::open(0, error);
  CHECK(p != nullptr);
  if (p == nullptr) return;
  GpuUtilization u;
  bool permanent = false;
  CHECK(!p->sample(u, error, permanent));
  CHECK(permanent);
  CHECK_MSG(contains(error, "does not report its utilisation"), error);
}

TEST(no_such_cuda_device_names_it) {
  useFakes();
  std::string error;
  CHECK(GpuProbe::open(2, error) == nullptr);
  CHECK_MSG(contains(error, "no CUDA device 2") && contains(error, "invalid device ordinal"), error);
  CHECK(GpuProbe::open(-1, error) == nullptr);
  CHECK_MSG(contains(error, "-1"), error);
  CHECK_EQ(openInits(), 0);
}

TEST(cuda_driver_that_does_not_start) {
  useFakes();
  setenv("FAKE_CUDA_INIT_RESULT", "100", 1);
  std::string error;
  CHECK(GpuProbe::open(0, error) == nullptr);
  CHECK_MSG(contains(error, "did not start") && contains(error, "no CUDA-capable device"), error);
}

TEST(nvml_that_does_not_start_is_not_shut_down) {
  useFakes();
  setenv("FAKE_NVML_INIT_RESULT", "9", 1);
  std::string error;
  CHECK(GpuProbe::open(0, error) == nullptr);
  CHECK_MSG(contains(error, "NVML did not start") && contains(error, "Driver Not Loaded"), error);
  CHECK_EQ(openInits(), 0);
}

TEST(driver_version_comes_from_nvml_which_is_shut_down_after) {
  useFakes();
  std::string version, error;
  CHECK_MSG(tbs::gpu::nvidiaDriverVersion(version, error), error);
  CHECK_EQ(version, std::string("580.95.05"));
  setenv("FAKE_NVML_DRIVER_VERSION", "595.1.2", 1);
  CHECK_MSG(tbs::gpu::nvidiaDriverVersion(version, error), error);
  CHECK_EQ(version, std::string("595.1.2"));
  CHECK_EQ(openInits(), 0);
  setenv("FAKE_NVML_INIT_RESULT", "9", 1);
  CHECK(!tbs::gpu::nvidiaDriverVersion(version, error));
  CHECK_CONTAINS(error, "NVML did not start");
  useFakes();
  setenv("TBS_NVML_LIB", FAKE_CUDA_DRIVER, 1);  // not NVML
  CHECK(!tbs::gpu::nvidiaDriverVersion(version, error));
  CHECK_CONTAINS(error, "lacks nvmlInit_v2");
}

TEST(missing_libraries_say_which) {
  useFakes();
  setenv("TBS_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
  std::string error;
  CHECK(GpuProbe::open(0, error) == nullptr);
  CHECK_MSG(contains(error, "NVML") && contains(error, "/nonexistent/libnvidia-ml.so.1"), error);
  // A library that is not NVML (the CUDA fake lacks every NVML symbol).
  setenv("TBS_NVML_LIB", FAKE_CUDA_DRIVER, 1);
  CHECK(GpuProbe::open(0, error) == nullptr);
  CHECK_MSG(contains(error, "not NVML?"), error);
}

TEST_MAIN()
