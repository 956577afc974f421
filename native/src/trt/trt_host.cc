#include "trt_host.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <iterator>
#include <mutex>

#include "adapter_api.h"
#include "lib_files.h"
#include "trt_version.h"

namespace tbs::trt {
namespace {

// The supported majors (native/trt-facts.json), newest first: with several installed, the newest
// major this build has an adapter for wins.
std::vector<int32_t> majorsNewestFirst() {
  std::vector<int32_t> m(std::begin(facts::kSupportedMajors), std::end(facts::kSupportedMajors));
  std::sort(m.rbegin(), m.rend());
  return m;
}

std::string env(char const* name) {
  char const* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string dlError() {
  char const* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown dlopen error");
}

std::string loadedPath(void* handle, std::string const& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

std::string dirOf(std::string const& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// The folder of the .node (the adapters are built next to it).
std::string addonDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void const*>(&addonDir), &info) != 0 && info.dli_fname != nullptr) {
    char resolved[PATH_MAX];
    return dirOf(realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname);
  }
  return ".";
}

// Preloads `path` so that libnvinfer's own dependency and dlopen lookups find it by soname.
// Returns false (and leaves it out of the report) when it cannot be loaded.
bool preload(std::string const& path, std::vector<LibraryFact>& out) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) h = dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL);
  if (h == nullptr) return false;  // never unloaded: TensorRT may hold on to it
  out.push_back({loadedPath(h, path), versionFromFileName(path)});
  return true;
}

// The CUDA runtime from TBS_TRT_LIB_DIR, before libnvinfer (which may need it).
void preloadCudaRuntime(std::string const& dir, std::vector<LibraryFact>& out) {
  for (auto const& path : librariesIn(dir, "libcudart.so")) {
    if (preload(path, out)) return;  // one runtime is enough (sorted: the plain soname first)
  }
}

// libnvinfer dlopens its builder resource libraries by name when it builds; preloaded, they are
// found without LD_LIBRARY_PATH. Only those of the library's own major.
void preloadBuilderResources(std::string const& dir, int32_t major, std::vector<LibraryFact>& out) {
  std::string const marker = ".so." + std::to_string(major);
  for (auto const& path : librariesIn(dir, "libnvinfer_builder_resource")) {
    size_t at = path.rfind(marker);
    if (at == std::string::npos) continue;
    char next = at + marker.size() < path.size() ? path[at + marker.size()] : '\0';
    if (next == '\0' || next == '.') preload(path, out);
  }
}

// Adapters stay loaded for the life of the process (their backends own TensorRT state).
AdapterApi const* loadAdapter(std::string const& path, std::string& error) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, AdapterApi const*>();  // never freed
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded->find(path);
  if (it != loaded->end()) return it->second;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    error = "cannot load the adapter " + path + ": " + dlError();
    return nullptr;
  }
  auto entry = reinterpret_cast<AdapterEntryFn>(dlsym(h, kAdapterEntry));
  if (entry == nullptr) {
    error = path + " is not a TensorRT adapter of this addon (no " + kAdapterEntry + ")";
    dlclose(h);
    return nullptr;
  }
  AdapterApi const* api = entry(kAdapterAbi);
  if (api == nullptr || api->makeBackend == nullptr) {
    error = "the adapter " + path +
            " belongs to another build of the addon (interface version differs); rebuild "
            "the addon (npm run build:native)";
    dlclose(h);
    return nullptr;
  }
  loaded->emplace(path, api);
  return api;
}

struct Selection {
  bool ok = false;
  std::string reason;
  LibraryFact library;
  AdapterFact adapter;
  AdapterApi const* api = nullptr;
  AdapterContext context;
  std::vector<LibraryFact> preloaded;
};

std::string adapterHint(int32_t major) {
  return "rebuild the addon with TENSORRT_ROOT listing a TensorRT " + std::to_string(major) +
         " install or header folder (several folders are separated by ':')";
}

// The TensorRT major whose libnvinfer this process has opened (0: none yet). Opening a library
// runs its static constructors, and they stay run after dlclose; two majors' constructors and
// CUDA state in one process are not something NVIDIA supports, so once one major was opened, no
// other is opened until the process ends.
std::mutex openedMu;
int32_t openedMajor = 0;

int32_t majorOpened() {
  std::lock_guard<std::mutex> lock(openedMu);
  return openedMajor;
}

void noteOpened(int32_t major) {
  std::lock_guard<std::mutex> lock(openedMu);
  if (openedMajor == 0) openedMajor = major;
}

std::string secondMajorRefused(int32_t wanted, std::string const& path) {
  return "TensorRT " + std::to_string(majorOpened()) + " is already loaded in this process, so " + path +
         (wanted > 0 ? " (TensorRT " + std::to_string(wanted) + ")" : std::string()) +
         " is not opened: a process never loads two TensorRT majors (restart the app to switch)";
}

