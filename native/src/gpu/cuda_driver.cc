#include "cuda_driver.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "shared_library.h"

namespace tbs::gpu {
namespace {

constexpr int kCudaSuccess = 0;  // CUresult
// CUdevice_attribute values, unchanged since CUDA 3.
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
// cuDeviceGetPCIBusId writes at most 13 characters; NVML's buffer size is 32.
constexpr int kBusIdBytes = 32;
constexpr int kNameBytes = 256;

}  // namespace

CudaDriver* CudaDriver::get(std::string& error) {
  static std::mutex mu;
  static CudaDriver* loaded = nullptr;  // never freed: CUDA's state lives as long as the process
  std::lock_guard<std::mutex> lock(mu);
  if (loaded != nullptr) return loaded;
  char const* env = std::getenv("TBS_CUDA_DRIVER_LIB");
  std::vector<std::string> names;
  if (env != nullptr && *env != '\0') names.push_back(env);
  else names.push_back("libcuda.so.1");
  std::string tried;
  SharedLibrary lib = SharedLibrary::openFirst(names, tried);
  if (!lib) {
    error = "the CUDA driver library was not found (" + tried + "); is the NVIDIA driver installed?";
    return nullptr;
  }
  auto* d = new CudaDriver();
  d->path_ = lib.name();
  d->init_ = lib.function<InitFn>("cuInit");
  d->driverVersion_ = lib.function<IntPtrFn>("cuDriverGetVersion");
  d->deviceCount_ = lib.function<IntPtrFn>("cuDeviceGetCount");
  d->deviceGet_ = lib.function<DeviceGetFn>("cuDeviceGet");
  d->busId_ = lib.function<BusIdFn>("cuDeviceGetPCIBusId");
  d->name_ = lib.function<NameFn>("cuDeviceGetName");
  d->attribute_ = lib.function<AttrFn>("cuDeviceGetAttribute");
  // Exported under these names since CUDA 7 (cuda.h maps no _v2 onto them).
  d->retain_ = lib.function<RetainFn>("cuDevicePrimaryCtxRetain");
  d->setCurrent_ = lib.function<SetCurrentFn>("cuCtxSetCurrent");
  d->errorString_ = lib.function<ErrorStringFn>("cuGetErrorString");
  d->uuid_ = lib.function<UuidFn>("cuDeviceGetUuid_v2");
  if (d->uuid_ == nullptr) d->uuid_ = lib.function<UuidFn>("cuDeviceGetUuid");
  if (d->init_ == nullptr || d->deviceGet_ == nullptr || d->busId_ == nullptr) {
    error = lib.name() + " lacks cuInit / cuDeviceGet / cuDeviceGetPCIBusId: not the CUDA driver?";
    delete d;
    return nullptr;
  }
  lib.leak();
  loaded = d;
  return loaded;
}

std::string CudaDriver::text(int rc) const {
  char const* s = nullptr;
  if (errorString_ != nullptr && errorString_(rc, &s) == kCudaSuccess && s != nullptr) {
    return std::string(s) + " (CUDA error " + std::to_string(rc) + ")";
  }
  return "CUDA error " + std::to_string(rc);
}

int32_t CudaDriver::version() const {
  int v = 0;
  if (driverVersion_ == nullptr || driverVersion_(&v) != kCudaSuccess || v <= 0) return -1;
  return v;
}

bool CudaDriver::start(std::string& error) const {
  int rc = init_(0);  // idempotent; every CUDA runtime makes the same call
  if (rc != kCudaSuccess) {
    error = "the CUDA driver did not start: " + text(rc);
    return false;
  }
  return true;
}

bool CudaDriver::device(int32_t ordinal, int& out, std::string& error, bool sayCount) const {
  if (!start(error)) return false;
  int count = -1;
  if (sayCount && deviceCount_ != nullptr && deviceCount_(&count) == kCudaSuccess && (ordinal < 0 || ordinal >= count)) {
    error = "device " + std::to_string(ordinal) + " does not exist: this machine has " + std::to_string(count) + " CUDA device" +
            (count == 1 ? "" : "s") + (count > 0 ? " (0.." + std::to_string(count - 1) + ")" : "");
    return false;
  }
  int rc = deviceGet_(&out, ordinal);
  if (rc != kCudaSuccess) {
    error = "no CUDA device " + std::to_string(ordinal) + ": " + text(rc);
    return false;
  }
  return true;
}

bool CudaDriver::busIdOf(int32_t ordinal, std::string& out, std::string& error) const {
  int dev = 0;
  if (!device(ordinal, dev, error, false)) return false;
  char buf[kBusIdBytes] = {};
  int rc = busId_(buf, kBusIdBytes, dev);
  if (rc != kCudaSuccess) {
    error = "the CUDA driver did not name the PCI bus of device " + std::to_string(ordinal) + ": " + text(rc);
    return false;
  }
  out = buf;
  return true;
}

bool CudaDriver::describe(int32_t ordinal, std::string& name, std::string& computeCapability, std::string& error) const {
  if (name_ == nullptr || attribute_ == nullptr) {
    error = path_ + " lacks cuDeviceGetName / cuDeviceGetAttribute";
    return false;
  }
  int dev = 0;
  if (!device(ordinal, dev, error, true)) return false;
  int major = 0, minor = 0;
  int rc = attribute_(&major, kAttrComputeCapabilityMajor, dev);
  if (rc == kCudaSuccess) rc = attribute_(&minor, kAttrComputeCapabilityMinor, dev);
  if (rc != kCudaSuccess) {
    error = "cannot read the compute capability of CUDA device " + std::to_string(ordinal) + ": " + text(rc);
    return false;
  }
  char buf[kNameBytes] = {};
  rc = name_(buf, kNameBytes - 1, dev);
  name = rc == kCudaSuccess ? std::string(buf) : std::string();
  computeCapability = std::to_string(major) + "." + std::to_string(minor);
  return true;
}

bool CudaDriver::uuidOf(int32_t ordinal, std::string& out, std::string& error) const {
  if (uuid_ == nullptr) {
    error = path_ + " lacks cuDeviceGetUuid";
    return false;
  }
  int dev = 0;
  if (!device(ordinal, dev, error, true)) return false;
  unsigned char bytes[16] = {};
  int rc = uuid_(bytes, dev);
  if (rc != kCudaSuccess) {
    error = "the CUDA driver did not give the UUID of device " + std::to_string(ordinal) + ": " + text(rc);
    return false;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2],
                bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14],
                bytes[15]);
  out = buf;
  return true;
}

