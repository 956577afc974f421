// The ProgressSink every backend reports to: records callbacks from any number of builder
// threads, tracks the phase tree, and runs a flusher thread that turns the records into protocol
// events and hands them to a consumer in batches. Concerns with their own state live in their own
// classes, composed here: NameTable (interning), CancelState (flag and latency bookkeeping),
// Heartbeat, FlushPacer (when the flusher runs), CrashRecord (the open path kept for the host
// after a crash) and EmittedTree (the tree as emitted: repair lookups, retention, snapshots).
// This class keeps the recorder (per-thread queues, open lists, phase words) and the emitter's
// flush (merge by sequence, tree repair decisions, step coalescing).
//
// Cost model (why it is built this way): stepComplete is by far the most frequent callback.
// It touches only a thread-local cache and one atomic word of the phase (no lock, no
// allocation); the flusher later emits the latest step of each phase that moved ("coalescing").
// phaseStart/phaseFinish take no lock either: names resolve through thread-local caches and the
// per-thread lists of open phases, and records go to a per-thread queue, ordered globally by
// one atomic sequence number. (A first version used one mutex for starts/finishes: with 8
// builder threads on 2 cores it collapsed to <1 M callbacks/s with 0.5 s stalls.) Only rare
// callbacks (logs, cache stats) and new names take a mutex. The flusher merges the queues in
// sequence order, repairs the tree where threads raced (a parent finished before its child)
// and is the only place that builds the emitted tree. Nothing in a callback waits on JS, I/O
// or the flusher.
//
// Memory when the consumer stalls (a busy JS thread, a starved flusher): a step never becomes a
// record — it only moves its phase's word — so however many steps arrive, they cost one slot per
// open phase. Queues hold starts, finishes and the rare records, which the protocol never drops;
// downstream, the addon's outbox coalesces steps the same way (event_outbox.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend.h"
#include "cancel_state.h"
#include "clock.h"
#include "crash_record.h"
#include "emitted_tree.h"
#include "events.h"
#include "flush_pacer.h"
#include "heartbeat.h"
#include "name_table.h"
#include "record_queue.h"

namespace tbs {

struct PipelineOptions {
  // The pacing budget (flush_pacer.h): batches at least this far apart while callbacks flow, at
  // once after a quiet spell. The addon passes the JS side's budget (apps/shared/pacing-batcher).
  int flushIntervalMs = 8;
  int heartbeatMs = 1000;    // <= 0 disables heartbeats
  // Finished phases kept for snapshot(); older ones are forgotten (their events were delivered)
  // so that memory stays flat over builds with millions of phases.
  size_t retainFinished = 20000;
  // Where to keep the open phase path for the host to read after a crash (crash_record.h).
  std::string crashRecordPath;
};

// Callbacks that did not fit TensorRT's documented contract; kept so tests and logs can see
// them instead of the tracker silently inventing structure.
struct Anomalies {
  uint64_t reparented = 0;       // parent finished (on another thread) before the child's start
  uint64_t seqGapsSkipped = 0;   // a record never arrived for the final flush (stray thread)
  uint64_t unknownStepName = 0;
  uint64_t unknownFinishName = 0;
  uint64_t unknownParent = 0;
  uint64_t stepOutOfRange = 0;
  uint64_t stepNotRising = 0;
  uint64_t closedByParent = 0;   // children still open when their parent finished
  uint64_t closedAtEnd = 0;      // phases still open when the build ended
  uint64_t afterEnd = 0;         // callbacks after finish()
};

class ProgressPipeline final : public ProgressSink {
 public:
  using Consumer = std::function<void(EventBatch&&)>;

  ProgressPipeline(PipelineOptions options, Consumer consumer);
  ~ProgressPipeline() override;
  ProgressPipeline(ProgressPipeline const&) = delete;
  ProgressPipeline& operator=(ProgressPipeline const&) = delete;

  // Starts the flusher thread. Without it, call flushNow() to drain (unit tests).
  void startFlusher();
  // Drains recorded callbacks into one batch on the calling thread. Not concurrent with the
  // flusher thread (use one or the other).
  void flushNow();

  // ProgressSink
  void phaseStart(char const* name, char const* parent, int32_t nbSteps) noexcept override;
  bool stepComplete(char const* name, int32_t step) noexcept override;
  void phaseFinish(char const* name) noexcept override;
  void log(Severity severity, char const* message) noexcept override;
  void cacheStats(CacheStats const& stats) noexcept override;
  bool cancelRequested() const noexcept override;
  bool waitForCancel(double ms) noexcept override;

  // build.started; call before the backend starts reporting.
  void started(std::string const& backend, std::string const& backendVersion, bool simulated,
               std::string const& gpu, std::string const& computeCapability = {}, int32_t device = -1);
  // Sets the cancel flag (any thread). Returns true for the first request only; later ones are
  // harmless no-ops, as is a request after finish().
  bool requestCancel(CancelReason reason);
  // Ends the build: closes phases left open, emits build.finished last, performs the final
  // flush and stops the flusher. The consumer is never called after this returns.
  void finish(BuildOutcome const& outcome);

