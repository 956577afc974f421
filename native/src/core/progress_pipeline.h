// The ProgressSink every backend reports to: records callbacks from any number of builder
// threads, tracks the phase tree, holds the cancel state, and runs a flusher thread that turns
// the records into protocol events and hands them to a consumer in batches.
//
// Cost model (why it is built this way): stepComplete is by far the most frequent callback.
// It touches only a thread-local cache and one atomic word of the phase (no lock, no
// allocation); the flusher later emits the latest step of each phase that moved ("coalescing").
// phaseStart/phaseFinish/log take one short mutex (name lookup among open phases, append a
// record); nothing in a callback waits on JS, I/O or the flusher.
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
#include "clock.h"
#include "events.h"

namespace tbs {

struct PipelineOptions {
  int flushIntervalMs = 25;  // cadence of batches while callbacks flow (UI refresh ~40 Hz)
  int heartbeatMs = 1000;    // <= 0 disables heartbeats
  // Finished phases kept for snapshot(); older ones are forgotten (their events were delivered)
  // so that memory stays flat over builds with millions of phases.
  size_t retainFinished = 20000;
};

// A phase as snapshot() reports it (protocol PhaseNode).
struct PhaseSnapshot {
  int32_t id = 0;
  int32_t parentId = -1;  // -1 = root
  std::string name;
  int32_t nbSteps = 0;
  int32_t instance = 0;
  int32_t stepsDone = 0;
  double startT = 0;
  double endT = -1;  // -1 = still open
  bool early = false;
};

// Callbacks that did not fit TensorRT's documented contract; kept so tests and logs can see
// them instead of the tracker silently inventing structure.
struct Anomalies {
  uint64_t unknownStepName = 0;
  uint64_t unknownFinishName = 0;
  uint64_t unknownParent = 0;
  uint64_t stepOutOfRange = 0;
  uint64_t stepNotRising = 0;
  uint64_t closedByParent = 0;   // children still open when their parent finished
  uint64_t closedAtEnd = 0;      // phases still open when the build ended
  uint64_t afterEnd = 0;         // callbacks after finish()
};

struct CancelTimes {
  int64_t requestedNs = -1;   // when requestCancel() first set the flag
  int64_t firstFalseNs = -1;  // first stepComplete that returned false
  int64_t endNs = -1;         // finish()
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
               std::string const& gpu);
  // Sets the cancel flag (any thread). Returns true for the first request only; later ones are
  // harmless no-ops, as is a request after finish().
  bool requestCancel(CancelReason reason);
  // Ends the build: closes phases left open, emits build.finished last, performs the final
  // flush and stops the flusher. The consumer is never called after this returns.
  void finish(BuildOutcome const& outcome);

  std::vector<PhaseSnapshot> snapshot() const;
  CancelTimes cancelTimes() const;
  Anomalies anomalies() const;
  int64_t startNs() const { return startNs_; }
  bool finished() const { return closed_.load(std::memory_order_acquire); }

 private:
  // A phase instance on the producer side. Nodes live in arena_ and are recycled after the
  // flusher has emitted their finish, so a stale pointer in a thread-local cache always points
  // at a Node; `word` carries a generation so such a pointer is recognised as stale.
  struct Node {
    // [63..32] generation, bit 31 open, [30..0] stepsDone. The only field builder threads
    // write without the mutex (stepComplete).
    std::atomic<uint64_t> word{0};
    std::atomic<int64_t> lastStepNs{0};
    std::atomic<bool> dirty{false};
    Node* nextDirty = nullptr;  // published by the CAS on dirtyHead_
    // Guarded by mu_.
    uint32_t gen = 0;
    int32_t id = -1;
    Node* parent = nullptr;
    uint32_t nameId = 0;
    int32_t nbSteps = 0;
    int32_t depth = 0;
    std::thread::id owner;
    int32_t openChildren = 0;
    std::vector<std::pair<uint32_t, int32_t>> childInstances;  // name id -> count
    // Flusher-owned.
    uint32_t flGen = UINT32_MAX;  // generation whose start the flusher has emitted
    int32_t flEmittedSteps = 0;
  };

