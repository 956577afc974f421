// The ProgressSink every backend reports to: records callbacks from any number of builder
// threads, tracks the phase tree, and runs a flusher thread that turns the records into protocol
// events and hands them to a consumer in batches. This class is the emitter — the flusher's
// merge by sequence number, tree repair (a parent finished on another thread before its child's
// start was ordered; children still open when their parent ends), step coalescing and batches —
// and it composes the parts with a concern of their own:
//   Recorder      the producer side: per-thread record queues, open lists, phase words (recorder.h)
//   NameTable     interned phase names
//   EmittedTree   the tree as emitted: repair lookups, retention, snapshots
//   CancelState   the cancel flag and its latency bookkeeping
//   Heartbeat     silence reports while the builder is quiet
//   FlushPacer    when the flusher runs: at once after a quiet spell, one batch per budget under load
//   CrashRecord   the open phase path, kept in a file that survives the process
// Rare callbacks (logs, cache stats) and the build's own records (started, cancelling, finished)
// are taken under one mutex here. Nothing in a callback waits on JS, I/O or the flusher, with one
// designed exception: back-pressure. When the consumer's bounded outbox is full (a reader that
// stopped reading), phaseStart, phaseFinish and log wait at the RoomGate (room_gate.h) until
// there is room again or the build is cancelled; stepComplete never waits. A flusher that falls
// behind (starved of CPU, often by the builder's own threads) is not waited for either: the
// builder thread that notices flushes in its place (helpFlush). Past that bound a builder may
// wait for one thing only: the lock of a flush another thread is running (kFlushChunk records
// at most while it catches up), before it flushes itself. That wait bounds memory when the
// producers make records faster than one core flushes them (bench:native's storm).
//
// Memory when the consumer stalls (a busy JS thread, a starved flusher): a step never becomes a
// record — it only moves its phase's word — so however many steps arrive, they cost one slot per
// open phase. Queues hold starts, finishes and the rare records, which the protocol never drops;
// downstream, the addon's outbox coalesces steps the same way (event_outbox.h) and is bounded in
// bytes, with the builder threads waiting past the bound (bounded_outbox.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
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
#include "record_merge.h"
#include "record_queue.h"
#include "recorder.h"
#include "room_gate.h"

namespace tbs {

struct PipelineOptions {
  // The pacing budget (flush_pacer.h): batches at least this far apart while callbacks flow, at
  // once after a quiet spell. The addon passes the JS side's budget (apps/shared/pacing-batcher).
  int flushIntervalMs = 8;
  int heartbeatMs = 1000;  // <= 0 disables heartbeats
  // Finished phases kept for snapshot(); older ones are forgotten (their events were delivered)
  // so that memory stays flat over builds with millions of phases.
  size_t retainFinished = 20000;
  // Where to keep the open phase path for the host to read after a crash (crash_record.h).
  std::string crashRecordPath;
  // Records (starts, finishes, logs) the builder threads may have queued ahead of the flusher
  // before one of them flushes in its place (helpFlush). Far above what one flush takes at 5 M
  // callbacks/s (about 11,000 records per 8 ms budget), so a flusher that gets its core is never
  // helped. 0 disables (flushNow() tests).
  uint64_t maxQueuedRecords = 65536;
};

// Callbacks that did not fit TensorRT's documented contract; kept so tests and logs can see
// them instead of the tracker silently inventing structure.
struct Anomalies {
  uint64_t reparented = 0;      // parent finished (on another thread) before the child's start
  uint64_t seqGapsSkipped = 0;  // a record never arrived for the final flush (stray thread)
  uint64_t unknownStepName = 0;
  uint64_t unknownFinishName = 0;
  uint64_t unknownParent = 0;
  uint64_t stepOutOfRange = 0;
  uint64_t stepNotRising = 0;
  uint64_t closedByParent = 0;  // children still open when their parent finished
  uint64_t closedAtEnd = 0;     // phases still open when the build ended
  uint64_t afterEnd = 0;        // callbacks after finish()
};

class ProgressPipeline final : public ProgressSink {
 public:
  // Called by one flush at a time, on the flusher thread or on a builder thread flushing in its
  // place (helpFlush): it must not rely on the thread it runs on, nor wait for a callback.
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
  void started(std::string const& backend, std::string const& backendVersion, bool simulated, std::string const& gpu,
               std::string const& computeCapability = {}, int32_t device = -1, std::string const& cudaDriver = {});
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
  // The flusher thread runs ahead of the build's priority (thread_priority.h; false where the
  // OS did not allow it, or before the flusher started).
  bool flusherFavoured() const { return flusherFavoured_.load(std::memory_order_relaxed); }
  // Where the builder threads wait while the consumer is full: the consumer's bounded outbox
  // closes and opens it (bounded_outbox.h); a cancel, finish() and destruction release it.
  RoomGate& room() { return room_; }
  uint64_t maxQueuedRecords() const { return options_.maxQueuedRecords; }
  // What the builder threads did about a flusher past maxQueuedRecords (bench:native reports
  // them): flushes they ran in its place and the builder time those took; how often one found a
  // flush running and waited for its end, and the time that took (both summed over threads);
  // and the most records seen queued at a look (in records of ~100 bytes).
  uint64_t helpedFlushes() const { return helpedFlushes_.load(std::memory_order_relaxed); }
  int64_t helpedFlushNs() const { return helpedFlushNs_.load(std::memory_order_relaxed); }
  uint64_t flushLockWaits() const { return flushLockWaits_.load(std::memory_order_relaxed); }
  int64_t flushLockWaitedNs() const { return flushLockWaitedNs_.load(std::memory_order_relaxed); }
  uint64_t peakQueuedRecords() const { return peakQueued_.load(std::memory_order_relaxed); }
  // The most records one flush takes outside the final one, so that a flush holds flushMu_ (and a
  // builder that waits for it) only briefly (docs/benchmarks.md has the time). Above what one
  // budget takes in normal operation (about 11,000 records per 8 ms at 5 M callbacks/s), so only a
  // flush that is catching up is cut; it goes on at once.
  static constexpr uint64_t kFlushChunk = 16384;
  // A builder thread looks at the flusher's lag once per this many of its records, so the
  // queues may pass maxQueuedRecords by this much per thread.
  static constexpr uint32_t kQueueCheckEvery = 64;