bool CudaDriver::selectOnThisThread(int32_t ordinal, std::string& error) {
  if (retain_ == nullptr || setCurrent_ == nullptr) {
    error = path_ + " lacks cuDevicePrimaryCtxRetain / cuCtxSetCurrent";
    return false;
  }
  int dev = 0;
  if (!device(ordinal, dev, error, true)) return false;
  void* ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = primary_.find(ordinal);
    if (it != primary_.end()) {
      ctx = it->second;
    } else {
      int rc = retain_(&ctx, dev);
      if (rc != kCudaSuccess || ctx == nullptr) {
        error = "cannot start CUDA device " + std::to_string(ordinal) + ": " + text(rc);
        return false;
      }
      primary_[ordinal] = ctx;
    }
  }
  int rc = setCurrent_(ctx);
  if (rc != kCudaSuccess) {
    error = "cannot make CUDA device " + std::to_string(ordinal) + " current: " + text(rc);
    return false;
  }
  return true;
}

std::string cudaVersionText(int32_t encoded) {
  if (encoded <= 0) return {};
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
}

std::string driverVersionProblem(int32_t driver, int32_t runtime, std::string const& runtimeName, bool& fatal) {
  fatal = false;
  if (driver <= 0 || runtime <= 0 || driver >= runtime) return {};
  std::string d = cudaVersionText(driver), r = cudaVersionText(runtime);
  if (driver / 1000 < runtime / 1000) {
    fatal = true;
    return "the CUDA driver is older than the library needs: the installed NVIDIA driver supports CUDA " + d + ", and " + runtimeName +
           " needs CUDA " + r + " (a CUDA " + std::to_string(runtime / 1000) +
           ".x driver at least); update the NVIDIA driver, or use the TensorRT build for CUDA " + std::to_string(driver / 1000);
  }
  return "the CUDA driver (CUDA " + d + ") is older than " + runtimeName + " (CUDA " + r +
         "); it runs through CUDA's minor version compatibility, but features that need the newer driver (PTX JIT "
         "of newer code) may fail";
}

}  // namespace tbs::gpu
