// The native hop's bounded queue: the addon's outbox (event_outbox.h: batches waiting for the JS
// thread, steps coalescing) with a bound in bytes that reaches the builder. Past `highBytes` the
// pipeline's RoomGate closes, so the builder threads wait in their next phaseStart, phaseFinish
// or log (room_gate.h); once the consumer has taken the outbox down to `lowBytes` the gate opens.
// What the outbox holds therefore stays under highBytes plus what was already on its way when
// the gate closed: the batch that crossed the bound and the records queued behind it, each at
// most the pipeline's maxQueuedRecords (past which the builders wait for a starved flusher,
// progress_pipeline.h), at two events a record (a finish brings its last step). That is
// inFlightBytes() below, however long the reader stalls and whenever the collectors run.
//
// The bounds sit far above the steady state: with a reader that keeps up the outbox holds one
// flush (a few thousand events, a few hundred KiB at 178k callbacks/s), so the gate never closes.
// With the defaults: 16 MiB, plus at most 27.7 MiB in flight (65,536 queued records, 64 threads).
// Not thread-safe: the owner holds its own lock (the gate itself is thread-safe).
#pragma once

#include <algorithm>
#include <cstddef>

#include "event_outbox.h"
#include "progress_pipeline.h"
#include "room_gate.h"

namespace tbs {

struct OutboxBounds {
  // About 160,000 events at ~104 bytes each: seconds of a busy build, far above one flush.
  size_t highBytes = size_t{16} << 20;
  size_t lowBytes = size_t{8} << 20;
};

// What may still arrive once the gate has closed (see above): two flushes of at most
// `maxQueuedRecords` records each (plus what the builder threads add between two looks at the
// flusher's lag: ProgressPipeline::kQueueCheckEvery each, for up to `threads` threads), two
// events a record, plus the open phases' coalesced steps and new names (64 KiB is far more).
inline size_t inFlightBytes(uint64_t maxQueuedRecords, uint64_t threads = 64) {
  uint64_t records = maxQueuedRecords + threads * ProgressPipeline::kQueueCheckEvery;
  return static_cast<size_t>(2 * records * 2) * sizeof(OutEvent) + (size_t{64} << 10);
}

class BoundedOutbox {
 public:
  explicit BoundedOutbox(OutboxBounds bounds = {}) : bounds_(bounds) {}

  // The gate the builder waits at (the pipeline's); until set, the outbox is bounded only by
  // its consumer (tests of the outbox alone).
  void gateTo(RoomGate* gate) { gate_ = gate; }

  bool empty() const { return box_.empty(); }
  size_t size() const { return box_.size(); }
  size_t bytes() const { return box_.bytes(); }
  size_t peakBytes() const { return peakBytes_; }
  bool final() const { return box_.final(); }
  OutboxBounds const& bounds() const { return bounds_; }

  void add(EventBatch&& b) {
    box_.add(std::move(b));
    size_t now = box_.bytes();
    peakBytes_ = std::max(peakBytes_, now);
    if (gate_ != nullptr && now >= bounds_.highBytes) gate_->setClosed(true);
  }

  EventBatch take(size_t max) { return opened(box_.take(max)); }
  EventBatch take() { return opened(box_.take()); }

 private:
  EventBatch opened(EventBatch&& out) {
    if (gate_ != nullptr && box_.bytes() <= bounds_.lowBytes) gate_->setClosed(false);
    return std::move(out);
  }

  OutboxBounds bounds_;
  EventOutbox box_;
  RoomGate* gate_ = nullptr;
  size_t peakBytes_ = 0;
};

}  // namespace tbs
