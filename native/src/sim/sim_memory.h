// Host memory a simulated build holds, so memory reporting, limits and out-of-memory handling can
// be tested without TensorRT (issue 21 item 6). Real builds hold several times the model's weight
// size, rising through graph optimisation to a peak in tactic selection and falling when the
// engine is serialized; SimMemory follows that shape: the simulator calls rise(f) as it goes and
// the memory held becomes f * target, allocated with mmap and every page written, so it is real
// resident memory (RSS) that a cgroup limit or the kernel's OOM killer sees.
//
// An allocation the kernel refuses (mmap fails: ulimit -v, overcommit off) is reported as
// "out of memory" with the size asked for, the way TensorRT's allocator failures read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tbs::sim {

class SimMemory {
 public:
  // target <= 0: holds nothing, rise() is a no-op.
  explicit SimMemory(int64_t targetBytes);
  ~SimMemory();
  SimMemory(SimMemory const&) = delete;
  SimMemory& operator=(SimMemory const&) = delete;

  // Grows what is held to fraction (0..1) of the target; never shrinks (fall() does). Thread-safe.
  // False, with `error` set, when the kernel refused an allocation.
  bool rise(double fraction, std::string& error);
  // Releases down to fraction of the target (the builder frees its tactic buffers).
  void fall(double fraction);

  int64_t heldBytes() const;
  int64_t targetBytes() const { return target_; }

  // Allocation granularity: small enough that the RSS rises smoothly, large enough that a 100 GiB
  // target is a few thousand mappings.
  static constexpr int64_t kChunkBytes = int64_t{32} << 20;

 private:
  void releaseTo(int64_t bytes);

  int64_t const target_;
  mutable std::mutex mu_;
  struct Chunk {
    void* addr;
    size_t bytes;
  };
  std::vector<Chunk> chunks_;
  int64_t held_ = 0;
};

}  // namespace tbs::sim
