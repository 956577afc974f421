// The GPU probe (native/src/gpu) against fake NVML and CUDA driver libraries: the CUDA ordinal
// is mapped through the PCI bus, not taken as an NVML index; every failure has a reason; NVML
// is shut down by every probe that started it.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "check.h"
#include "gpu/gpu_probe.h"
#include "temp_dir.h"

using tbs::gpu::GpuProbe;
using tbs::gpu::GpuSampler;
using tbs::gpu::GpuUtilization;
using tbs::gpu::PidIdentity;

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
                        "FAKE_NVML_PROCS_3B", "FAKE_NVML_PROCS_5E", "FAKE_NVML_NO_PROCESSES", "FAKE_NVML_DRIVER_VERSION",
                        "FAKE_NVML_MEMORY_V2_RESULT", "FAKE_NVML_OTHERS_MIB"}) {
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
  CHECK(u.processMemoryUnknown.empty());
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
  CHECK_CONTAINS(u.processMemoryUnknown, "withholds");
  setenv("FAKE_NVML_NO_PROCESSES", "1", 1);
  CHECK(p->sample(u, error, permanent));  // utilisation is still there
  CHECK_EQ(u.processMemoryBytes, int64_t{-1});
  CHECK_CONTAINS(u.processMemoryUnknown, "did not list the GPU's processes");
  CHECK_EQ(u.gpuPercent, 40u);
}

// nvidia-smi's used memory leaves out the driver's reserve; nvmlDeviceGetMemoryInfo_v2 gives it
// apart. The older call (counting the reserve as used) only where _v2 is missing or refused.
TEST(device_memory_is_v2_where_the_driver_has_it) {
  useFakes();
  std::string error;
  GpuUtilization u;
  bool permanent = false;
  {
    auto p = GpuProbe::open(0, error);
    CHECK_MSG(p != nullptr && p->sample(u, error, permanent), error);
    CHECK_EQ(u.memoryInfoVersion, 2);
    CHECK_EQ(u.deviceUsedBytes, int64_t{10} << 30);
    CHECK_EQ(u.deviceReservedBytes, int64_t{480} << 20);
    CHECK_EQ(u.deviceTotalBytes, int64_t{80} << 30);
    // A driver with the symbol that refuses the struct's version: the older call for that sample.
    setenv("FAKE_NVML_MEMORY_V2_RESULT", "25", 1);
    CHECK(p->sample(u, error, permanent));
    CHECK_EQ(u.memoryInfoVersion, 1);
    CHECK_EQ(u.deviceUsedBytes, (int64_t{10} << 30) + (int64_t{480} << 20));
    CHECK_EQ(u.deviceReservedBytes, int64_t{-1});
    unsetenv("FAKE_NVML_MEMORY_V2_RESULT");
  }
  // An older NVML without nvmlDeviceGetMemoryInfo_v2 at all.
  setenv("TBS_NVML_LIB", FAKE_NVML_V1, 1);
  {
    auto p = GpuProbe::open(0, error);
    CHECK_MSG(p != nullptr && p->sample(u, error, permanent), error);
    CHECK_EQ(u.memoryInfoVersion, 1);
    CHECK_EQ(u.deviceUsedBytes, (int64_t{10} << 30) + (int64_t{480} << 20));
    CHECK_EQ(u.deviceReservedBytes, int64_t{-1});
    CHECK_EQ(u.deviceTotalBytes, int64_t{80} << 30);
  }
  void* v1 = dlopen(FAKE_NVML_V1, RTLD_NOW | RTLD_LOCAL);
  CHECK(v1 != nullptr && dlsym(v1, "nvmlDeviceGetMemoryInfo_v2") == nullptr && dlsym(v1, "nvmlDeviceGetMemoryInfo") != nullptr);
  if (v1 != nullptr) dlclose(v1);
}

