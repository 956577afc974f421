// Scheduling priority of the event path's threads. On a busy machine (a TensorRT build is one:
// its own threads fill the cores) the flusher must not wait behind the builder for a core, or
// every event waits with it. Linux keeps the nice value per thread and a new thread inherits its
// creator's, so:
//   - the flusher asks for a nice value kEventPathBoost below the build's (allowed to root, to
//     CAP_SYS_NICE, or within RLIMIT_NICE; otherwise it stays where it is: "where the OS allows");
//   - the builder thread goes to the build's nice value (TBS_BUILD_NICE when the host raised its
//     own threads' priority before starting this process, else unchanged), and every thread it
//     starts, TensorRT's included, inherits that.
// Raising a nice value (lowering priority) is always allowed, so the builder's step is never
// refused; lowering it may be, and then nothing changes.
#pragma once

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace tbs {

constexpr int kEventPathBoost = 5;

inline pid_t thisThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

inline int thisThreadNice() {
  errno = 0;
  int n = ::getpriority(PRIO_PROCESS, static_cast<id_t>(thisThreadId()));
  return errno == 0 ? n : 0;
}

// True when the thread now runs at `nice`.
inline bool setThisThreadNice(int nice) { return ::setpriority(PRIO_PROCESS, static_cast<id_t>(thisThreadId()), nice) == 0; }

// The nice value builds run at: TBS_BUILD_NICE if the host set it, else this thread's.
inline int buildNice() {
  char const* v = std::getenv("TBS_BUILD_NICE");
  if (v != nullptr && *v != '\0') {
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (end != nullptr && *end == '\0' && n >= -20 && n <= 19) return static_cast<int>(n);
  }
  return thisThreadNice();
}

// Flusher thread: kEventPathBoost above the build where allowed. Returns whether it took.
inline bool favourEventPathThread(int buildNiceValue) {
  int want = buildNiceValue - kEventPathBoost;
  if (want < -20) want = -20;
  return thisThreadNice() <= want || setThisThreadNice(want);
}

// Builder thread: back to the build's nice value if it inherited a favoured one.
inline void runAtBuildPriority(int buildNiceValue) {
  if (thisThreadNice() < buildNiceValue) setThisThreadNice(buildNiceValue);
}

}  // namespace tbs
