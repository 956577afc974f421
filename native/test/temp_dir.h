// Test support: a per-test scratch directory and small file helpers, shared by the core tests and
// the TensorRT backend tests (native/test/trt).
#pragma once

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tbs_test {

inline bool fileExists(std::string const& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0;
}

// A fresh directory /tmp/<prefix>-XXXXXX, removed with everything in it at the end. The prefix
// only tells whose directory a leftover is (after a crash).
struct TempDir {
  std::string path;
  explicit TempDir(std::string const& prefix = "tbs-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    if (mkdtemp(&tmpl[0]) == nullptr) {
      // Without its directory no test here means anything; never fall back to a shared one.
      std::perror(("mkdtemp " + tmpl).c_str());
      std::abort();
    }
    path = tmpl;
  }
  TempDir(TempDir const&) = delete;
  TempDir& operator=(TempDir const&) = delete;
  ~TempDir() {
    // Depth first, without following links; a name that cannot be removed does not stop the rest.
    auto removeOne = [](char const* p, struct stat const*, int, struct FTW*) {
      std::remove(p);
      return 0;
    };
    nftw(path.c_str(), removeOne, 16, FTW_DEPTH | FTW_PHYS);
  }
  std::string file(std::string const& name) const { return path + "/" + name; }
  bool has(std::string const& name) const { return fileExists(file(name)); }
  // Names in the directory (not "." and ".."), sorted so tests can compare whole listings.
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
      }
      closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

inline std::string readFile(std::string const& p) {
  std::string out;
  if (FILE* f = std::fopen(p.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

}  // namespace tbs_test