  struct Record {
    Record(EvType t, int64_t at) : type(t), ns(at) {}
    EvType type;
    int64_t ns;
    Node* node = nullptr;
    uint32_t gen = 0;
    int64_t a = 0, b = 0, c = 0, d = 0, e = 0;
    std::string text;
  };

  struct ViewEntry {
    int32_t parentId;
    uint32_t nameId;
    int32_t nbSteps;
    int32_t instance;
    int32_t stepsDone;
    double startT;
    double endT;
    bool early;
  };

  static constexpr uint64_t kOpenBit = 1ull << 31;
  static constexpr uint64_t kStepsMask = kOpenBit - 1;

  double msSinceStart(int64_t ns) const { return static_cast<double>(ns - startNs_) / 1e6; }
  void touch(int64_t now) noexcept;
  bool resolveForStep(char const* name, Node*& node, uint32_t& gen, int32_t& nbSteps);
  void markDirty(Node* node) noexcept;

  // All below with mu_ held.
  uint32_t internLocked(std::string_view name);
  int64_t findNameLocked(std::string_view name) const;
  Node* findOpenLocked(uint32_t nameId) const;
  Node* allocNodeLocked();
  void closeLocked(Node* node, int64_t now, bool byParent);

  void flusherLoop();
  void flushOnce(bool final);
  void emit(EventBatch& batch, OutEvent&& ev);

  PipelineOptions options_;
  Consumer consumer_;
  uint64_t const uid_;
  int64_t const startNs_;
  double const startWallMs_;  // wall clock at t = 0 (protocol: build.started.startedAtMs)

  // Producer side.
  mutable std::mutex mu_;
  std::deque<std::string> names_;  // interned; stable storage (deque never moves elements)
  std::unordered_map<std::string_view, uint32_t> nameIndex_;
  std::vector<std::vector<Node*>> openByName_;  // by name id; most recent last
  std::deque<Node> arena_;                       // nodes never move; recycled via freeList_
  std::vector<Node*> freeList_;
  std::vector<Record> queue_;
  std::vector<std::pair<uint32_t, int32_t>> rootInstances_;
  int32_t nextId_ = 0;
  std::string lastCacheJson_;
  Anomalies anomalies_;
  std::atomic<Node*> dirtyHead_{nullptr};
  std::atomic<int64_t> lastCallbackNs_;
  std::atomic<uint64_t> stepOutOfRange_{0};
  std::atomic<uint64_t> stepNotRising_{0};
  std::atomic<uint64_t> unknownStep_{0};
  std::atomic<uint64_t> afterEnd_{0};

  // Cancel state.
  std::atomic<bool> cancel_{false};
  std::atomic<int64_t> cancelRequestedNs_{-1};
  std::atomic<int64_t> firstFalseNs_{-1};
  std::atomic<int64_t> endNs_{-1};
  std::atomic<bool> closed_{false};
  mutable std::mutex cancelMu_;
  std::condition_variable cancelCv_;

  // Flusher side.
  std::thread flusher_;
  std::mutex wakeMu_;
  std::condition_variable wakeCv_;
  bool stopFlusher_ = false;
  bool abandonFlusher_ = false;
  uint64_t nextSeq_ = 0;
  uint32_t namesSent_ = 0;
  int64_t nextHeartbeatNs_ = 0;
  std::vector<Node*> carry_;
  std::vector<Record> work_;  // reused buffer swapped with queue_
  bool finalEmitted_ = false;

  // Snapshot view, written by whoever flushes, read by snapshot().
  mutable std::mutex viewMu_;
  std::unordered_map<int32_t, ViewEntry> view_;
  std::deque<int32_t> finishedOrder_;
};

}  // namespace tbs
