#include "build_routes_cache.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "../core/atomic_file.h"

namespace tbs::trt {
namespace {

std::string env(char const* name) {
  char const* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string stateDir() {
  if (std::string d = env("TBS_STATE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_STATE_HOME"); !d.empty()) return d + "/trt-build-studio";
  if (std::string h = env("HOME"); !h.empty()) return h + "/.local/state/trt-build-studio";
  return {};
}

// mkdir -p; true when `dir` exists as a folder afterwards.
bool makeDirs(std::string const& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at == dir.size() || dir[at] == '/') {
      std::string part = dir.substr(0, at);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st{};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// FNV-1a, 64 bits: a file name, not a security boundary (the first line holds the whole key).
std::string hashHex(std::string const& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::string RoutesCacheKey::line() const {
  // One line: no newline can come from a path or a GPU name into it.
  std::string safeGpu = gpu, safeLib = library;
  for (auto* s : {&safeGpu, &safeLib}) {
    for (char& c : *s) {
      if (c == '\n' || c == '\r') c = ' ';
    }
  }
  return "tbs-build-routes 1\t" + safeLib + "\t" + std::to_string(size) + "\t" + std::to_string(mtimeNs) + "\t" + safeGpu;
}

bool routesCacheKey(std::string const& libraryPath, std::string const& gpu, RoutesCacheKey& out, std::string& error) {
  char resolved[PATH_MAX];
  std::string real = ::realpath(libraryPath.c_str(), resolved) != nullptr ? std::string(resolved) : libraryPath;
  struct stat st{};
  if (::stat(real.c_str(), &st) != 0) {
    error = "cannot examine " + real + ": " + std::strerror(errno);
    return false;
  }
  out.library = real;
  out.size = static_cast<int64_t>(st.st_size);
  out.mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  out.gpu = gpu;
  return true;
}

std::string routesCacheFile(RoutesCacheKey const& key) {
  std::string dir = stateDir();
  if (dir.empty()) return {};
  return dir + "/build-routes/" + hashHex(key.line()) + ".json";
}

bool readCachedRoutes(RoutesCacheKey const& key, std::string& json) {
  std::string path = routesCacheFile(key);
  if (path.empty()) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string first;
  if (!std::getline(in, first) || first != key.line()) return false;
  std::ostringstream rest;
  rest << in.rdbuf();
  // An empty list is an answer too (a TensorRT build without routes): kept and reported as such,
  // never read again from the library.
  json = rest.str();
  return true;
}

bool writeCachedRoutes(RoutesCacheKey const& key, std::string const& json, std::string& error) {
  std::string path = routesCacheFile(key);
  if (path.empty()) {
    error = "no folder for the build-route cache (set TBS_STATE_DIR or HOME)";
    return false;
  }
  std::string dir = path.substr(0, path.rfind('/'));
  if (!makeDirs(dir)) {
    error = "cannot create " + dir + ": " + std::strerror(errno);
    return false;
  }
  AtomicWriteResult r = atomicWriteFile(path, key.line() + "\n" + json);
  if (!r.ok) error = r.error;
  return r.ok;
}

}  // namespace tbs::trt
