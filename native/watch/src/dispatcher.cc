// libtbs_watch.so — the LD_PRELOAD entry of `trt-build-studio watch` for native programs. It
// includes no TensorRT header: it only intercepts TensorRT's builder factory, asks the real
// library its version, and hands each new builder to the part compiled against that major's
// headers (libtbs_watch<major>.so, beside this file), which attaches the monitor to its builds.
//
// Two ways a program reaches the factory, both covered:
//   - it links libnvinfer: its call to createInferBuilder_INTERNAL binds to this library (preloaded
//     objects come first in the lookup order), which calls the real one via dlsym(RTLD_NEXT, ...);
//   - it dlopens libnvinfer and dlsyms the factory (ONNX Runtime's provider): dlsym is interposed
//     here and answers our factory for that name, remembering the real one.
// Without TBS_WATCH_SOCKET (watch not running) every path hands the program exactly what TensorRT
// hands it. Nothing here may disturb the program: a failure prints one warning (stderr) and the
// build runs unwatched.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <dlfcn.h>
#include <unistd.h>

#include "watch_api.h"

namespace {

using DlsymFn = void* (*)(void*, char const*) noexcept;  // noexcept: lets dlsym below jump to it
using FactoryFn = void* (*)(void*, int32_t);
using VersionFn = int32_t (*)();

std::atomic<bool> warned{false};
void warnOnce(std::string const& message) {
  if (warned.exchange(true)) return;
  std::string line = "trt-build-studio: " + message + " (the build goes on unwatched)\n";
  ssize_t ignored = ::write(2, line.data(), line.size());
  (void)ignored;
}

bool watching() {
  char const* s = std::getenv("TBS_WATCH_SOCKET");
  return s != nullptr && *s != '\0';
}

// The real dlsym: glibc 2.34 moved it into libc under a new version; older ones have 2.2.5.
DlsymFn realDlsym() {
  static DlsymFn fn = [] {
    auto f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
    if (f == nullptr) f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
    return f;
  }();
  return fn;
}

// The real factory a dlopen'ing program looked up (set by the dlsym hook).
std::atomic<FactoryFn> dlsymFactory{nullptr};

// The attach function of libtbs_watch<major>.so for the library that owns `factory`, loaded once;
// null (with the reason warned) when it cannot be.
tbs_watch_attach_fn attachFor(FactoryFn factory) {
  static std::mutex mu;
  static tbs_watch_attach_fn attach = nullptr;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (tried) return attach;
  tried = true;
  Dl_info lib{};
  if (dladdr(reinterpret_cast<void*>(factory), &lib) == 0 || lib.dli_fname == nullptr) {
    warnOnce("could not attach: cannot tell which library holds createInferBuilder_INTERNAL");
    return nullptr;
  }
  void* h = dlopen(lib.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  auto getVersion = h ? reinterpret_cast<VersionFn>(realDlsym()(h, "getInferLibVersion")) : nullptr;
  if (getVersion == nullptr) {
    warnOnce(std::string("could not attach: ") + lib.dli_fname + " has no getInferLibVersion");
    return nullptr;
  }
  int32_t version = getVersion();
  int major = version / 10000;
  if (major != 10 && major != 11) {
    warnOnce("could not attach: TensorRT " + std::to_string(version) + " (" + lib.dli_fname +
             ") is not a major this watch supports (10, 11)");
    return nullptr;
  }
  // The per-major part sits beside this library (build/native, or the package's native folder).
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&attachFor), &self);
  std::string dir = self.dli_fname ? self.dli_fname : "";
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  std::string path = dir + "libtbs_watch" + std::to_string(major) + ".so";
  void* part = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (part == nullptr) {
    char const* err = dlerror();
    warnOnce("could not attach to TensorRT " + std::to_string(major) + ": " + (err ? err : path));
    return nullptr;
  }
  attach = reinterpret_cast<tbs_watch_attach_fn>(realDlsym()(part, "tbs_watch_attach"));
  if (attach == nullptr) warnOnce("could not attach: " + path + " has no tbs_watch_attach");
  return attach;
}

int32_t versionOf(FactoryFn factory) {
  Dl_info lib{};
  if (dladdr(reinterpret_cast<void*>(factory), &lib) == 0 || lib.dli_fname == nullptr) return 0;
  void* h = dlopen(lib.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  auto getVersion = h ? reinterpret_cast<VersionFn>(realDlsym()(h, "getInferLibVersion")) : nullptr;
  return getVersion ? getVersion() : 0;
}

void* makeBuilder(FactoryFn real, void* logger, int32_t version) {
  void* builder = real(logger, version);
  if (builder == nullptr || !watching()) return builder;
  tbs_watch_attach_fn attach = attachFor(real);
  if (attach == nullptr) return builder;
  char why[256] = {0};
  if (attach(builder, versionOf(real), why, sizeof why) != 0) warnOnce(std::string("could not attach: ") + why);
  return builder;
}

// The factory handed to a program that dlsym'ed it: the real one is the one it asked for.
extern "C" void* tbsWatchDlsymFactory(void* logger, int32_t version) noexcept {
  FactoryFn real = dlsymFactory.load();
  return real ? makeBuilder(real, logger, version) : nullptr;
}

// The slow path of the dlsym hook, out of line so that the fast path below is a plain tail call.
__attribute__((noinline)) void* factoryLookup(void* handle, char const* name) {
  void* found = realDlsym()(handle, name);
  if (found == nullptr || found == reinterpret_cast<void*>(&tbsWatchDlsymFactory) || !watching()) return found;
  Dl_info info{};
  Dl_info self{};
  // Our own exported factory (RTLD_DEFAULT finds it first) already wraps.
  if (dladdr(found, &info) != 0 && dladdr(reinterpret_cast<void*>(&factoryLookup), &self) != 0 && info.dli_fbase == self.dli_fbase) {
    return found;
  }
  FactoryFn expected = nullptr;
  if (!dlsymFactory.compare_exchange_strong(expected, reinterpret_cast<FactoryFn>(found)) &&
      expected != reinterpret_cast<FactoryFn>(found)) {
    warnOnce("a second TensorRT library in this process is not watched");
    return found;
  }
  return reinterpret_cast<void*>(&tbsWatchDlsymFactory);
}

}  // namespace

extern "C" {

// The program linked libnvinfer: this definition comes first.
__attribute__((visibility("default"))) void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
  static FactoryFn real = reinterpret_cast<FactoryFn>(realDlsym() ? realDlsym()(RTLD_NEXT, "createInferBuilder_INTERNAL") : nullptr);
  if (real == nullptr) {
    FactoryFn viaDlsym = dlsymFactory.load();
    if (viaDlsym != nullptr) return makeBuilder(viaDlsym, logger, version);
    warnOnce("createInferBuilder_INTERNAL: no TensorRT library after the watch shim");
    return nullptr;
  }
  return makeBuilder(real, logger, version);
}

// glibc's dlsym finds RTLD_NEXT relative to its caller's return address: every name but the
// factory must reach it by a tail call (a jump), so that the caller it sees is the program's code,
// not this library. The compiler emits one for this shape (tested: watch_dispatch checks
// dlsym(RTLD_NEXT, "dlsym") from a program).
__attribute__((visibility("default"))) void* dlsym(void* handle, char const* name) noexcept {
  if (name[0] == 'c' && std::strcmp(name, "createInferBuilder_INTERNAL") == 0) return factoryLookup(handle, name);
  return realDlsym()(handle, name);
}

}  // extern "C"
