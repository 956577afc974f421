#include "name_table.h"

#include <atomic>
#include <cstring>

namespace tbs {
namespace {

std::atomic<uint64_t> gNextTableUid{1};

struct CacheEntry {
  uint64_t uid = 0;
  char const* raw = nullptr;
  char const* interned = nullptr;
  uint32_t id = 0;
};
thread_local CacheEntry tCache[16];

}  // namespace

NameTable::NameTable() : uid_(gNextTableUid.fetch_add(1)) {}

uint32_t NameTable::idOf(char const* name, bool intern, char const** interned) noexcept {
  CacheEntry& e = tCache[(reinterpret_cast<uintptr_t>(name) >> 3) % 16];
  if (e.uid == uid_ && e.raw == name && std::strcmp(e.interned, name) == 0) {
    if (interned != nullptr) *interned = e.interned;
    return e.id;
  }
  try {
    std::lock_guard<std::mutex> lk(mu_);
    std::string_view key(name);
    auto it = index_.find(key);
    uint32_t id;
    if (it != index_.end()) {
      id = it->second;
    } else {
      if (!intern) return kNoName;
      names_.emplace_back(key);
      id = static_cast<uint32_t>(names_.size() - 1);
      index_.emplace(std::string_view(names_.back()), id);
      count_.store(static_cast<uint32_t>(names_.size()), std::memory_order_release);
    }
    e = CacheEntry{uid_, name, names_[id].c_str(), id};
    if (interned != nullptr) *interned = e.interned;
    return id;
  } catch (...) {
    return kNoName;
  }
}

void NameTable::takeNew(uint32_t* first, std::vector<std::string>* out) {
  // Nearly every flush finds no new name: it then takes no lock a builder thread could need.
  if (count_.load(std::memory_order_acquire) == sent_) {
    *first = sent_;
    return;
  }
  std::lock_guard<std::mutex> lk(mu_);
  *first = sent_;
  for (auto i = sent_; i < names_.size(); ++i) out->push_back(names_[i]);
  sent_ = static_cast<uint32_t>(names_.size());
}

std::vector<std::string> NameTable::namesOf(std::vector<uint32_t> const& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  std::lock_guard<std::mutex> lk(mu_);
  for (uint32_t id : ids) out.push_back(id < names_.size() ? names_[id] : std::string());
  return out;
}

}  // namespace tbs
