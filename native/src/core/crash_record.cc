#include "crash_record.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tbs {
namespace {

void put32(unsigned char* p, uint32_t v) { std::memcpy(p, &v, 4); }

// The compiler fences keep seqBegin before the text and seqEnd after it in program order. The
// CPU's store order does not matter: the record is read only after this process has died, when
// every store it executed is in the page cache.
void put64(unsigned char* p, uint64_t v) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memcpy(p, &v, 8);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

}  // namespace

CrashRecord::~CrashRecord() {
  if (base_ != nullptr) munmap(base_, kFileSize);
  if (fd_ >= 0) ::close(fd_);
}

std::string CrashRecord::open(std::string const& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create the crash record " + path + ": " + std::strerror(errno);
  if (ftruncate(fd, static_cast<off_t>(kFileSize)) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return "cannot size the crash record " + path + ": " + why;
  }
  void* p = mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return "cannot map the crash record " + path + ": " + why;
  }
  base_ = static_cast<unsigned char*>(p);
  fd_ = fd;
  std::memcpy(base_, "TBSCRASH", 8);
  put32(base_ + 8, kVersion);
  put32(base_ + 12, kSlots);
  put32(base_ + 16, kSlotSize);
  return {};
}

void CrashRecord::write(char const* const* names, int depth) noexcept {
  if (base_ == nullptr) return;
  // Drop outermost names until the rest fits; a single name longer than the slot is cut.
  size_t total = 0;
  int first = depth;
  while (first > 0) {
    size_t len = std::strlen(names[first - 1]) + (first < depth ? 1 : 0);
    if (total + len > kTextCapacity && first < depth) break;
    total += len;
    --first;
  }
  uint64_t v = seq_.fetch_add(1, std::memory_order_relaxed) + 1;
  unsigned char* slot = base_ + kHeaderSize + (v % kSlots) * kSlotSize;
  put64(slot, v);
  unsigned char* text = slot + 16;
  size_t used = 0;
  for (int i = first; i < depth; ++i) {
    if (i > first) text[used++] = '\n';
    size_t len = std::min(std::strlen(names[i]), kTextCapacity - used);
    // A cut never splits a UTF-8 sequence: back off over continuation bytes.
    if (used + len == kTextCapacity) {
      while (len > 0 && (static_cast<unsigned char>(names[i][len]) & 0xC0) == 0x80) --len;
    }
    std::memcpy(text + used, names[i], len);
    used += len;
  }
  put32(slot + 8, static_cast<uint32_t>(depth - first));
  put32(slot + 12, static_cast<uint32_t>(used));
  put64(slot + kSlotSize - 8, v);
}

}  // namespace tbs
