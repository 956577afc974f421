// One monotonic clock for every native timestamp, so builder threads, the flusher and the
// cancel bookkeeping can be compared directly (CLOCK_MONOTONIC is system-wide).
#pragma once

#include <chrono>
#include <cstdint>

namespace tbs {

inline int64_t monoNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double nsToMs(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace tbs
