#include "cuda_device.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace tbs::trt {
namespace {

// cudaDeviceAttr values, stable across CUDA 10..13 (driver_types.h).
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
// cudaDeviceProp grows between CUDA releases; `name` (char[256]) has been its first field in
// every release. A buffer far larger than any release's struct lets us read just the name
// without the header of the exact runtime that was found.
constexpr size_t kPropsBufferBytes = 64 * 1024;

std::string loadedPath(void* handle, std::string const& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

CudaRuntime* CudaRuntime::get(std::string& error) {
  static std::mutex mu;
  static CudaRuntime* loaded = nullptr;  // never freed: CUDA state lives for the process
  std::lock_guard<std::mutex> lock(mu);
  if (loaded != nullptr) return loaded;

  std::vector<std::string> names;
  char const* env = std::getenv("TBS_CUDART_LIB");
  bool explicitLib = env != nullptr && *env != '\0';
  if (explicitLib) names.push_back(env);
  else names = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};

  void* handle = nullptr;
  std::string tried;
  std::string name;
  // One already in the process first (preloaded from TBS_TRT_LIB_DIR, or TensorRT's own).
  for (auto const& n : names) {
    if ((handle = dlopen(n.c_str(), RTLD_NOW | RTLD_NOLOAD)) != nullptr) {
      name = n;
      break;
    }
  }
  for (size_t i = 0; handle == nullptr && i < names.size(); ++i) {
    handle = dlopen(names[i].c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      name = names[i];
    } else {
      char const* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e != nullptr ? e : names[i].c_str());
    }
  }
  if (handle == nullptr) {
    error = "CUDA runtime not found (" + tried + "); set TBS_TRT_LIB_DIR to a folder holding libcudart.so.* or TBS_CUDART_LIB";
    return nullptr;
  }
  auto* rt = new CudaRuntime();
  rt->handle_ = handle;
  rt->path_ = loadedPath(handle, name);
  rt->setDevice_ = reinterpret_cast<IntFn>(dlsym(handle, "cudaSetDevice"));
  rt->getDeviceCount_ = reinterpret_cast<IntPtrFn>(dlsym(handle, "cudaGetDeviceCount"));
  rt->runtimeVersion_ = reinterpret_cast<IntPtrFn>(dlsym(handle, "cudaRuntimeGetVersion"));
  rt->getAttribute_ = reinterpret_cast<AttrFn>(dlsym(handle, "cudaDeviceGetAttribute"));
  // CUDA 12 renamed the exported function (the header maps the old name onto _v2).
  rt->getProperties_ = reinterpret_cast<PropsFn>(dlsym(handle, "cudaGetDeviceProperties_v2"));
  if (rt->getProperties_ == nullptr) rt->getProperties_ = reinterpret_cast<PropsFn>(dlsym(handle, "cudaGetDeviceProperties"));
  rt->errorString_ = reinterpret_cast<ErrStrFn>(dlsym(handle, "cudaGetErrorString"));
  if (rt->setDevice_ == nullptr || rt->getDeviceCount_ == nullptr || rt->getAttribute_ == nullptr) {
    error = rt->path_ + " lacks cudaSetDevice / cudaGetDeviceCount / cudaDeviceGetAttribute: not a CUDA runtime?";
    dlclose(handle);
    delete rt;
    return nullptr;
  }
  loaded = rt;
  return loaded;
}

std::string CudaRuntime::errorText(int code) const {
  char const* s = errorString_ != nullptr ? errorString_(code) : nullptr;
  return "CUDA error " + std::to_string(code) + (s != nullptr ? std::string(" (") + s + ")" : std::string());
}

std::string CudaRuntime::version() const {
  int v = 0;
  if (runtimeVersion_ == nullptr || runtimeVersion_(&v) != 0 || v <= 0) return {};
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

bool CudaRuntime::setDevice(int32_t device, std::string& error) {
  int count = 0;
  int rc = getDeviceCount_(&count);
  if (rc != 0) {
    error = "cannot count CUDA devices: " + errorText(rc);
    return false;
  }
  if (device < 0 || device >= count) {
    error = "device " + std::to_string(device) + " does not exist: this machine has " + std::to_string(count) +
            " CUDA device" + (count == 1 ? "" : "s") + (count > 0 ? " (0.." + std::to_string(count - 1) + ")" : "");
    return false;
  }
  rc = setDevice_(device);
  if (rc != 0) {
    error = "cannot select CUDA device " + std::to_string(device) + ": " + errorText(rc);
    return false;
  }
  return true;
}

bool CudaRuntime::describe(int32_t device, GpuFact& out, std::string& error) {
  int major = 0, minor = 0;
  int rc = getAttribute_(&major, kAttrComputeCapabilityMajor, device);
  if (rc == 0) rc = getAttribute_(&minor, kAttrComputeCapabilityMinor, device);
  if (rc != 0) {
    error = "cannot read the compute capability of CUDA device " + std::to_string(device) + ": " + errorText(rc);
    return false;
  }
  out.device = device;
  out.computeCapability = std::to_string(major) + "." + std::to_string(minor);
  out.name.clear();
  if (getProperties_ != nullptr) {
    std::vector<char> props(kPropsBufferBytes, '\0');
    if (getProperties_(props.data(), device) == 0) out.name.assign(props.data(), strnlen(props.data(), 256));
  }
  return true;
}

}  // namespace tbs::trt
