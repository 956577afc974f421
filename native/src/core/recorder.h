// The producer side of the pipeline: what a builder thread does inside a callback. It turns
// phaseStart/stepComplete/phaseFinish into records on the calling thread's own lock-free queue
// (globally ordered by one atomic sequence number) and keeps the state the next callbacks need:
// the open phases of each thread (parent lookup by name), the phase nodes with their step words,
// instance counters, and the list of phases whose steps moved. The flusher (ProgressPipeline)
// reads the queues and the list; nothing here waits on it.
//
// Cost model: stepComplete touches a thread-local cache and one atomic word of its phase (no
// lock, no allocation), and queues its phase for the flusher only the first time it moves after
// a flush. phaseStart/phaseFinish take no lock either: names resolve through NameTable's
// thread-local cache and the per-thread open lists. (A first version used one mutex for
// starts/finishes: with 8 builder threads on 2 cores it collapsed to <1 M callbacks/s with 0.5 s
// stalls.) Only new names, new threads and node-pool refills take a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cancel_state.h"
#include "crash_record.h"
#include "events.h"
#include "flush_pacer.h"
#include "name_table.h"
#include "record_queue.h"

namespace tbs {

class Recorder {
 public:
  static constexpr uint64_t kOpenBit = 1ull << 31;
  static constexpr uint64_t kStepsMask = kOpenBit - 1;
  static constexpr int kInstanceSlots = 8;
  static constexpr int kMaxOpenPerThread = 64;
  static constexpr int kMaxThreads = 1024;
  static constexpr uint32_t kNoName = NameTable::kNoName;

  // A phase instance on the producer side. Nodes are pooled and never freed before the
  // recorder, so a stale pointer (thread-local cache, another thread's open list) always points
  // at a Node; `word` carries a generation that tells a stale pointer from a live one.
  // A cache line of its own at least: nodes are recycled across threads (the flusher retires
  // them in finish order), so unaligned neighbours in the arena were often two threads' open
  // phases, and each step's CAS of its word took the other thread's line from its core.
  struct alignas(64) Node {
    // [63..32] generation, bit 31 open, [30..0] stepsDone. A closed word keeps its steps and
    // has generation + 1.
    std::atomic<uint64_t> word{0};
    std::atomic<int64_t> lastStepNs{0};
    std::atomic<bool> dirty{false};
    Node* nextDirty = nullptr;  // published by the CAS on the dirty list's head
    // Written by the starting thread before the node is published; read by other threads and
    // validated against `word` afterwards (hence atomics).
    std::atomic<int64_t> id{-1};
    std::atomic<uint32_t> nameId{0};
    std::atomic<int32_t> nbSteps{0};
    std::atomic<uint64_t> instances[kInstanceSlots] = {};  // (child name id + 1) << 32 | count
    // For the crash record only: the interned name and the parent as it was at the start.
    std::atomic<char const*> nameStr{nullptr};
    std::atomic<Node*> parent{nullptr};
    std::atomic<uint32_t> parentGen{0};
    // Flusher-owned.
    uint32_t flGen = UINT32_MAX;  // generation whose start was emitted and is not closed yet
    int32_t flEmittedSteps = 0;
    uint64_t flCandidateOf = 0;  // the flush that last took it as a step candidate
    uint32_t flSlot = 0;         // its phase's slot in the emitted tree while flGen is live
  };

  struct Record {
    uint64_t seq = 0;  // global order of all records (nextSeq())
    int64_t ns = 0;
    EvType type = EvType::kLog;
    Node* node = nullptr;
    uint32_t gen = 0;
    int64_t a = 0, b = 0, c = 0, d = 0, e = 0;
    std::string text;
  };

  // Callbacks that did not fit TensorRT's documented contract (reported as Anomalies).
  struct Counters {
    std::atomic<uint64_t> unknownStep{0}, unknownFinish{0}, unknownParent{0}, stepOutOfRange{0}, stepNotRising{0};
  };

  // Several recorders (builds) may live in one process: the thread-local caches are keyed by a
  // uid that is never reused. `crash` is written on every start and finish when it is active.
  // `cancel` and `ended` are the pipeline's: a step checks them after taking its time.
  Recorder(NameTable& names, FlushPacer& pacer, CrashRecord& crash, CancelState const& cancel, std::atomic<bool> const& ended);
  ~Recorder();
  Recorder(Recorder const&) = delete;
  Recorder& operator=(Recorder const&) = delete;

