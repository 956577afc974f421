// Test support: another process that holds an flock on a file until told to let go, as a stuck
// or slow build in another process would. A forked child (not a thread) because flock exclusion
// between processes is what the cache store must survive.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace tbs_test {

class LockHolder {
 public:
  // Returns once the child holds the lock (or failed: held() is false).
  explicit LockHolder(std::string const& lockPath) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(ready[0]);
      ::close(ready[1]);
      return;
    }
    if (pid == 0) {
      // Child: only async-signal-safe calls (the parent may have had threads when it forked).
      ::close(ready[0]);
      int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      char ok = (fd >= 0 && ::flock(fd, LOCK_EX) == 0) ? '1' : '0';
      (void)!::write(ready[1], &ok, 1);
      for (;;) ::pause();  // until SIGKILL from release()
    }
    ::close(ready[1]);
    char ok = '0';
    held_ = ::read(ready[0], &ok, 1) == 1 && ok == '1';
    ::close(ready[0]);
    pid_ = pid;
  }
  ~LockHolder() { release(); }
  LockHolder(LockHolder const&) = delete;
  LockHolder& operator=(LockHolder const&) = delete;

  bool held() const { return held_; }
  // Kills the child; the kernel drops its lock when its descriptor closes.
  void release() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    held_ = false;
  }

 private:
  pid_t pid_ = -1;
  bool held_ = false;
};

}  // namespace tbs_test