  // The tree as emitted so far (at most one flush interval behind the callbacks): every open
  // phase plus the `retainFinished` most recently finished ones, sorted by id. Any thread.
  std::vector<PhaseSnapshot> snapshot() const;
  CancelTimes cancelTimes() const;
  Anomalies anomalies() const;
  int64_t startNs() const { return startNs_; }
  bool finished() const { return closed_.load(std::memory_order_acquire); }
  bool hasStarted() const { return started_.load(std::memory_order_acquire); }

 private:
  static constexpr uint64_t kOpenBit = 1ull << 31;
  static constexpr uint64_t kStepsMask = kOpenBit - 1;
  static constexpr int kInstanceSlots = 8;
  static constexpr int kMaxOpenPerThread = 64;
  static constexpr int kMaxThreads = 1024;
  static constexpr uint32_t kNoName = NameTable::kNoName;

  // A phase instance on the producer side. Nodes are pooled and never freed before the
  // pipeline, so a stale pointer (thread-local cache, another thread's open list) always points
  // at a Node; `word` carries a generation that tells a stale pointer from a live one.
  struct Node {
    // [63..32] generation, bit 31 open, [30..0] stepsDone. A closed word keeps its steps and
    // has generation + 1.
    std::atomic<uint64_t> word{0};
    std::atomic<int64_t> lastStepNs{0};
    std::atomic<bool> dirty{false};
    Node* nextDirty = nullptr;  // published by the CAS on dirtyHead_
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
  };

  struct Record {
    uint64_t seq = 0;  // global order of all records (see recordSeq_)
    int64_t ns = 0;
    EvType type = EvType::kLog;
    Node* node = nullptr;
    uint32_t gen = 0;
    int64_t a = 0, b = 0, c = 0, d = 0, e = 0;
    std::string text;
  };

  // One per builder thread and pipeline: its lock-free record queue and the phases it opened
  // (slots written only by the owner, read by other threads resolving names).
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

  double msSinceStart(int64_t ns) const { return static_cast<double>(ns - startNs_) / 1e6; }
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
  void pushControl(Record&& r);  // with controlMu_ held

  void flusherLoop();
  bool hasWork() const noexcept;  // flusher thread
  void flushOnce(bool final);
  void emit(EventBatch& batch, OutEvent&& ev);
  void closeInView(EventBatch& batch, int64_t id, int64_t ns, bool byParent);
  void closeOpenChildren(EventBatch& batch, int64_t id, int64_t ns);

  PipelineOptions options_;
  Consumer consumer_;
  uint64_t const uid_;
  int64_t const startNs_;
  double const startWallMs_;  // wall clock at t = 0 (protocol: build.started.startedAtMs)

  // Global order of records across all threads: one fetch_add per structural callback.
  std::atomic<uint64_t> recordSeq_{0};

  // Thread registry.
  std::mutex regMu_;
  std::deque<ThreadState> threads_;
  std::atomic<ThreadState*> threadArr_[kMaxThreads] = {};
  std::atomic<int> threadCount_{0};

  NameTable names_;

  // Node pool.
  std::mutex poolMu_;
  std::deque<Node> arena_;
  std::vector<Node*> pool_;

  // Instance counters of root phases and of parents with many distinct child names.
  std::atomic<uint64_t> rootInstances_[kInstanceSlots] = {};
  std::mutex instanceMu_;
  std::unordered_map<uint64_t, int32_t> instanceOverflow_;  // (owner id, name id) -> count

  // Rare records (logs, cache stats, started, cancelling, finished) from any thread.
  std::mutex controlMu_;
  std::vector<Record> control_;
  std::string lastCacheJson_;

  // The crash site: the path of the most recently started open phase (crash_record.h).
  CrashRecord crash_;
  std::string crashError_;
  std::atomic<int64_t> crashShownId_{-1};

  std::atomic<Node*> dirtyHead_{nullptr};
  Heartbeat heartbeat_;

  std::atomic<uint64_t> unknownStep_{0}, unknownFinish_{0}, unknownParent_{0}, stepOutOfRange_{0},
      stepNotRising_{0}, closedByParent_{0}, closedAtEnd_{0}, afterEnd_{0}, reparented_{0}, seqGapsSkipped_{0};

  CancelState cancel_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> started_{false};
  std::atomic<uint64_t> finalSeq_{UINT64_MAX};

  // Flusher side.
  std::thread flusher_;
  FlushPacer pacer_;
  uint64_t emitSeq_ = 0;
  uint64_t expectedSeq_ = 0;
  std::vector<Record> pending_;  // drained but not yet processed (waiting for a seq gap)
  std::vector<Record> spare_;
  std::vector<Node*> carry_;
  uint64_t flushNumber_ = 0;
  bool finalEmitted_ = false;

  EmittedTree tree_;
};

}  // namespace tbs
