#include "cuda_device.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <vector>

namespace tbs::trt {
namespace {

std::string loadedPath(void* handle, std::string const& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

CudaRuntimeFact cudaRuntimeInProcess() {
  CudaRuntimeFact fact;
  char const* env = std::getenv("TBS_CUDART_LIB");
  bool const named = env != nullptr && *env != '\0';
  std::vector<std::string> names;
  if (named) names.push_back(env);
  else names = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"};
  void* handle = nullptr;
  std::string name;
  for (auto const& n : names) {
    // Named by the user: opened if need be. Otherwise only one already in the process.
    handle = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL | (named ? 0 : RTLD_NOLOAD));
    if (handle != nullptr) {
      name = n;
      break;
    }
  }
  if (handle == nullptr) return fact;
  fact.path = loadedPath(handle, name);
  auto fn = reinterpret_cast<int (*)(int*)>(dlsym(handle, "cudaRuntimeGetVersion"));
  int v = 0;
  if (fn != nullptr && fn(&v) == 0 && v > 0) fact.version = v;
  // A runtime opened here stays (TensorRT may be using it); dlclose of a NOLOAD handle only drops
  // the reference this call added.
  if (!named) dlclose(handle);
  return fact;
}

}  // namespace tbs::trt
