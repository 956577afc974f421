// The cancel flag the builder polls in stepComplete, and the bookkeeping that makes the cancel
// latency visible: when the cancel was requested, when the builder first saw it (a false
// stepComplete) and when the build ended.
//
// Ordering that the protocol relies on: request() stores the flag before taking its timestamp,
// and stepComplete takes its timestamp before reading the flag, so every step recorded as
// completed has t <= requestedAt (recorder.h: a step that takes an earlier callback's time took
// it before this read too).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "clock.h"

namespace tbs {

struct CancelTimes {
  int64_t requestedNs = -1;   // when the flag was first set
  int64_t firstFalseNs = -1;  // first stepComplete that returned false
  int64_t endNs = -1;         // the build's end
};

class CancelState {
 public:
  bool requested() const noexcept { return flag_.load(std::memory_order_seq_cst); }

  // Any thread. Sets the flag; true (and the request time in *atNs) for the first request only.
  bool request(int64_t* atNs) {
    if (flag_.exchange(true, std::memory_order_seq_cst)) return false;
    int64_t now = monoNowNs();
    requestedNs_.store(now, std::memory_order_seq_cst);
    *atNs = now;
    {
      std::lock_guard<std::mutex> lk(mu_);  // pairs with waitFor: no lost wake-up
    }
    cv_.notify_all();
    return true;
  }

  // Builder thread, from stepComplete: `nowNs` was taken after the flag was read as set.
  void sawByBuilder(int64_t nowNs) noexcept {
    int64_t expected = -1;
    firstFalseNs_.compare_exchange_strong(expected, nowNs);
  }

  // Builder thread: blocks up to `ms` or until cancelled; returns whether it is cancelled.
  bool waitFor(double ms) noexcept {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::duration<double, std::milli>(std::max(ms, 0.0)), [this] { return requested(); });
    return requested();
  }

  void ended(int64_t nowNs) noexcept { endNs_.store(nowNs, std::memory_order_relaxed); }

  // A builder sees the flag only after it was set; the two clock readings, taken on two cores
  // right after the flag's store and load, may still come out a few nanoseconds the other way.
  CancelTimes times() const {
    int64_t requested = requestedNs_.load(std::memory_order_seq_cst);
    int64_t firstFalse = firstFalseNs_.load(std::memory_order_seq_cst);
    if (requested >= 0 && firstFalse >= 0) firstFalse = std::max(firstFalse, requested);
    return CancelTimes{requested, firstFalse, endNs_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<bool> flag_{false};
  std::atomic<int64_t> requestedNs_{-1};
  std::atomic<int64_t> firstFalseNs_{-1};
  std::atomic<int64_t> endNs_{-1};
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace tbs