  // Builder threads. `now` is the callback's timestamp.
  void phaseStart(char const* name, char const* parent, int32_t nbSteps, int64_t now) noexcept;
  void phaseFinish(char const* name, int64_t now) noexcept;
  // A step reads the clock only when it is the first of its phase since the flusher last looked (or
  // the thread has no time yet); the others take the time of the thread's latest timed callback
  // (its start, finish or first step since that flush), so a step's time is at most one flush
  // interval early, and exact whenever steps are further apart than that. Reading the clock (rdtsc
  // and its fence) was most of a step's cost on the VMs we measure (docs/benchmarks.md), and a fast
  // run of steps all within one interval coalesces into one event anyway. The time is taken before
  // the cancel flag is read, so a step recorded as completed is never later than the cancel request
  // (cancel_state.h); `*now` is the time used.
  enum class StepResult { kRecorded, kCancelled, kEnded };
  StepResult stepComplete(char const* name, int32_t step, int64_t* now) noexcept;

  // Any thread: the sequence number of a record made elsewhere (the rare control records).
  uint64_t nextSeq() noexcept { return seq_.fetch_add(1, std::memory_order_seq_cst); }

  // Flusher side. Sequentially consistent loads: see flush_pacer.h.
  uint64_t issued() const noexcept { return seq_.load(std::memory_order_seq_cst); }
  bool anyDirty() const noexcept { return dirtyHead_.load(std::memory_order_seq_cst) != nullptr; }
  // The phases whose steps moved since the last call, linked through nextDirty.
  Node* takeDirty() noexcept { return dirtyHead_.exchange(nullptr, std::memory_order_seq_cst); }
  // The builder threads' record queues, numbered in the order the threads first called; the
  // number only grows. The flusher merges them by sequence number (record_merge.h).
  int queueCount() const noexcept { return threadCount_.load(std::memory_order_acquire); }
  SpscChunkQueue<Record>* queue(int t) noexcept { return &threadArr_[t].load(std::memory_order_acquire)->queue; }
  // Nodes whose finish the flusher has processed: back to the pool (never takes a lock).
  void retire(std::vector<Node*> const& nodes);

  Counters const& counters() const { return counters_; }

 private:
  // One per builder thread: its record queue and the phases it opened (slots written only by
  // the owner, read by other threads resolving names).
  struct ThreadState {
    std::thread::id tid;
    SpscChunkQueue<Record> queue;
    std::atomic<Node*> open[kMaxOpenPerThread] = {};
    std::atomic<uint32_t> openGen[kMaxOpenPerThread] = {};
    std::atomic<int> openCount{0};
    std::vector<Node*> spare;  // owner only
  };

  struct Found {
    Node* node = nullptr;
    uint32_t gen = 0;
    int64_t id = -1;
    int32_t nbSteps = 0;
  };

  ThreadState* self() noexcept;
  void recordCrashPath(Node* n) noexcept;
  Found latestOpen() noexcept;
  bool tryNode(Node* n, uint32_t slotGen, uint32_t nameId, Found& out) const noexcept;
  Found findOpen(uint32_t nameId, ThreadState* self) noexcept;
  void pushOpen(ThreadState* ts, Node* n, uint32_t gen) noexcept;
  void removeOpen(ThreadState* ts, Node* n, uint32_t gen) noexcept;
  int32_t bumpInstance(std::atomic<uint64_t>* slots, int64_t ownerId, uint32_t nameId) noexcept;
  Node* allocNode(ThreadState* ts);
  void markDirty(Node* node) noexcept;

  NameTable& names_;
  FlushPacer& pacer_;
  CrashRecord& crash_;
  CancelState const& cancel_;
  std::atomic<bool> const& ended_;
  uint64_t const uid_;

  // Global order of records across all threads: one fetch_add per structural callback. On a
  // line of its own: the fields above are read by every step (uid_, cancel_, ended_), and a
  // start or finish on another core would otherwise take their line away each time.
  alignas(64) std::atomic<uint64_t> seq_{0};

  // Thread registry.
  alignas(64) std::mutex regMu_;
  std::deque<ThreadState> threads_;
  std::atomic<ThreadState*> threadArr_[kMaxThreads] = {};
  std::atomic<int> threadCount_{0};

  // Node pool: retired nodes in chunks of up to kRefill, pushed lock-free by the flusher and
  // popped by producers under poolMu_ (producers only), which also guards the arena.
  static constexpr size_t kRefill = 64;
  struct FreeChunk {
    std::vector<Node*> nodes;
    FreeChunk* next = nullptr;
  };
  std::mutex poolMu_;
  std::deque<Node> arena_;
  std::atomic<FreeChunk*> freeChunks_{nullptr};

  // Instance counters of root phases and of parents with many distinct child names.
  std::atomic<uint64_t> rootInstances_[kInstanceSlots] = {};
  std::mutex instanceMu_;
  std::unordered_map<uint64_t, int32_t> instanceOverflow_;  // (owner id, name id) -> count

  // The crash site shows the most recently started open phase.
  std::atomic<int64_t> crashShownId_{-1};

  alignas(64) std::atomic<Node*> dirtyHead_{nullptr};
  alignas(64) Counters counters_;
};

}  // namespace tbs
