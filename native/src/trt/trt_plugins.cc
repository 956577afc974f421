#include "trt_plugins.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <set>

#include "trt_logger.h"

namespace tbs::trt {
namespace {

std::mutex& pluginMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

std::string dlError() {
  char const* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

bool isRegularFile(std::string const& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string standardPluginLibraryPath(std::string const& nvinferPath, int32_t major) {
  char const* env = std::getenv("TBS_NVINFER_PLUGIN_LIB");
  if (env != nullptr && *env != '\0') return env;
  std::string name = "libnvinfer_plugin.so." + std::to_string(major);
  size_t slash = nvinferPath.rfind('/');
  return slash == std::string::npos ? name : nvinferPath.substr(0, slash + 1) + name;
}

StandardPlugins initStandardPlugins(std::string const& nvinferPath, nvinfer1::ILogger& logger) {
  static StandardPlugins done;  // the successful setup, once per process
  std::lock_guard<std::mutex> lock(pluginMutex());
  if (done.initialized) return done;
  StandardPlugins s;
  s.library = standardPluginLibraryPath(nvinferPath, NV_TENSORRT_MAJOR);
  // RTLD_GLOBAL: the plugin library's creators are reached by other plugin libraries, as with
  // trtexec, which keeps it loaded for the whole run; never closed.
  void* h = dlopen(s.library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    s.error = "cannot load the standard plugin library " + s.library + ": " + dlError() + " (set TBS_NVINFER_PLUGIN_LIB to its path)";
    return s;
  }
  using InitFn = bool (*)(void*, char const*);
  auto init = reinterpret_cast<InitFn>(dlsym(h, "initLibNvInferPlugins"));
  if (init == nullptr) {
    s.error = s.library + " has no initLibNvInferPlugins: it is not TensorRT's plugin library";
    return s;
  }
  if (!init(static_cast<void*>(&logger), "")) {
    s.error = "initLibNvInferPlugins in " + s.library + " failed" +
              (Logger::instance().lastError().empty() ? "" : ": " + Logger::instance().lastError());
    return s;
  }
  s.initialized = true;
  done = s;
  return s;
}

int32_t registeredPluginCreators() {
  using RegistryFn = nvinfer1::IPluginRegistry* (*)() noexcept;
  // libnvinfer is loaded RTLD_GLOBAL (trt_loader.cc), so its export is in the global scope.
  auto fn = reinterpret_cast<RegistryFn>(dlsym(RTLD_DEFAULT, "getPluginRegistry"));
  nvinfer1::IPluginRegistry* registry = fn != nullptr ? fn() : nullptr;
  if (registry == nullptr) return -1;
  int32_t n = 0;
  registry->getAllCreators(&n);
  return n;
}

// A library loaded once stays loaded (its creators are registered for the process); loading it
// again for the next build would register them twice.
std::set<std::string>& loadedOnce() {
  static auto* loaded = new std::set<std::string>();
  return *loaded;
}

bool checkFile(std::string const& path, char const* what, std::string& error) {
  if (isRegularFile(path)) return true;
  error = std::string(what) + " plugin library not found or not a file: " + path;
  return false;
}

bool loadStaticPlugins(BuildRequest const& request, std::vector<std::string>& log, std::string& error) {
  std::lock_guard<std::mutex> lock(pluginMutex());
  for (auto const& path : request.staticPlugins) {
    if (!checkFile(path, "static", error)) return false;
    if (loadedOnce().count("static:" + path) != 0) continue;
    // trtexec's DynamicLibrary: RTLD_LAZY, so a library whose unused code refers to symbols
    // nothing provides loads as it does there; never closed (its creators stay registered).
    if (dlopen(path.c_str(), RTLD_LAZY) == nullptr) {
      error = "cannot load the static plugin library " + path + ": " + dlError();
      return false;
    }
    loadedOnce().insert("static:" + path);
    log.push_back("Loaded static plugin library " + path);
  }
  return true;
}

bool loadDynamicPlugins(nvinfer1::IPluginRegistry& registry, std::vector<std::string> const& paths, char const* what,
                        std::vector<std::string>& log, std::string& error) {
  std::lock_guard<std::mutex> lock(pluginMutex());
  for (auto const& path : paths) {
    if (!checkFile(path, what, error)) return false;
    if (loadedOnce().count("dynamic:" + path) != 0) continue;
    if (registry.loadLibrary(path.c_str()) == nullptr) {
      std::string last = Logger::instance().lastError();
      error = "TensorRT could not load the " + std::string(what) + " plugin library " + path + " (IPluginRegistry::loadLibrary)" +
              (last.empty() ? "" : ": " + last);
      return false;
    }
    loadedOnce().insert("dynamic:" + path);
    log.push_back("Loaded " + std::string(what) + " plugin library " + path);
  }
  return true;
}

bool checkPluginsToSerialize(std::vector<std::string> const& paths, std::string& error) {
  for (auto const& path : paths) {
    if (!checkFile(path, "serialized", error)) return false;
  }
  return true;
}

void setPluginsToSerialize(nvinfer1::IBuilderConfig& config, std::vector<std::string> const& paths) {
  if (paths.empty()) return;
  std::vector<char const*> list;
  for (auto const& p : paths) list.push_back(p.c_str());
  config.setPluginsToSerialize(list.data(), static_cast<int32_t>(list.size()));
}

std::string missingPluginAdvice(StandardPlugins const& standard) {
  std::string have = standard.initialized ? "the standard plugins of " + standard.library + " are registered (" +
                                                std::to_string(registeredPluginCreators()) + " plugin creators)"
                                          : "the standard plugins are NOT loaded: " + standard.error;
  return "This op needs a TensorRT plugin that is not registered; " + have +
         ". Supply the plugin library that registers it: dynamicPlugins or staticPlugins "
         "(build --dynamic-plugins <lib.so>, trtexec --dynamicPlugins=<lib.so>).";
}

bool isMissingPluginError(int code, std::string const& description) {
  if (code != static_cast<int>(nvonnxparser::ErrorCode::kUNSUPPORTED_NODE) &&
      code != static_cast<int>(nvonnxparser::ErrorCode::kINVALID_NODE)) {
    return false;
  }
  std::string lower = description;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("plugin not found") != std::string::npos || lower.find("was not found in the plugin registry") != std::string::npos;
}

}  // namespace tbs::trt
