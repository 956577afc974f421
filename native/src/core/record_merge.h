// The flusher's view of the record queues as one stream in sequence order. Every record takes its
// sequence number from one counter and each queue (a builder thread's, or the rare records') is
// in ascending order, so the record numbered `next` is always at the front of some queue, or not
// published yet. The merge looks first at the queue it took the last record from (a builder
// thread runs for a time slice, so consecutive numbers mostly come from one queue) and scans the
// fronts otherwise. Records are read in place: nothing is copied into a side buffer or sorted
// (the flusher used to move every record into a vector and sort (seq, index) pairs, which cost
// more of its time than applying the records), and records waiting behind a gap (a number taken
// whose record is not published yet) simply stay in their queues.
#pragma once

#include <cstdint>
#include <vector>

#include "record_queue.h"

namespace tbs {

template <typename Record, typename Queue = SpscChunkQueue<Record>>
class RecordMerge {
 public:
  // Flusher: one more queue to merge (queues are never removed).
  void add(Queue* q) { queues_.push_back(q); }
  size_t size() const { return queues_.size(); }

  // Flusher: the record numbered `seq` if it is published, else nullptr. Valid until pop().
  Record* find(uint64_t seq) {
    if (last_ < queues_.size()) {
      Record* r = queues_[last_]->front();
      if (r != nullptr && r->seq == seq) return r;
    }
    for (size_t i = 0; i < queues_.size(); ++i) {
      Record* r = queues_[i]->front();
      if (r != nullptr && r->seq == seq) {
        last_ = i;
        return r;
      }
    }
    return nullptr;
  }

  // Flusher: consumes the record find() returned last.
  void pop() { queues_[last_]->pop(); }

  // Flusher: the lowest sequence number at the front of any queue (UINT64_MAX if none): where a
  // final flush goes on past a number whose record will never come.
  uint64_t lowestFront() {
    uint64_t lowest = UINT64_MAX;
    for (Queue* q : queues_) {
      Record* r = q->front();
      if (r != nullptr && r->seq < lowest) lowest = r->seq;
    }
    return lowest;
  }

 private:
  std::vector<Queue*> queues_;
  size_t last_ = 0;
};

}  // namespace tbs
