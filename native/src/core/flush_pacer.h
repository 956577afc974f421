// When the flusher runs: the pacing policy every hop of the event stream shares (the JS side is
// apps/shared/pacing-batcher.ts, and addon.ts passes its budget in as flushIntervalMs). A batch
// goes out as soon as something is waiting if the previous one left at least one budget ago, so a
// quiet build's events are not delayed; while callbacks keep coming, batches are one budget apart
// and steps coalesce in between.
//
// The flusher sleeps while nothing waits. Producers wake it through activity(): one load of an
// atomic flag when the flusher is awake (the common case under load), one exchange and a notify
// when it sleeps (once per quiet spell). Both sides use sequentially consistent operations on the
// flag and on what hasWork() reads, so a producer either sees the flusher asleep or the flusher
// sees the producer's work; the idle wait is also bounded, so nothing can wait forever.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "clock.h"

namespace tbs {

class FlushPacer {
 public:
  enum class Wake { kFlush, kStop, kAbandon };

  explicit FlushPacer(int budgetMs) : budgetNs_(int64_t{std::max(1, budgetMs)} * 1000000) {}

  // Any thread, never blocks for long: something is waiting to be flushed.
  void activity() noexcept {
    if (!idle_.load(std::memory_order_seq_cst)) return;
    if (!idle_.exchange(false, std::memory_order_seq_cst)) return;
    std::lock_guard<std::mutex> lk(mu_);
    cv_.notify_one();
  }

  // Any thread: flush now, budget or not (build.cancelling must not wait).
  void urgent() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      urgent_ = true;
    }
    cv_.notify_all();
  }

  // Any thread: the flusher ends; `abandon` = without a final flush (the consumer may be gone).
  void stop(bool abandon) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
      abandon_ = abandon_ || abandon;
    }
    cv_.notify_all();
  }

  // Flusher thread: returns when it is time to flush — something waits (hasWork()) or the
  // deadline dueNs (a heartbeat) has come, and the budget since the last flush has passed — or
  // when the flusher must stop.
  template <typename HasWork>
  Wake next(HasWork&& hasWork, int64_t dueNs) {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      if (abandon_) return Wake::kAbandon;
      if (stop_) return Wake::kStop;
      idle_.store(true, std::memory_order_seq_cst);
      if (urgent_ || hasWork() || monoNowNs() >= dueNs) break;
      cv_.wait_until(lk, at(std::min(dueNs, monoNowNs() + kIdleCheckNs)));
    }
    idle_.store(false, std::memory_order_seq_cst);
    int64_t earliest = lastFlushNs_ + budgetNs_;
    while (!stop_ && !urgent_ && monoNowNs() < earliest) cv_.wait_until(lk, at(earliest));
    urgent_ = false;
    if (abandon_) return Wake::kAbandon;
    return stop_ ? Wake::kStop : Wake::kFlush;
  }

  // Flusher thread, after each flush.
  void flushed(int64_t nowNs) { lastFlushNs_ = nowNs; }

 private:
  // A sleeping flusher looks again this often even without a wake-up (belt and braces).
  static constexpr int64_t kIdleCheckNs = 100 * 1000000;

  static std::chrono::steady_clock::time_point at(int64_t ns) {
    return std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::nanoseconds(ns)));
  }

  int64_t const budgetNs_;
  std::atomic<bool> idle_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool urgent_ = false;
  bool stop_ = false;
  bool abandon_ = false;
  int64_t lastFlushNs_ = INT64_MIN / 2;  // flusher only
};

}  // namespace tbs
