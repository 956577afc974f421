// Heartbeats: while the builder is silent (a long tactic, a hang), the flusher still emits one
// event per period saying how long ago the last callback came, so a consumer can tell "busy"
// from "stuck". Callbacks note their time here at most about once per millisecond, so builder
// threads do not all fight over one cache line.
#pragma once

#include <atomic>
#include <cstdint>

namespace tbs {

class Heartbeat {
 public:
  Heartbeat(int periodMs, int64_t startNs)
      : periodNs_(periodMs > 0 ? int64_t{periodMs} * 1000000 : 0),
        nextNs_(periodNs_ > 0 ? startNs + periodNs_ : INT64_MAX),
        lastCallbackNs_(startNs) {}

  // Any thread (every callback).
  void callback(int64_t nowNs) noexcept {
    if (nowNs - lastCallbackNs_.load(std::memory_order_relaxed) > 1000000) lastCallbackNs_.store(nowNs, std::memory_order_relaxed);
  }

  // Flusher thread: when the next heartbeat is due (INT64_MAX when disabled).
  int64_t dueNs() const { return nextNs_; }

  // Flusher thread: if one is due at nowNs, returns true with the silence so far in *silentMs and
  // schedules the next one.
  bool take(int64_t nowNs, double* silentMs) {
    if (periodNs_ == 0 || nowNs < nextNs_) return false;
    int64_t last = lastCallbackNs_.load(std::memory_order_relaxed);
    *silentMs = nowNs > last ? static_cast<double>(nowNs - last) / 1e6 : 0.0;
    nextNs_ = nowNs + periodNs_;
    return true;
  }

 private:
  int64_t const periodNs_;
  int64_t nextNs_;  // flusher only
  std::atomic<int64_t> lastCallbackNs_;
};

}  // namespace tbs
