// Interned phase names. TensorRT repeats a handful of names thousands of times over a build, so
// each distinct name is stored once, numbered, and sent to JS once (EventBatch::newNames); events
// carry the number. Lookups go through a small thread-local cache keyed by the caller's pointer
// (confirmed by comparing the text, since a caller may reuse a buffer for another name), so the
// common case takes no lock; a new name or a cache miss takes the table's mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tbs {

class NameTable {
 public:
  static constexpr uint32_t kNoName = UINT32_MAX;

  NameTable();
  NameTable(NameTable const&) = delete;
  NameTable& operator=(NameTable const&) = delete;

  // Any thread. The id of `name`, adding it if `intern` (else kNoName for an unknown name, and
  // kNoName if memory runs out). *interned receives the table's copy, stable for its lifetime.
  uint32_t idOf(char const* name, bool intern, char const** interned = nullptr) noexcept;

  // One consumer (the flusher): names added since its last call, the first one numbered *first.
  void takeNew(uint32_t* first, std::vector<std::string>* out);

  // Any thread: the names of `ids` ("" for an unknown id), under one lock.
  std::vector<std::string> namesOf(std::vector<uint32_t> const& ids) const;

 private:
  uint64_t const uid_;  // keys the thread-local cache: never reused, unlike an address
  mutable std::mutex mu_;
  std::deque<std::string> names_;  // a deque never moves its elements: interned pointers stay valid
  std::unordered_map<std::string_view, uint32_t> index_;
  uint32_t sent_ = 0;               // the consumer's: names handed out by takeNew
  std::atomic<uint32_t> count_{0};  // names_.size(), readable without the lock
};

}  // namespace tbs
