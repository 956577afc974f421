#include "cache_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "atomic_file.h"
#include "file_lock.h"

namespace tbs {
namespace {

std::string osError(int err) { return std::strerror(err); }

std::string parentDir(std::string const& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string baseName(std::string const& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

char const* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string notRegular(std::string const& path, bool symlink, mode_t mode) {
  return path + (symlink ? " is a symbolic link to " : " is ") + kindOf(mode) + ", not a regular file";
}

std::string tooLarge(std::string const& path, int64_t size, int64_t maxBytes) {
  return path + " is " + std::to_string(size) + " bytes, above the " + std::to_string(maxBytes) +
         "-byte limit for a timing cache (is it the right file?)";
}

// The path a save must update: a symlinked cache keeps its link and has its target updated
// (rename(2) onto the link itself would replace the link with a plain file).
std::string saveTarget(std::string const& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;  // dangling: readCacheFile reports it
  std::string out = real;
  std::free(real);
  return out;
}

bool isPendingName(std::string const& name, std::string const& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  // "<pid>-<n>", digits only, so temp files ("...-<n>.tmp-...") and ".rejected" copies never match.
  size_t i = prefix.size();
  size_t digits = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i, ++digits;
  if (digits == 0 || i >= name.size() || name[i] != '-') return false;
  ++i;
  digits = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i, ++digits;
  return digits > 0 && i == name.size();
}

bool pathExists(std::string const& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0;
}

// A new sidecar name that no other process can pick: only this pid creates "<pid>-" names, the
// counter is per process, and names left by a dead process with the same pid are skipped.
std::string newSidecarPath(std::string const& target) {
  static std::atomic<uint64_t> counter{0};
  std::string stem = target + ".pending-" + std::to_string(::getpid()) + "-";
  for (;;) {
    std::string p = stem + std::to_string(counter.fetch_add(1));
    if (!pathExists(p)) return p;
  }
}

void addNote(std::string& into, std::string const& text) {
  if (text.empty()) return;
  into += (into.empty() ? "" : "; ") + text;
}

// Keeps a damaged cache beside it before it is replaced: a hard link (no copy, atomic, fails if
// the name is taken), else a copy of the bytes read under the lock.
std::string keepCorruptCopy(std::string const& target, std::string const& bytes, std::string& warning) {
  for (int n = 0; n < 1000; ++n) {
    std::string copy = target + (n == 0 ? ".corrupt" : ".corrupt-" + std::to_string(n));
    if (::link(target.c_str(), copy.c_str()) == 0) return copy;
    if (errno == EEXIST) continue;
    if (pathExists(copy)) continue;
    AtomicWriteResult w = atomicWriteFile(copy, bytes);
    if (w.ok) return copy;
    addNote(warning, "could not keep a copy of the damaged cache: " + w.error);
    return {};
  }
  addNote(warning, "could not keep a copy of the damaged cache: 1000 copies exist already");
  return {};
}

}  // namespace

CacheFileRead readCacheFile(std::string const& path, int64_t maxBytes) {
  CacheFileRead r;
  struct stat lst{};
  if (::lstat(path.c_str(), &lst) != 0) {
    if (errno == ENOENT) return r;
    r.state = CacheFileRead::State::kError;
    r.error = "cannot read " + path + " (" + osError(errno) + ")";
    return r;
  }
  r.symlink = S_ISLNK(lst.st_mode);
  r.state = CacheFileRead::State::kError;
  // stat before open: opening a device can have side effects (a tape rewinds), so refuse it by
  // its type first; fstat after open closes the race with a file swapped in between.
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    r.error =
        r.symlink && err == ENOENT ? path + " is a symbolic link to a missing file" : "cannot read " + path + " (" + osError(err) + ")";
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = notRegular(path, r.symlink, st.st_mode);
    return r;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && !r.symlink) {  // removed since the stat: as if absent
      r.state = CacheFileRead::State::kAbsent;
      return r;
    }
    r.error = "cannot open " + path + " (" + osError(err) + ")";
    return r;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) {
    r.error = "cannot read " + path + " (" + osError(errno) + ")";
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = notRegular(path, r.symlink, st.st_mode);
    return r;
  }
  if (st.st_size > maxBytes) {
    r.error = tooLarge(path, st.st_size, maxBytes);
    return r;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string bytes;
  try {
    bytes.reserve(static_cast<size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        r.error = "cannot read " + path + " (" + osError(errno) + ")";
        return r;
      }
      if (n == 0) break;
      if (static_cast<int64_t>(bytes.size()) + n > maxBytes) {  // grew while being read
        r.error = tooLarge(path, static_cast<int64_t>(bytes.size()) + n, maxBytes);
        return r;
      }
      bytes.append(buf, static_cast<size_t>(n));
    }
  } catch (std::bad_alloc const&) {
    r.error = "not enough memory to read " + path + " (" + std::to_string(st.st_size) + " bytes)";
    return r;
  }
  r.state = CacheFileRead::State::kRead;
  r.bytes = std::move(bytes);
  return r;
}

std::vector<std::string> listPendingCacheFiles(std::string const& cachePath) {
  std::vector<std::string> out;
  std::string dir = parentDir(cachePath);
  std::string prefix = baseName(cachePath) + ".pending-";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (isPendingName(name, prefix)) out.push_back(dir + "/" + name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

int cacheLockTimeoutMs(int fallbackMs) {
  char const* v = std::getenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS");
  if (v == nullptr || *v == '\0') return fallbackMs;
  char* end = nullptr;
  errno = 0;
  long ms = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || ms < 0 || ms > INT_MAX) return fallbackMs;
  return static_cast<int>(ms);
}

CacheSaveResult saveCache(std::string const& cachePath, std::string const& mine, CacheMerge const& merge, CacheSaveOptions const& options) {
  CacheSaveResult r;
  std::string const target = saveTarget(cachePath);
  // Nothing measured is dropped: whatever stops the save, this build's bytes go to a sidecar.
  auto keepAside = [&](CacheSaveResult::Outcome outcome, std::string const& why) {
    r.outcome = outcome;
    if (!options.mineHasEntries) {
      addNote(r.warning, why);
      return r;
    }
    std::string sidecar = newSidecarPath(target);
    AtomicWriteResult w = atomicWriteFile(sidecar, mine);
    if (!w.ok) {
      r.outcome = CacheSaveResult::Outcome::kFailed;
      addNote(r.warning, why);
      addNote(r.warning, "this build's timing-cache entries could not be kept either: " + w.error);
      return r;
    }
    r.deferredPath = sidecar;
    addNote(r.warning, why + "; this build's entries were kept in " + sidecar + " and the next build that saves this cache merges them");
    return r;
  };

  FileLock lock(FileLock::lockPathFor(target), options.lockTimeoutMs);
  if (!lock.locked()) {
    // Without entries of its own a build only missed folding in others' sidecars: a later save
    // does that, nothing is lost, nothing to say.
    if (!options.mineHasEntries) {
      r.outcome = CacheSaveResult::Outcome::kDeferred;
      return r;
    }
    return keepAside(CacheSaveResult::Outcome::kDeferred, "timing cache " + target + " not updated: " + lock.error());
  }

  CacheFileRead current = readCacheFile(target, options.maxBytes);
  if (current.state == CacheFileRead::State::kError) {
    r.error = current.error;
    return keepAside(CacheSaveResult::Outcome::kRefused, "timing cache not updated: " + current.error);
  }

  std::vector<std::string> pendingPaths;
  std::vector<std::string> pending;
  for (auto const& p : listPendingCacheFiles(target)) {
    CacheFileRead side = readCacheFile(p, options.maxBytes);
    if (side.state == CacheFileRead::State::kRead) {
      pendingPaths.push_back(p);
      pending.push_back(std::move(side.bytes));
    } else if (side.state == CacheFileRead::State::kError) {
      addNote(r.warning, "pending timing-cache entries in " + p + " were not merged: " + side.error);
    }
  }

  CacheMergeInput in;
  in.currentExists = current.state == CacheFileRead::State::kRead;
  in.current = &current.bytes;
  in.pending = &pending;
  in.mine = &mine;
  CacheMergeResult m;
  try {
    m = merge(in);
  } catch (std::exception const& e) {
    m = CacheMergeResult{};
    m.refuse = true;
    m.error = std::string("merging the timing cache failed: ") + e.what();
  }
  addNote(r.warning, m.warning);
  if (m.refuse) {
    r.error = m.error;
    return keepAside(CacheSaveResult::Outcome::kRefused, "timing cache " + target + " left untouched: " + m.error);
  }
  if (m.keepCurrentCopy && in.currentExists && !current.bytes.empty()) {
    r.corruptCopyPath = keepCorruptCopy(target, current.bytes, r.warning);
    if (!r.corruptCopyPath.empty()) addNote(r.warning, "the damaged cache was kept as " + r.corruptCopyPath);
  }
  AtomicWriteResult w = atomicWriteFile(target, m.bytes);
  if (!w.ok) {
    r.error = w.error;
    return keepAside(CacheSaveResult::Outcome::kDeferred, "timing cache not saved: " + w.error);
  }
  r.outcome = CacheSaveResult::Outcome::kSaved;
  r.entriesAfter = m.entries;
  r.fileBytes = static_cast<int64_t>(m.bytes.size());
  // Only now, with the merge durable, do the merged sidecars go.
  for (size_t i = 0; i < pendingPaths.size(); ++i) {
    bool merged = i >= m.pendingMerged.size() || m.pendingMerged[i];
    if (merged) {
      if (::unlink(pendingPaths[i].c_str()) == 0 || errno == ENOENT) ++r.pendingMerged;
    } else {
      std::string kept = pendingPaths[i] + ".rejected";
      ::rename(pendingPaths[i].c_str(), kept.c_str());
      addNote(r.warning, "pending timing-cache entries in " + pendingPaths[i] + " could not be merged; kept as " + kept);
    }
  }
  return r;
}

}  // namespace tbs
