// Advisory whole-file lock (flock(2)) on a separate lock file, held for the lifetime of the
// object. Used to serialize read-merge-write of a shared timing cache between concurrent builds
// in this process and in other processes. flock locks belong to the open file description, so
// two FileLock objects in one process exclude each other too (each opens its own descriptor).
#pragma once

#include <string>

namespace tbs {

class FileLock {
 public:
  // Blocks until the lock is held, or until timeoutMs elapses (-1 = wait forever). The lock
  // file is created if missing and deliberately never deleted: unlinking it would let a later
  // locker lock a fresh inode while an earlier one still holds the old one.
  explicit FileLock(std::string lockPath, int timeoutMs = -1);
  ~FileLock();
  FileLock(FileLock const&) = delete;
  FileLock& operator=(FileLock const&) = delete;

  bool locked() const { return fd_ >= 0; }
  std::string const& error() const { return error_; }
  std::string const& path() const { return path_; }
  void unlock();

  // The conventional lock file for protecting `path`: "<path>.lock".
  static std::string lockPathFor(std::string const& path) { return path + ".lock"; }

 private:
  std::string path_;
  std::string error_;
  int fd_ = -1;
};

}  // namespace tbs
