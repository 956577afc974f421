// Single-producer/single-consumer queue of records in fixed chunks: the producer (one builder
// thread) appends and publishes with a release store, never waiting; the consumer (the flusher)
// reads what is published and frees chunks the producer has moved past.
#pragma once

#include <atomic>
#include <cstddef>
#include <utility>

namespace tbs {

template <typename T, size_t kChunk = 256>
class SpscChunkQueue {
 public:
  SpscChunkQueue() : head_(new Chunk), tail_(head_) {}
  ~SpscChunkQueue() {
    while (head_ != nullptr) {
      Chunk* next = head_->next.load(std::memory_order_relaxed);
      delete head_;
      head_ = next;
    }
    delete spare_.load(std::memory_order_relaxed);
  }
  SpscChunkQueue(SpscChunkQueue const&) = delete;
  SpscChunkQueue& operator=(SpscChunkQueue const&) = delete;

  // Producer only.
  void push(T&& item) {
    size_t n = tail_->published.load(std::memory_order_relaxed);
    if (n == kChunk) {
      // Reuse the chunk the consumer finished last, if any: steady state allocates nothing.
      Chunk* c = spare_.exchange(nullptr, std::memory_order_acquire);
      if (c == nullptr) c = new Chunk;
      tail_->next.store(c, std::memory_order_release);
      tail_ = c;
      n = 0;
    }
    tail_->items[n] = std::move(item);
    tail_->published.store(n + 1, std::memory_order_release);
  }

  // Consumer only: calls fn(T&&) for everything published so far.
  template <typename Fn>
  void drain(Fn&& fn) {
    for (;;) {
      size_t n = head_->published.load(std::memory_order_acquire);
      while (read_ < n) fn(std::move(head_->items[read_++]));
      if (read_ < kChunk) return;
      Chunk* next = head_->next.load(std::memory_order_acquire);
      if (next == nullptr) return;
      // The producer set `next` only after it stopped using this chunk.
      head_->published.store(0, std::memory_order_relaxed);
      head_->next.store(nullptr, std::memory_order_relaxed);
      delete spare_.exchange(head_, std::memory_order_release);
      head_ = next;
      read_ = 0;
    }
  }

 private:
  struct Chunk {
    T items[kChunk];
    std::atomic<size_t> published{0};
    std::atomic<Chunk*> next{nullptr};
  };
  Chunk* head_;                         // consumer
  size_t read_ = 0;                     // consumer
  Chunk* tail_;                         // producer
  std::atomic<Chunk*> spare_{nullptr};  // consumer -> producer recycling
};

}  // namespace tbs
