// Batches waiting for a consumer that is busy (the addon's JS thread while its one
// thread-safe-function call is pending). Everything is merged into one batch, and steps are
// coalesced on the way in: a newer step of a phase replaces the waiting one, and only the latest
// heartbeat is kept. A phase's last step before its finish stays (as in the pipeline: the native
// layer always delivers the step a finish's stepsDone refers to). Starts, finishes, logs, cache stats, cancelling and the final event are
// never dropped, so however long the consumer stalls, the steps it costs are bounded by the open phases; what the rest costs is bytes()
// (bounded_outbox.h puts a bound on it, with the builder waiting past it). Not thread-safe: the owner holds its own lock.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "events.h"

namespace tbs {

class EventOutbox {
 public:
  bool empty() const { return !has_; }
  size_t size() const { return live_; }
  // Events held, coalesced ones included until the next compaction (at most about 2x size()).
  size_t stored() const { return merged_.events.size() - head_; }
  uint64_t coalesced() const { return coalesced_; }
  // What the waiting events cost in memory: every stored event (coalesced ones too, until the
  // next compaction), the text of the rare events and the new names. An estimate of the live
  // bytes; the vector's spare capacity and its taken front (up to as much again) come on top.
  size_t bytes() const { return stored() * sizeof(OutEvent) + textBytes_ + merged_.newNames.size() * sizeof(std::string) + nameBytes_; }
  // The batch that ends the build (build.finished) is waiting: nothing may hold it back.
  bool final() const { return merged_.final; }

  void add(EventBatch&& b) {
    if (!has_) {
      merged_.firstNameId = b.firstNameId;
      has_ = true;
    }
    for (auto& n : b.newNames) {
      nameBytes_ += n.size();
      merged_.newNames.push_back(std::move(n));
    }
    merged_.final = merged_.final || b.final;
    for (auto& e : b.events) {
      size_t at = merged_.events.size();
      if (e.type == EvType::kPhaseStep) {
        auto [it, fresh] = stepAt_.try_emplace(e.a, at);
        if (!fresh) {
          drop(it->second);
          it->second = at;
        }
      } else if (e.type == EvType::kPhaseFinish) {
        stepAt_.erase(e.a);  // no later step can come; its last one stays
      } else if (e.type == EvType::kHeartbeat) {
        if (heartbeatAt_ != kNone) drop(heartbeatAt_);
        heartbeatAt_ = at;
      }
      textBytes_ += e.text.size();
      merged_.events.push_back(std::move(e));
      dropped_.push_back(false);
      ++live_;
    }
    // Coalesced and taken events leave the vector once they are the majority: memory follows size().
    if (merged_.events.size() > 2 * live_ + 1024) compact();
  }

  // At most `max` events from the front, in seq order, with every new name waiting (names are
  // sent before any event that uses them); the rest stays, its steps still coalescing. Lets the
  // consumer take the outbox in bounded bites after a long stall instead of all at once. A bite
  // costs what it takes, not what stays: the front moves (head_) and the taken prefix leaves the
  // vector only once it is the larger part (it used to be erased, and everything behind it
  // re-indexed, at every bite: quadratic in a long stall's backlog).
  EventBatch take(size_t max) {
    if (live_ <= max) return take();
    EventBatch out;
    out.firstNameId = merged_.firstNameId;
    out.newNames = std::move(merged_.newNames);
    merged_.newNames.clear();
    nameBytes_ = 0;
    merged_.firstNameId = out.firstNameId + static_cast<uint32_t>(out.newNames.size());
    out.events.reserve(max);
    size_t r = head_;
    for (; out.events.size() < max; ++r) {
      if (dropped_[r]) continue;
      textBytes_ -= merged_.events[r].text.size();
      out.events.push_back(std::move(merged_.events[r]));
    }
    head_ = r;
    live_ -= max;
    // Indexes before the new front point at events already sent: a newer step cannot replace them.
    for (auto it = stepAt_.begin(); it != stepAt_.end();) {
      if (it->second < head_) {
        it = stepAt_.erase(it);
      } else {
        ++it;
      }
    }
    if (heartbeatAt_ != kNone && heartbeatAt_ < head_) heartbeatAt_ = kNone;
    if (head_ > merged_.events.size() / 2) compact();
    return out;
  }

  // Everything waiting, as one batch in seq order; the outbox is empty afterwards.
  EventBatch take() {
    compact();
    EventBatch out = std::move(merged_);
    merged_ = EventBatch{};
    dropped_.clear();
    stepAt_.clear();
    heartbeatAt_ = kNone;
    has_ = false;
    live_ = 0;
    textBytes_ = 0;
    nameBytes_ = 0;
    return out;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  // Removes the taken front and the coalesced events, keeping order, and re-points the indexes
  // at the survivors.
  void compact() {
    if (head_ == 0 && live_ == merged_.events.size()) return;
    std::vector<size_t> newIndex(merged_.events.size(), kNone);
    size_t w = 0;
    for (size_t r = head_; r < merged_.events.size(); ++r) {
      if (dropped_[r]) continue;
      newIndex[r] = w;
      if (w != r) merged_.events[w] = std::move(merged_.events[r]);
      ++w;
    }
    merged_.events.resize(w);
    if (merged_.events.capacity() > 2 * w + 1024) merged_.events.shrink_to_fit();
    dropped_.assign(w, false);
    head_ = 0;
    for (auto& [id, at] : stepAt_) at = newIndex[at];
    if (heartbeatAt_ != kNone) heartbeatAt_ = newIndex[heartbeatAt_];
  }

  void drop(size_t i) {
    if (dropped_[i]) return;
    dropped_[i] = true;
    --live_;
    ++coalesced_;
  }

  EventBatch merged_;
  std::vector<bool> dropped_;
  std::unordered_map<int64_t, size_t> stepAt_;  // phase id -> index of its waiting step
  size_t heartbeatAt_ = kNone;
  size_t head_ = 0;  // events before it were taken (take(max)); they leave at the next compact()
  bool has_ = false;
  size_t live_ = 0;
  uint64_t coalesced_ = 0;
  size_t textBytes_ = 0;  // text of the stored events (coalesced ones have none)
  size_t nameBytes_ = 0;  // characters of the names waiting
};

}  // namespace tbs