// In a PID namespace of its own (a container) NVML lists this process by its host PID, which
// getpid() is not: not listed is unknown there, never 0, and the device's growth since the first
// sample is given for a caller to show instead.
TEST(own_pid_namespace_not_listed_is_unknown_with_the_device_delta) {
  useFakes();
  setenv("FAKE_NVML_PROCS_5E", "123456:1000", 1);  // the host PID of some process, not ours
  setenv("FAKE_NVML_OTHERS_MIB", "100", 1);
  std::string error;
  PidIdentity inContainer;
  inContainer.pids = {static_cast<unsigned>(getpid())};
  inContainer.ownNamespace = true;
  inContainer.how = "this process runs in a PID namespace of its own (a container: pid:[4026532999])";
  auto p = GpuProbe::open(0, error, inContainer);
  CHECK_MSG(p != nullptr, error);
  if (p == nullptr) return;
  GpuUtilization u;
  bool permanent = false;
  CHECK(p->sample(u, error, permanent));
  CHECK_EQ(u.processMemoryBytes, int64_t{-1});
  CHECK_CONTAINS(u.processMemoryUnknown, "NVML does not list this process");
  CHECK_CONTAINS(u.processMemoryUnknown, "pid:[4026532999]");
  CHECK_EQ(u.deviceUsedDeltaBytes, int64_t{0});  // the first sample is the baseline
  setenv("FAKE_NVML_OTHERS_MIB", "612", 1);
  CHECK(p->sample(u, error, permanent));
  CHECK_EQ(u.deviceUsedDeltaBytes, int64_t{512} << 20);
  // Memory freed below the baseline (by others) is not a negative figure for this build.
  setenv("FAKE_NVML_OTHERS_MIB", "0", 1);
  CHECK(p->sample(u, error, permanent));
  CHECK_EQ(u.deviceUsedDeltaBytes, int64_t{0});
  // The same not-listed process in the host's namespace holds nothing yet: 0, as before.
  auto host = GpuProbe::open(0, error, PidIdentity{{static_cast<unsigned>(getpid())}, false, ""});
  CHECK(host != nullptr && host->sample(u, error, permanent));
  CHECK_EQ(u.processMemoryBytes, int64_t{0});
  CHECK(u.processMemoryUnknown.empty());
  // Listed by the outermost NSpid entry (a PID namespace under the host's /proc): found.
  PidIdentity nested;
  nested.pids = {static_cast<unsigned>(getpid()), 123456};
  nested.ownNamespace = true;
  auto found = GpuProbe::open(0, error, nested);
  CHECK(found != nullptr && found->sample(u, error, permanent));
  CHECK_EQ(u.processMemoryBytes, int64_t{1000});
}

TEST(pid_identity_reads_nspid_and_the_namespace_link) {
  tbs_test::TempDir dir("tbs-gpu-probe");
  mkdir((dir.path + "/ns").c_str(), 0755);
  auto write = [&](std::string const& nspid, std::string const& ns) {
    std::ofstream(dir.path + "/status") << "Name:\tnode\nPid:\t1\n" << nspid << "PPid:\t0\n";
    unlink((dir.path + "/ns/pid").c_str());
    if (!ns.empty()) CHECK(symlink(ns.c_str(), (dir.path + "/ns/pid").c_str()) == 0);
  };
  auto self = static_cast<unsigned>(getpid());
  write("NSpid:\t" + std::to_string(self) + "\n", "pid:[4026531836]");
  PidIdentity id = tbs::gpu::readPidIdentity(dir.path);
  CHECK(!id.ownNamespace);
  CHECK_EQ(id.pids.size(), size_t{1});
  // A namespace under the host's /proc: two NSpid entries, the first the host's PID.
  write("NSpid:\t98765\t" + std::to_string(self) + "\n", "pid:[4026532100]");
  id = tbs::gpu::readPidIdentity(dir.path);
  CHECK(id.ownNamespace);
  CHECK(id.pids.size() == 2 && id.pids[0] == self && id.pids[1] == 98765);
  CHECK_CONTAINS(id.how, "NSpid has 2 entries");
  // A container with its own /proc: one entry, but not the initial namespace.
  write("NSpid:\t" + std::to_string(self) + "\n", "pid:[4026532100]");
  id = tbs::gpu::readPidIdentity(dir.path);
  CHECK(id.ownNamespace);
  CHECK_CONTAINS(id.how, "pid:[4026532100]");
  write("", "");
  id = tbs::gpu::readPidIdentity(dir.path);
  CHECK(id.ownNamespace);
  CHECK_CONTAINS(id.how, "could not be read");
  // This test machine, as it is.
  (void)tbs::gpu::readPidIdentity();
}

// The sampler has a figure from its constructor on, then one per period from its own thread;
// its destructor stops the thread.
TEST(sampler_samples_on_its_own_thread) {
  useFakes();
  setenv("FAKE_NVML_PROCS_5E", "self:4096", 1);
  std::string error;
  auto p = GpuProbe::open(0, error);
  CHECK_MSG(p != nullptr, error);
  if (p == nullptr) return;
  {
    GpuSampler sampler(std::move(p), 5);
    GpuSampler::Sample s = sampler.latest();
    CHECK(s.ok && s.number >= 1);
    CHECK_EQ(s.value.gpuPercent, 40u);
    CHECK_EQ(s.value.processMemoryBytes, int64_t{4096});
    CHECK_EQ(sampler.pciBusId(), std::string("0000:5e:00.0"));
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);  // generous: a busy machine
    while (sampler.latest().number < 4 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    s = sampler.latest();
    CHECK_MSG(s.number >= 4, "samples taken: " + std::to_string(s.number));
    CHECK(s.ok && s.value.processMemoryBytes == 4096);
    CHECK_EQ(openInits(), 1);
  }
  CHECK_EQ(openInits(), 0);
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
