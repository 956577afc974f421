// The crash site: a small file that always names the open phase path of a running build, so the
// host can say where a worker died ("crashed in Building engine › … › Timing tactics"). Events
// still queued in the native layer die with the process; this record does not: it is a
// MAP_SHARED file mapping, and the kernel keeps the dirty pages of a shared file mapping when the
// process that wrote them is killed (SIGABRT, SIGSEGV, SIGKILL, OOM killer alike).
//
// Layout (little-endian, version 1), read by the host after the worker has exited:
//   header  [0, 64):  "TBSCRASH" | u32 version = 1 | u32 slotCount | u32 slotSize | zeros
//   slot i  [64 + i*slotSize, +slotSize):
//           u64 seqBegin | u32 depth | u32 textBytes | text (UTF-8 names joined by '\n',
//           outermost first) ... | u64 seqEnd in the slot's last 8 bytes
// A write takes the next sequence number v, writes into slot v % slotCount: seqBegin = v, the
// text, then seqEnd = v. A process that dies mid-write leaves seqBegin != seqEnd in at most the
// slots being written; the reader takes the complete slot with the highest v. Writers never lock
// (several builder threads may write at once; each write goes to its own slot unless
// slotCount writes overlap, and then the seq check rejects the torn slot).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tbs {

class CrashRecord {
 public:
  static constexpr uint32_t kVersion = 1;
  static constexpr uint32_t kSlots = 4;
  static constexpr uint32_t kSlotSize = 4096;
  static constexpr size_t kHeaderSize = 64;
  static constexpr size_t kFileSize = kHeaderSize + size_t{kSlots} * kSlotSize;
  // Slot bytes available for the names: seqBegin, depth, textBytes in front, seqEnd behind.
  static constexpr size_t kTextCapacity = kSlotSize - 16 - 8;

  CrashRecord() = default;
  ~CrashRecord();
  CrashRecord(CrashRecord const&) = delete;
  CrashRecord& operator=(CrashRecord const&) = delete;

  // Creates (or truncates) the file and maps it. On failure the record stays inactive and the
  // returned message says why (the build goes on without a crash site).
  std::string open(std::string const& path);
  bool active() const { return base_ != nullptr; }

  // Records the path `names[0..depth)` (outermost first). Paths longer than the slot lose their
  // outermost names: the deepest phase is the fact that matters. Any thread, never blocks.
  void write(char const* const* names, int depth) noexcept;

 private:
  unsigned char* base_ = nullptr;
  int fd_ = -1;
  std::atomic<uint64_t> seq_{0};
};

}  // namespace tbs
