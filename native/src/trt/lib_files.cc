#include "lib_files.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <memory>

namespace tbs::trt {

std::string versionFromFileName(std::string const& path) {
  std::string name = path;
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) != nullptr) name = resolved;
  size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  size_t so = name.find(".so.");
  if (so == std::string::npos) return {};
  std::string v = name.substr(so + 4);
  if (v.empty() || v.find_first_not_of("0123456789.") != std::string::npos) return {};
  return v;
}

std::vector<std::string> librariesIn(std::string const& dir, std::string const& prefix) {
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  if (!d) return out;
  while (dirent* e = readdir(d.get())) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0 || name.find(".so") == std::string::npos) continue;
    struct stat st{};
    std::string full = joinPath(dir, name);
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(full);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string joinPath(std::string const& dir, std::string const& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace tbs::trt
