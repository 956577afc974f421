#include "file_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <utility>

namespace tbs {

FileLock::FileLock(std::string lockPath, int timeoutMs) : path_(std::move(lockPath)) {
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    error_ = "cannot open lock file " + path_ + " (" + std::strerror(errno) + ")";
    return;
  }
  if (timeoutMs < 0) {
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      error_ = "cannot lock " + path_ + " (" + std::strerror(errno) + ")";
      ::close(fd);
      return;
    }
    fd_ = fd;
    return;
  }
  // flock has no timeout; poll with a short back-off instead of using signals/alarms.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      return;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      error_ = "cannot lock " + path_ + " (" + std::strerror(errno) + ")";
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      error_ = "timed out after " + std::to_string(timeoutMs) + " ms waiting for lock " + path_;
      break;
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(50)) pause *= 2;
  }
  ::close(fd);
}

FileLock::~FileLock() { unlock(); }

void FileLock::unlock() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace tbs