 private:
  using Node = Recorder::Node;
  using Record = Recorder::Record;
  static constexpr uint64_t kOpenBit = Recorder::kOpenBit;
  static constexpr uint64_t kStepsMask = Recorder::kStepsMask;

  double msSinceStart(int64_t ns) const { return static_cast<double>(ns - startNs_) / 1e6; }
  uint64_t pushControl(Record&& r);  // with controlMu_ held; returns the record's sequence number

  // Builder thread, in phaseStart/phaseFinish/log: returns at once in normal operation (two
  // loads); waits at the RoomGate while the consumer is full (back-pressure, room_gate.h), and
  // flushes in the flusher's place while the record queues hold maxQueuedRecords.
  void waitForRoom() noexcept;
  void helpFlush(uint64_t queued) noexcept;

  void flusherLoop();
  bool hasWork() const noexcept;  // flusher thread
  // Returns whether it stopped at `maxRecords` with more records published (flush again now).
  bool flushOnce(bool final, uint64_t maxRecords = UINT64_MAX);
  bool flushChunk(bool final) noexcept;
  // The parts of a flush (progress_pipeline.cc): take the coalesced steps, apply the records in
  // sequence order with the steps between them (repairing the tree), emit.
  struct StepCandidate {
    Node* node;
    int64_t ns;
    uint32_t gen;
    int32_t stepsDone;
    bool open;
  };
  void takeStepCandidates(std::vector<StepCandidate>& out);
  void syncQueues();
  Record* nextRecord(bool final, uint64_t limit, std::unique_lock<std::mutex>& view, int64_t& finalDeadlineNs);
  bool applyRecords(EventBatch& batch, bool final, uint64_t limit, std::vector<Node*>& retire, OutEvent& finished);
  void emitBatch(EventBatch&& batch, bool final, bool haveFinished, OutEvent&& finished, std::vector<Node*> const& retire);
  void emit(EventBatch& batch, OutEvent&& ev);
  void closeInView(EventBatch& batch, int64_t id, int64_t ns, bool byParent);
  void closeOpenChildren(EventBatch& batch, int64_t id, int64_t ns);

  PipelineOptions options_;
  Consumer consumer_;
  int64_t const startNs_;
  double const startWallMs_;  // wall clock at t = 0 (protocol: build.started.startedAtMs)

  NameTable names_;
  FlushPacer pacer_;
  // Declared before the recorder, which writes it.
  CrashRecord crash_;
  std::string crashError_;
  Recorder recorder_;

  // Rare records (logs, cache stats, started, cancelling, finished) from any thread: one queue
  // whose producer side is used only with controlMu_ held; the flusher reads it without the lock.
  std::mutex controlMu_;
  SpscChunkQueue<Record> control_;
  std::string lastCacheJson_;

  Heartbeat heartbeat_;

  std::atomic<uint64_t> closedByParent_{0}, closedAtEnd_{0}, afterEnd_{0}, reparented_{0}, seqGapsSkipped_{0};

  CancelState cancel_;
  RoomGate room_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> started_{false};
  std::atomic<bool> flusherFavoured_{false};
  // A cancel requested before build.started (the addon announces on the build thread, where
  // TensorRT is loaded): its build.cancelling follows build.started, which is always first.
  bool cancelBeforeStart_ = false;  // with controlMu_ held
  Record pendingCancel_;
  std::atomic<uint64_t> finalSeq_{UINT64_MAX};

  // Records taken off the queues so far (the flusher's expectedSeq_, published for waitForRoom).
  // Written by every flush: away from what the callbacks read (closed_, cancel_, room_).
  alignas(64) std::atomic<uint64_t> drainedSeq_{0};
  std::atomic<bool> carrying_{false};  // carry_ is not empty (published for hasWork)
  std::atomic<bool> flusherRunning_{false};
  std::atomic<uint64_t> helpedFlushes_{0}, flushLockWaits_{0}, peakQueued_{0};
  std::atomic<int64_t> helpedFlushNs_{0}, flushLockWaitedNs_{0};
  std::atomic<int> helpersWaiting_{0};

  // Flusher side: everything below is used by one flush at a time, under flushMu_ (the flusher
  // thread, or a builder thread flushing in its place).
  alignas(64) std::mutex flushMu_;
  std::thread flusher_;
  uint64_t emitSeq_ = 0;
  uint64_t expectedSeq_ = 0;
  RecordMerge<Record> merge_;                         // the control queue and every builder thread's queue
  std::vector<StepCandidate> candidates_, deferred_;  // reused each flush (capacity kept)
  std::vector<Node*> dirtyTaken_, retire_;
  std::vector<Node*> carry_;
  uint64_t flushNumber_ = 0;
  bool finalEmitted_ = false;

  EmittedTree tree_;
};

}  // namespace tbs
