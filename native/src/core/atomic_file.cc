#include "atomic_file.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
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

std::string baseName(std::string const& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string osError(int err) { return std::strerror(err); }

// Unique per process and per call, so concurrent writers of one target never share a temp file.
std::string makeTempName(std::string const& name) {
  static std::atomic<uint64_t> counter{0};
  return name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

// What a file that is not a regular file is, in words.
std::string kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Empty when the user may trust `dir` to keep what is written into it: owned by the user (or by
// root, who can replace anything anyway) and not writable by others unless sticky (in a sticky
// folder such as /tmp, others cannot rename or remove what they do not own).
std::string untrustedFolder(std::string const& dir, struct stat const& st) {
  uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return "folder " + dir + " belongs to another user (uid " + std::to_string(st.st_uid) +
           "), who could replace the file after it is written; write into a folder of your own";
  }
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return "folder " + dir + " is writable by every user (mode " +
           [&] {
             char buf[8];
             std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(st.st_mode & 07777));
             return std::string(buf);
           }() +
           ") without the sticky bit, so anyone could replace the file after it is written; run chmod o-w " + dir +
           " (or chmod +t), or write into a folder of your own";
  }
  return {};
}

std::string refusedKind(std::string const& path, std::string const& target, mode_t mode) {
  std::string link = target != path ? " (the target of the symbolic link " + path + ")" : "";
  if (S_ISDIR(mode)) return "cannot write " + target + link + ": it is a directory";
  return "cannot write " + target + link + ": it is " + kindOf(mode) +
         ", not a regular file, and is left untouched; give the path of a regular file or a new name";
}

}  // namespace

AtomicWriteResult checkWritableTarget(std::string const& path) {
  AtomicWriteResult r;
  if (path.empty()) {
    r.error = "output path is empty";
    return r;
  }
  std::string target = path;
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // Written through: the temp file goes beside the link's target, which is then replaced.
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) {
      int err = errno;
      r.error = "cannot write " + path + ": it is a symbolic link" +
                (err == ENOENT ? " to a missing file (it is left as it is); give the path of the file itself"
                               : " that cannot be followed (" + osError(err) + ")");
      return r;
    }
    target = resolved;
  }
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    r.error = refusedKind(path, target, st.st_mode);
    return r;
  }
  std::string dir = parentDir(target);
  if (::stat(dir.c_str(), &st) != 0) {
    r.error = "cannot write " + path + ": directory " + dir + " does not exist (" + osError(errno) + ")";
    return r;
  }
  if (!S_ISDIR(st.st_mode)) {
    r.error = "cannot write " + path + ": " + dir + " is not a directory";
    return r;
  }
  if (std::string why = untrustedFolder(dir, st); !why.empty()) {
    r.error = "cannot write " + path + ": " + why;
    return r;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    r.error = "cannot write " + path + ": directory " + dir + " is not writable (" + osError(errno) + ")";
    return r;
  }
  r.ok = true;
  r.target = target;
  return r;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
  if (dirFd_ >= 0) ::close(dirFd_);
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
  target_ = check.target;
  dir_ = parentDir(target_);
  name_ = baseName(target_);
  // From here on every name is looked up relative to this descriptor: the folder checked is the
  // folder written into, even if a name on the way is swapped meanwhile.
  dirFd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd_ < 0) return fail("cannot open directory " + dir_, errno);
  struct stat st{};
  if (::fstat(dirFd_, &st) != 0) return fail("cannot examine directory " + dir_, errno);
  if (std::string why = untrustedFolder(dir_, st); !why.empty()) return fail("cannot write " + path_ + ": " + why, 0);
  if (::fstatat(dirFd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
    return fail(refusedKind(path_, target_, st.st_mode), 0);
  }
  std::string tmp = makeTempName(name_);
  fd_ = ::openat(dirFd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) return fail("cannot create temporary file " + dir_ + "/" + tmp, errno);
  tempName_ = tmp;
  return true;
}

bool AtomicFile::write(void const* data, size_t size) {
  if (fd_ < 0) return fail(error_.empty() ? "write to " + path_ + " before open()" : error_, 0);
  auto const* p = static_cast<char const*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write " + tempPath(), errno);
    }
    p += n;
    size -= static_cast<size_t>(n);
    written_ += n;
  }
  return true;
}

bool AtomicFile::commit() {
  if (fd_ < 0) return fail(error_.empty() ? "commit of " + path_ + " before open()" : error_, 0);
  if (::fsync(fd_) != 0) return fail("cannot flush " + tempPath() + " to disk", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return fail("cannot close " + tempPath(), errno);
  // Checked again at the moment of the rename: what is there now is replaced only if it is a
  // regular file; if nothing is there, the rename refuses to replace whatever appears meanwhile.
  struct stat st{};
  int rc;
  if (::fstatat(dirFd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return fail("cannot write " + target_ + ": it became " + kindOf(st.st_mode) + " while the file was written, and is left untouched",
                  0);
    }
    rc = ::renameat(dirFd_, tempName_.c_str(), dirFd_, name_.c_str());
  } else {
    rc = ::renameat2(dirFd_, tempName_.c_str(), dirFd_, name_.c_str(), RENAME_NOREPLACE);
    // A file system without RENAME_NOREPLACE (some network ones) gets a plain rename.
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) rc = ::renameat(dirFd_, tempName_.c_str(), dirFd_, name_.c_str());
    if (rc != 0 && errno == EEXIST) {
      return fail("cannot write " + target_ + ": something else was created there while the file was written; it is left untouched", 0);
    }
  }
  if (rc != 0) return fail("cannot rename " + tempPath() + " to " + target_, errno);
  committed_ = true;
  tempName_.clear();
  ::fsync(dirFd_);  // best effort: the data itself is already durable
  return true;
}

void AtomicFile::discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!tempName_.empty() && dirFd_ >= 0) {
    ::unlinkat(dirFd_, tempName_.c_str(), 0);
    tempName_.clear();
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
  r.target = f.targetPath();
  return r;
}

AtomicWriteResult atomicWriteFile(std::string const& path, std::string const& data) {
  return atomicWriteFile(path, data.data(), data.size());
}

}  // namespace tbs
