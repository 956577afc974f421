#include "atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <utility>

namespace tbs {
namespace {

std::string parentDir(std::string const& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string osError(int err) { return std::strerror(err); }

// Unique per process and per call, so concurrent writers of one target never share a temp file.
std::string makeTempPath(std::string const& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

void fsyncDir(std::string const& dir) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;  // best effort: the data itself is already durable
  ::fsync(dfd);
  ::close(dfd);
}

}  // namespace

AtomicWriteResult checkWritableTarget(std::string const& path) {
  AtomicWriteResult r;
  if (path.empty()) {
    r.error = "output path is empty";
    return r;
  }
  std::string dir = parentDir(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    r.error = "cannot write " + path + ": directory " + dir + " does not exist (" + osError(errno) + ")";
    return r;
  }
  if (!S_ISDIR(st.st_mode)) {
    r.error = "cannot write " + path + ": " + dir + " is not a directory";
    return r;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    r.error = "cannot write " + path + ": directory " + dir + " is not writable (" + osError(errno) + ")";
    return r;
  }
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    r.error = "cannot write " + path + ": it is a directory";
    return r;
  }
  r.ok = true;
  return r;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

bool AtomicFile::fail(std::string what, int err) {
  error_ = std::move(what);
  if (err != 0) error_ += " (" + osError(err) + ")";
  discard();
  return false;
}

bool AtomicFile::open() {
  AtomicWriteResult check = checkWritableTarget(path_);
  if (!check.ok) {
    error_ = check.error;
    return false;
  }
  tempPath_ = makeTempPath(path_);
  fd_ = ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    int err = errno;
    std::string tmp = tempPath_;
    tempPath_.clear();  // nothing was created, nothing to unlink
    return fail("cannot create temporary file " + tmp, err);
  }
  return true;
}

bool AtomicFile::write(void const* data, size_t size) {
  if (fd_ < 0) return fail(error_.empty() ? "write to " + path_ + " before open()" : error_, 0);
  auto const* p = static_cast<char const*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write " + tempPath_, errno);
    }
    p += n;
    size -= static_cast<size_t>(n);
    written_ += n;
  }
  return true;
}

bool AtomicFile::commit() {
  if (fd_ < 0) return fail(error_.empty() ? "commit of " + path_ + " before open()" : error_, 0);
  if (::fsync(fd_) != 0) return fail("cannot flush " + tempPath_ + " to disk", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return fail("cannot close " + tempPath_, errno);
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    return fail("cannot rename " + tempPath_ + " to " + path_, errno);
  }
  committed_ = true;
  tempPath_.clear();
  fsyncDir(parentDir(path_));
  return true;
}

void AtomicFile::discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!tempPath_.empty()) {
    ::unlink(tempPath_.c_str());
    tempPath_.clear();
  }
}

AtomicWriteResult atomicWriteFile(std::string const& path, void const* data, size_t size) {
  AtomicWriteResult r;
  AtomicFile f(path);
  if (!f.open() || !f.write(data, size) || !f.commit()) {
    r.error = f.error();
    return r;
  }
  r.ok = true;
  return r;
}

AtomicWriteResult atomicWriteFile(std::string const& path, std::string const& data) {
  return atomicWriteFile(path, data.data(), data.size());
}

}  // namespace tbs
