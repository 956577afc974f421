#include "sim_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tbs::sim {

SimMemory::SimMemory(int64_t targetBytes) : target_(std::max<int64_t>(0, targetBytes)) {}

SimMemory::~SimMemory() { releaseTo(0); }

bool SimMemory::rise(double fraction, std::string& error) {
  if (target_ == 0) return true;
  fraction = std::clamp(fraction, 0.0, 1.0);
  int64_t want = static_cast<int64_t>(static_cast<double>(target_) * fraction);
  std::lock_guard<std::mutex> lk(mu_);
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  while (held_ < want) {
    size_t bytes = static_cast<size_t>(std::min(kChunkBytes, want - held_));
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      error = "out of memory: the simulated builder could not allocate " + std::to_string(bytes) + " bytes of host memory (" +
              std::strerror(e) + "); " + std::to_string(held_) + " bytes were held";
      return false;
    }
    // Write every page: untouched anonymous pages are not resident and would not count.
    auto* c = static_cast<unsigned char*>(p);
    for (size_t off = 0; off < bytes; off += static_cast<size_t>(page)) c[off] = 0x5a;
    chunks_.push_back({p, bytes});
    held_ += static_cast<int64_t>(bytes);
  }
  return true;
}

void SimMemory::fall(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  std::lock_guard<std::mutex> lk(mu_);
  int64_t keep = static_cast<int64_t>(static_cast<double>(target_) * fraction);
  while (!chunks_.empty() && held_ - static_cast<int64_t>(chunks_.back().bytes) >= keep) {
    munmap(chunks_.back().addr, chunks_.back().bytes);
    held_ -= static_cast<int64_t>(chunks_.back().bytes);
    chunks_.pop_back();
  }
}

void SimMemory::releaseTo(int64_t bytes) {
  std::lock_guard<std::mutex> lk(mu_);
  while (!chunks_.empty() && held_ > bytes) {
    munmap(chunks_.back().addr, chunks_.back().bytes);
    held_ -= static_cast<int64_t>(chunks_.back().bytes);
    chunks_.pop_back();
  }
}

int64_t SimMemory::heldBytes() const {
  std::lock_guard<std::mutex> lk(mu_);
  return held_;
}

}  // namespace tbs::sim
