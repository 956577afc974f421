// The last hop of back-pressure: where the builder threads wait when nobody downstream takes
// events. The consumer side (the addon's outbox, bounded_outbox.h) closes the gate when what it
// holds passes its byte bound and opens it when that falls back under the low mark; a builder
// thread calls wait() in the callbacks that create records (phaseStart, phaseFinish, log) and
// blocks while the gate is closed. TensorRT's IProgressMonitor callbacks may block (it is what
// pauses a real build); the simulated backend pauses the same way.
//
// What never waits here, by design:
//   - stepComplete: a step costs no memory (it moves its phase's word; progress_pipeline.h), so a
//     long phase keeps stepping while the reader is stalled, and the callback stays one load;
//   - anything once release() was called: a cancel (Stop must work while the build is held: it
//     releases the waiters, who then see the flag at their next step), the build's end, teardown.
//     A released gate stays open for good, so the unwinding after a cancel cannot block.
// In normal operation (a reader that keeps up) the gate is never closed: the bound is far above
// what one flush holds, and wait() is one relaxed load of a flag nobody writes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "clock.h"

namespace tbs {

class RoomGate {
 public:
  // Builder thread. Returns at once while the gate is open; otherwise blocks until it opens or
  // is released. Never throws (callbacks are noexcept).
  void wait() noexcept {
    if (!closed_.load(std::memory_order_acquire)) return;
    waitSlow();
  }

  // Consumer side (any thread): close when over the bound, open when back under the low mark.
  // Ignored once released.
  void setClosed(bool closed) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (released_ || closed == closed_.load(std::memory_order_relaxed)) return;
      closed_.store(closed, std::memory_order_release);
      if (closed) ++closings_;
    }
    if (!closed) cv_.notify_all();
  }

  // Any thread: open for good (cancel, the build's end, teardown) and wake every waiter.
  void release() noexcept {
    {
      std::lock_guard<std::mutex> lk(mu_);
      released_ = true;
      closed_.store(false, std::memory_order_release);
    }
    cv_.notify_all();
  }

  bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  // Threads blocked in wait() right now (tests, diagnostics).
  int waiting() const {
    std::lock_guard<std::mutex> lk(mu_);
    return waiting_;
  }
  // How often the gate closed, and the builder time spent waiting in all (summed over threads).
  uint64_t closings() const {
    std::lock_guard<std::mutex> lk(mu_);
    return closings_;
  }
  int64_t waitedNs() const {
    std::lock_guard<std::mutex> lk(mu_);
    return waitedNs_;
  }

 private:
  void waitSlow() noexcept {
    try {
      std::unique_lock<std::mutex> lk(mu_);
      if (!closed_.load(std::memory_order_relaxed)) return;
      int64_t from = monoNowNs();
      ++waiting_;
      cv_.wait(lk, [this] { return !closed_.load(std::memory_order_relaxed); });
      --waiting_;
      waitedNs_ += monoNowNs() - from;
    } catch (...) {
      // A lock that cannot be taken: go on rather than terminate the build from a callback.
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> closed_{false};
  bool released_ = false;  // with mu_
  int waiting_ = 0;        // with mu_
  uint64_t closings_ = 0;  // with mu_
  int64_t waitedNs_ = 0;   // with mu_
};

}  // namespace tbs