bool hasAdapter(std::vector<AdapterFact> const& built, int32_t major) {
  for (auto const& a : built) {
    if (a.major == major) return true;
  }
  return false;
}

std::string adapterMajors(std::vector<AdapterFact> const& built) {
  std::string have;
  for (auto const& a : built) have += (have.empty() ? "" : ", ") + std::to_string(a.major);
  return have;
}

std::string noAdapterReason(TrtVersion v, std::string const& path, std::vector<AdapterFact> const& built) {
  std::string have = adapterMajors(built);
  return "TensorRT " + formatTrtVersion(v) + " found at " + path + ", but this addon was built without TensorRT " +
         std::to_string(v.major) + " headers" + (have.empty() ? "" : " (it has adapters for TensorRT " + have + ")") + "; " +
         adapterHint(v.major);
}

Selection select(std::vector<AdapterFact> const& built) {
  Selection s;
  std::string const libDir = env("TBS_TRT_LIB_DIR");
  std::string const nvinferOverride = env("TBS_NVINFER_LIB");
  std::string const parserOverride = env("TBS_NVONNXPARSER_LIB");
  std::string adapterDir = env("TBS_TRT_ADAPTER_DIR");
  if (adapterDir.empty()) adapterDir = addonDir();

  if (!libDir.empty()) preloadCudaRuntime(libDir, s.preloaded);

  // Only majors this build has an adapter for are looked for (newest first): a library of
  // another major is never opened, so TensorRT 10 is used when only 10 has an adapter even with
  // 11 installed beside it. A path given in TBS_NVINFER_LIB is judged by its file name
  // (libnvinfer.so.11.1.0) before it is opened, where the name says the release.
  std::vector<std::string> candidates;
  std::string notFound;
  std::string noAdapter;  // a library that was found but cannot be driven: the most useful reason
  if (!nvinferOverride.empty()) {
    TrtVersion named{};
    std::string text = versionFromFileName(nvinferOverride);
    bool knownMajor = parseTrtVersionText(text, named) || (!text.empty() && (named.major = std::atoi(text.c_str())) > 0);
    if (knownMajor && !hasAdapter(built, named.major)) {
      s.reason = "TBS_NVINFER_LIB=" + nvinferOverride + " is TensorRT " + text + " by its file name, and this addon " +
                 "was built without TensorRT " + std::to_string(named.major) + " headers (it has adapters for " + "TensorRT " +
                 adapterMajors(built) + "); it is not opened; " + adapterHint(named.major);
      return s;
    }
    if (knownMajor && majorOpened() != 0 && majorOpened() != named.major) {
      s.reason = secondMajorRefused(named.major, nvinferOverride);
      return s;
    }
    candidates.push_back(nvinferOverride);
  } else {
    for (int32_t m : majorsNewestFirst()) {
      if (!hasAdapter(built, m)) continue;
      std::string path = joinPath(libDir, "libnvinfer.so." + std::to_string(m));
      if (majorOpened() != 0 && majorOpened() != m) {
        // Said only when nothing of the loaded major can be used either.
        if (noAdapter.empty()) noAdapter = secondMajorRefused(m, path);
        continue;
      }
      candidates.push_back(path);
    }
  }

  for (auto const& candidate : candidates) {
    void* h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      notFound += (notFound.empty() ? "" : "; ") + dlError();
      continue;
    }
    std::string path = loadedPath(h, candidate);
    auto version = reinterpret_cast<int32_t (*)()>(dlsym(h, "getInferLibVersion"));
    if (version == nullptr) {
      if (noAdapter.empty()) noAdapter = path + " does not export getInferLibVersion: not a TensorRT library?";
      dlclose(h);
      continue;
    }
    int32_t encoded = version();
    TrtVersion v = decodeTrtVersion(encoded);
    if (majorOpened() != 0 && majorOpened() != v.major) {
      // Only reachable through a TBS_NVINFER_LIB whose name does not say its release.
      if (noAdapter.empty()) noAdapter = secondMajorRefused(v.major, path);
      dlclose(h);
      continue;
    }
    noteOpened(v.major);
    if (!hasAdapter(built, v.major)) {
      // Only reachable through TBS_NVINFER_LIB (or a library lying about its soname).
      if (noAdapter.empty()) noAdapter = noAdapterReason(v, path, built);
      dlclose(h);
      continue;
    }
    std::string adapterPath = joinPath(adapterDir, "libtbs_trt" + std::to_string(v.major) + ".so");
    std::string error;
    AdapterApi const* api = loadAdapter(adapterPath, error);
    if (api == nullptr) {
      if (noAdapter.empty()) noAdapter = "TensorRT " + formatTrtVersion(v) + " found at " + path + ", but " + error;
      dlclose(h);
      continue;
    }
    // The handle stays open: the adapter opens the same file again (RTLD_GLOBAL, as the ONNX
    // parser needs) and gets this very instance.
    if (!libDir.empty()) preloadBuilderResources(libDir, v.major, s.preloaded);
    s.ok = true;
    s.library = {path, formatTrtVersion(v)};
    s.api = api;
    s.adapter = {api->major, formatTrtVersion(api->headerVersion), adapterPath};
    s.context.nvinferPath = path;
    s.context.libVersion = encoded;
    s.context.onnxParserPath =
        !parserOverride.empty() ? parserOverride
                                : joinPath(libDir.empty() ? std::string() : dirOf(path), "libnvonnxparser.so." + std::to_string(v.major));
    return s;
  }
  if (!noAdapter.empty()) {
    s.reason = noAdapter;
  } else {
    s.reason = "TensorRT not found: " + notFound + " (install TensorRT " + adapterMajors(built) +
               ", or set TBS_TRT_LIB_DIR to the folder holding libnvinfer.so.*; this addon has adapters for TensorRT " +
               adapterMajors(built) + " only, and looks for no other major)";
  }
  return s;
}

