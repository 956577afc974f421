// When the flusher runs: the pacing policy every hop of the event stream shares (the JS side is
// apps/shared/pacing-batcher.ts, and addon.ts passes its budget in as flushIntervalMs). A batch
// goes out as soon as something is waiting if the previous one left at least one budget ago, so a
// quiet build's events are not delayed; while callbacks keep coming, batches are one budget apart
// and steps coalesce in between.
//
// The flusher sleeps while nothing waits. Producers wake it through activity(): one load of an
// atomic flag when the flusher is awake (the common case under load), one exchange and a
// semaphore post when it sleeps (once per quiet spell). Nothing a producer (or urgent()/stop())
// does takes a lock the flusher holds: the flusher sleeps on a POSIX semaphore, not on a
// condition variable whose mutex it would hold while it looks for work, so a builder thread
// never waits for a flusher that was descheduled at the wrong moment. Both sides use
// sequentially consistent operations on the flag and on what hasWork() reads, so a producer
// either sees the flusher asleep or the flusher sees the producer's work; the idle wait is also
// bounded, so nothing can wait forever. Extra posts only make the flusher look once more.
#pragma once

#include <semaphore.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>

#include "clock.h"

namespace tbs {

class FlushPacer {
 public:
  enum class Wake { kFlush, kStop, kAbandon };

  explicit FlushPacer(int budgetMs) : budgetNs_(int64_t{std::max(1, budgetMs)} * 1000000) { sem_init(&wake_, 0, 0); }
  ~FlushPacer() { sem_destroy(&wake_); }
  FlushPacer(FlushPacer const&) = delete;
  FlushPacer& operator=(FlushPacer const&) = delete;

  // Any thread, never blocks: something is waiting to be flushed.
  void activity() noexcept {
    if (!idle_.load(std::memory_order_seq_cst)) return;
    if (!idle_.exchange(false, std::memory_order_seq_cst)) return;
    sem_post(&wake_);
  }

  // Any thread: flush now, budget or not (build.cancelling must not wait).
  void urgent() noexcept {
    urgent_.store(true, std::memory_order_seq_cst);
    sem_post(&wake_);
  }

  // Any thread: the flusher ends; `abandon` = without a final flush (the consumer may be gone).
  void stop(bool abandon) noexcept {
    if (abandon) abandon_.store(true, std::memory_order_seq_cst);
    stop_.store(true, std::memory_order_seq_cst);
    sem_post(&wake_);
  }

  // Whether stop() was called (the flusher then goes through next() for its last flush).
  bool stopping() const noexcept { return stop_.load(std::memory_order_seq_cst); }

  // Flusher thread: returns when it is time to flush — something waits (hasWork()) or the
  // deadline dueNs (a heartbeat) has come, and the budget since the last flush has passed — or
  // when the flusher must stop.
  template <typename HasWork>
  Wake next(HasWork&& hasWork, int64_t dueNs) {
    for (;;) {
      if (abandon_.load(std::memory_order_seq_cst)) return Wake::kAbandon;
      if (stop_.load(std::memory_order_seq_cst)) return Wake::kStop;
      idle_.store(true, std::memory_order_seq_cst);
      if (urgent_.load(std::memory_order_seq_cst) || hasWork() || monoNowNs() >= dueNs) break;
      sleepUntil(std::min(dueNs, monoNowNs() + kIdleCheckNs));
    }
    idle_.store(false, std::memory_order_seq_cst);
    int64_t earliest = lastFlushNs_.load(std::memory_order_relaxed) + budgetNs_;
    while (!stop_.load(std::memory_order_seq_cst) && !urgent_.load(std::memory_order_seq_cst) && monoNowNs() < earliest)
      sleepUntil(earliest);
    urgent_.store(false, std::memory_order_seq_cst);
    if (abandon_.load(std::memory_order_seq_cst)) return Wake::kAbandon;
    return stop_.load(std::memory_order_seq_cst) ? Wake::kStop : Wake::kFlush;
  }

  // After each flush: the flusher thread, or a builder thread that flushed in its place
  // (progress_pipeline.h, helpFlush), one at a time.
  void flushed(int64_t nowNs) { lastFlushNs_.store(nowNs, std::memory_order_relaxed); }

 private:
  // A sleeping flusher looks again this often even without a wake-up (belt and braces).
  static constexpr int64_t kIdleCheckNs = 100 * 1000000;

  // Until a post or the deadline `ns` (monoNowNs()'s timeline, which may read the TSC: clock.h),
  // handed to the OS as the CLOCK_MONOTONIC time that is as far away.
  void sleepUntil(int64_t ns) noexcept {
    ns = steadyNowNs() + (ns - monoNowNs());
    timespec ts;
    ts.tv_sec = static_cast<time_t>(ns / 1000000000);
    ts.tv_nsec = static_cast<long>(ns % 1000000000);
    while (sem_clockwait(&wake_, CLOCK_MONOTONIC, &ts) != 0 && errno == EINTR) {
    }
  }

  int64_t const budgetNs_;
  std::atomic<bool> idle_{false};
  sem_t wake_;
  std::atomic<bool> urgent_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> abandon_{false};
  std::atomic<int64_t> lastFlushNs_{INT64_MIN / 2};
};

}  // namespace tbs
