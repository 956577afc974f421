// Single-producer/single-consumer queue of records in fixed chunks: the producer (one builder
// thread, or several taking turns under one mutex) appends and publishes with a release store,
// never waiting; the consumer (the flusher) reads the records in place, front to back, and hands
// the chunks it has finished back to the producer for reuse.
//
// Chunk reuse: finished chunks go onto a stack that the producer takes whole when it needs a new
// chunk, so a queue that once held a burst keeps those chunks and steady state allocates nothing
// (a single spare chunk was not enough: a flush interval's backlog is many chunks per thread,
// and each new one was a malloc on the builder's thread and a free on the flusher's). The stack
// is ABA-free: one pusher (the consumer) and one taker that takes everything (the producer).
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
    for (Chunk* c = head_; c != nullptr;) {
      Chunk* next = c->next.load(std::memory_order_relaxed);
      delete c;
      c = next;
    }
    deleteFree(freeLocal_);
    deleteFree(freeShared_.load(std::memory_order_relaxed));
  }
  SpscChunkQueue(SpscChunkQueue const&) = delete;
  SpscChunkQueue& operator=(SpscChunkQueue const&) = delete;

  // Producer only. Throws std::bad_alloc only when it needs a new chunk and none is free.
  void push(T&& item) {
    size_t n = tail_->published.load(std::memory_order_relaxed);
    if (n == kChunk) {
      Chunk* c = takeFree();
      tail_->next.store(c, std::memory_order_release);
      tail_ = c;
      n = 0;
    }
    tail_->items[n] = std::move(item);
    tail_->published.store(n + 1, std::memory_order_release);
  }

  // Consumer only: the oldest record not yet popped, or nullptr when none is published. The
  // pointer stays valid until pop().
  T* front() {
    if (read_ < seen_) return &head_->items[read_];
    for (;;) {
      seen_ = head_->published.load(std::memory_order_acquire);
      if (read_ < seen_) return &head_->items[read_];
      if (read_ < kChunk) return nullptr;
      Chunk* next = head_->next.load(std::memory_order_acquire);
      if (next == nullptr) return nullptr;
      // The producer set `next` only after it stopped using this chunk.
      Chunk* done = head_;
      head_ = next;
      read_ = 0;
      seen_ = 0;
      giveBack(done);
    }
  }

  // Consumer only: drops the record front() returned.
  void pop() { ++read_; }

 private:
  struct Chunk {
    T items[kChunk];
    std::atomic<size_t> published{0};
    std::atomic<Chunk*> next{nullptr};
    Chunk* nextFree = nullptr;
  };

  static void deleteFree(Chunk* c) {
    while (c != nullptr) {
      Chunk* next = c->nextFree;
      delete c;
      c = next;
    }
  }

  Chunk* takeFree() {
    if (freeLocal_ == nullptr) freeLocal_ = freeShared_.exchange(nullptr, std::memory_order_acquire);
    if (freeLocal_ == nullptr) return new Chunk;
    Chunk* c = freeLocal_;
    freeLocal_ = c->nextFree;
    c->nextFree = nullptr;
    return c;
  }

  void giveBack(Chunk* c) {
    c->published.store(0, std::memory_order_relaxed);
    c->next.store(nullptr, std::memory_order_relaxed);
    c->nextFree = freeShared_.load(std::memory_order_relaxed);
    while (!freeShared_.compare_exchange_weak(c->nextFree, c, std::memory_order_release, std::memory_order_relaxed)) {
    }
  }

  // The consumer's fields and the producer's on lines of their own: the consumer writes read_
  // on every record it takes, and sharing a line with tail_ cost the producer a miss per push.
  alignas(64) Chunk* head_;                              // consumer
  size_t read_ = 0;                                      // consumer: next item of head_ to read
  size_t seen_ = 0;                                      // consumer: head_'s published count when last loaded
  alignas(64) Chunk* tail_;                              // producer
  Chunk* freeLocal_ = nullptr;                           // producer: free chunks taken off freeShared_
  alignas(64) std::atomic<Chunk*> freeShared_{nullptr};  // consumer -> producer: finished chunks
};

}  // namespace tbs
