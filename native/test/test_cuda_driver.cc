// The CUDA driver seam (native/src/gpu/cuda_driver.h) against the fake libcuda
// (native/test/fake_cuda_driver.cc): the driver's CUDA version, naming a GPU without a context,
// choosing a device for the calling thread only, and the driver-versus-runtime rule. Runs
// without TensorRT headers (CI). What a real driver does is not observed here;
// native/test/device/ holds a program that makes the same calls against one.
#include <dlfcn.h>
#include <stdlib.h>

#include <string>
#include <thread>

#include "check.h"
#include "gpu/cuda_driver.h"

using tbs::gpu::CudaDriver;

namespace {

CudaDriver* driver() {
  setenv("TBS_CUDA_DRIVER_LIB", FAKE_CUDA_DRIVER, 1);
  std::string error;
  CudaDriver* d = CudaDriver::get(error);
  CHECK_MSG(d != nullptr, error);
  return d;
}

int currentDevice() {
  void* h = dlopen(FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  auto fn = h != nullptr ? reinterpret_cast<int (*)()>(dlsym(h, "fakeCudaCurrentDevice")) : nullptr;
  int d = fn != nullptr ? fn() : -99;
  if (h != nullptr) dlclose(h);
  return d;
}

}  // namespace

TEST(version_is_read_without_starting_cuda) {
  CudaDriver* d = driver();
  if (d == nullptr) return;
  CHECK_EQ(d->version(), 13000);
  CHECK_EQ(tbs::gpu::cudaVersionText(d->version()), std::string("13.0"));
  setenv("FAKE_CUDA_DRIVER_VERSION", "12080", 1);
  CHECK_EQ(tbs::gpu::cudaVersionText(d->version()), std::string("12.8"));
  unsetenv("FAKE_CUDA_DRIVER_VERSION");
  // cuInit failing does not hide the version (cuDriverGetVersion needs no cuInit).
  setenv("FAKE_CUDA_INIT_RESULT", "100", 1);
  CHECK_EQ(d->version(), 13000);
  std::string name, cc, error;
  CHECK(!d->describe(0, name, cc, error));
  CHECK_CONTAINS(error, "the CUDA driver did not start");
  CHECK_CONTAINS(error, "no CUDA-capable device is detected");
  unsetenv("FAKE_CUDA_INIT_RESULT");
}

TEST(describe_names_the_gpu_in_cuda_order) {
  CudaDriver* d = driver();
  if (d == nullptr) return;
  std::string name, cc, error;
  CHECK_MSG(d->describe(1, name, cc, error), error);
  CHECK_EQ(name, std::string("Fake H100"));
  CHECK_EQ(cc, std::string("9.0"));
  CHECK(!d->describe(2, name, cc, error));
  CHECK_CONTAINS(error, "device 2 does not exist: this machine has 2 CUDA devices (0..1)");
  CHECK_EQ(currentDevice(), -1);  // describing made no context current
}

TEST(uuid_is_written_as_nvidia_smi_writes_it_per_device) {
  CudaDriver* d = driver();
  if (d == nullptr) return;
  std::string uuid, error;
  CHECK_MSG(d->uuidOf(0, uuid, error), error);
  CHECK_EQ(uuid, std::string("GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"));
  CHECK_MSG(d->uuidOf(1, uuid, error), error);
  CHECK_EQ(uuid, std::string("GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf"));
  CHECK(!d->uuidOf(2, uuid, error));
  CHECK_CONTAINS(error, "device 2 does not exist");
  CHECK_EQ(currentDevice(), -1);  // no context was made for it
}

TEST(select_makes_the_device_current_on_the_calling_thread_only) {
  CudaDriver* d = driver();
  if (d == nullptr) return;
  int seen = -2, elsewhere = -2;
  std::string error;
  bool ok = false;
  std::thread builder([&] {
    ok = d->selectOnThisThread(1, error);
    seen = currentDevice();
  });
  builder.join();
  CHECK_MSG(ok, error);
  CHECK_EQ(seen, 1);
  std::thread([&] { elsewhere = currentDevice(); }).join();
  CHECK_EQ(elsewhere, -1);
  CHECK_EQ(currentDevice(), -1);
  CHECK(!d->selectOnThisThread(5, error));
  CHECK_CONTAINS(error, "device 5 does not exist");
}

TEST(a_driver_of_an_older_major_is_fatal_an_older_minor_a_warning) {
  bool fatal = false;
  std::string p = tbs::gpu::driverVersionProblem(11080, 12040, "the CUDA runtime libcudart.so.12", fatal);
  CHECK(fatal);
  CHECK_CONTAINS(p, "the CUDA driver is older than the library needs");
  CHECK_CONTAINS(p, "supports CUDA 11.8");
  CHECK_CONTAINS(p, "libcudart.so.12 needs CUDA 12.4");
  p = tbs::gpu::driverVersionProblem(12020, 12080, "the CUDA runtime x", fatal);
  CHECK(!fatal);
  CHECK_CONTAINS(p, "minor version compatibility");
  CHECK_EQ(tbs::gpu::driverVersionProblem(13000, 12080, "x", fatal), std::string(""));
  CHECK_EQ(tbs::gpu::driverVersionProblem(-1, 12080, "x", fatal), std::string(""));  // unknown: no claim
  CHECK_EQ(tbs::gpu::driverVersionProblem(12000, -1, "x", fatal), std::string(""));
  CHECK(!fatal);
}

TEST_MAIN()