BuildOutcome failedOutcome(std::string error) {
  BuildOutcome o;
  o.status = BuildOutcome::Status::kFailed;
  o.error = std::move(error);
  return o;
}

class HostBackend final : public Backend {
 public:
  explicit HostBackend(std::vector<AdapterFact> built) : built_(std::move(built)) {}

  BackendProbe probe() override { return probeTensorRt(built_); }

  std::string version() override {
    Backend* b = resolve();
    return b != nullptr ? b->version() : std::string();
  }

  GpuFact gpuFor(BuildRequest const& request) override {
    Backend* b = resolve();
    return b != nullptr ? b->gpuFor(request) : GpuFact{};
  }

  BuildOutcome build(BuildRequest const& request, ProgressSink& sink) override {
    Backend* b = resolve();
    if (b == nullptr) return failedOutcome(reason_);
    return b->build(request, sink);
  }

  bool buildRoutes(std::string& json, std::string& error) override {
    Backend* b = resolve();
    if (b == nullptr) {
      error = reason_;
      return false;
    }
    return b->buildRoutes(json, error);
  }

 private:
  // Once per backend object (one build): the library does not change under a running build.
  Backend* resolve() {
    if (resolved_) return backend_.get();
    resolved_ = true;
    if (built_.empty()) {
      reason_ = "this build of the addon has no TensorRT adapter (it was compiled without TensorRT headers); " + adapterHint(10);
      return nullptr;
    }
    Selection s = select(built_);
    if (!s.ok) {
      reason_ = s.reason;
      return nullptr;
    }
    backend_.reset(s.api->makeBackend(s.context));
    if (!backend_) reason_ = "the TensorRT " + std::to_string(s.adapter.major) + " adapter could not create a backend";
    return backend_.get();
  }

  std::vector<AdapterFact> built_;
  bool resolved_ = false;
  std::string reason_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace

std::vector<AdapterFact> parseAdapterList(std::string const& text) {
  std::vector<AdapterFact> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find_first_of(",;", at);
    std::string item = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    size_t colon = item.find(':');
    if (colon != std::string::npos) {
      AdapterFact a;
      a.major = std::atoi(item.substr(0, colon).c_str());
      a.headerVersion = item.substr(colon + 1);
      if (a.major > 0) out.push_back(a);
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

BackendProbe probeTensorRt(std::vector<AdapterFact> const& built) {
  BackendProbe p;
  p.name = "tensorrt";
  p.adapters = built;
  if (built.empty()) {
    p.reason = "this build of the addon has no TensorRT adapter (compiled without TensorRT headers); " + adapterHint(10);
    return p;
  }
  Selection s = select(built);
  p.preloaded = s.preloaded;
  if (!s.ok) {
    p.reason = s.reason;
    return p;
  }
  p.library = s.library;
  p.adapter = s.adapter;
  std::unique_ptr<Backend> backend(s.api->makeBackend(s.context));
  if (!backend) {
    p.reason = "the TensorRT " + std::to_string(s.adapter.major) + " adapter could not create a backend";
    return p;
  }
  BackendProbe a = backend->probe();
  a.name = "tensorrt";
  a.adapters = built;
  a.preloaded = s.preloaded;
  a.adapter = s.adapter;  // the host knows the adapter's file; the adapter only its headers
  if (a.library.path.empty()) a.library = s.library;
  return a;
}

std::unique_ptr<Backend> makeTensorRtHostBackend(std::vector<AdapterFact> const& built) { return std::make_unique<HostBackend>(built); }

}  // namespace tbs::trt
