#include "progress_pipeline.h"

#include "thread_priority.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "json_writer.h"

namespace tbs {
namespace {

std::string cacheStatsJson(CacheStats const& s) {
  JsonObject o;
  o.integer("entriesBefore", s.entriesBefore).integer("entriesAfter", s.entriesAfter);
  o.integer("added", s.entriesBefore >= 0 && s.entriesAfter >= 0 ? s.entriesAfter - s.entriesBefore : -1);
  o.integer("bytes", s.bytes);
  if (s.hits >= 0) o.integer("hits", s.hits);
  if (s.misses >= 0) o.integer("misses", s.misses);
  if (s.missesInferred) o.boolean("missesInferred", true);
  if (!s.path.empty()) o.str("path", s.path);
  if (!s.warning.empty()) o.str("warning", s.warning);
  if (!s.deferredPath.empty()) o.str("deferredPath", s.deferredPath);
  if (s.savedAfterCancel) o.boolean("savedAfterCancel", true);
  return o.done();
}

}  // namespace

ProgressPipeline::ProgressPipeline(PipelineOptions options, Consumer consumer)
    : options_(options),
      consumer_(std::move(consumer)),
      startNs_(monoNowNs()),
      startWallMs_(std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count()),
      pacer_(options.flushIntervalMs),
      recorder_(names_, pacer_, crash_, cancel_, closed_),
      heartbeat_(options.heartbeatMs, startNs_),
      tree_(options.retainFinished) {
  merge_.add(&control_);
  if (!options_.crashRecordPath.empty()) crashError_ = crash_.open(options_.crashRecordPath);
}

ProgressPipeline::~ProgressPipeline() {
  room_.release();
  if (flusher_.joinable()) {
    pacer_.stop(true);  // finish() was never called: the consumer may already be gone
    flusher_.join();
  }
}

void ProgressPipeline::startFlusher() {
  int nice = buildNice();
  flusherRunning_.store(true, std::memory_order_release);
  flusher_ = std::thread([this, nice] {
    // Ahead of the builder's threads for a core where the OS allows (thread_priority.h).
    flusherFavoured_.store(favourEventPathThread(nice), std::memory_order_relaxed);
    flusherLoop();
    flusherRunning_.store(false, std::memory_order_release);  // nobody drains now: no builder waits for it
  });
}

// ───────────────────────────── callbacks ─────────────────────────────

void ProgressPipeline::phaseStart(char const* name, char const* parent, int32_t nbSteps) noexcept {
  // Back-pressure (room_gate.h): a builder waits before it starts a phase while downstream holds
  // its bound; the start's time is when it went on. Two loads when nobody is behind.
  waitForRoom();
  int64_t now = callbackNowNs();
  if (closed_.load(std::memory_order_acquire)) {
    afterEnd_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  heartbeat_.callback(now);
  recorder_.phaseStart(name, parent, nbSteps, now);
}

bool ProgressPipeline::stepComplete(char const* name, int32_t step) noexcept {
  int64_t now = 0;
  switch (recorder_.stepComplete(name, step, &now)) {
    case Recorder::StepResult::kCancelled:
      // When the builder saw it: after the flag's load (the step's own time may be older).
      cancel_.sawByBuilder(callbackNowNs());
      return false;
    case Recorder::StepResult::kEnded:
      afterEnd_.fetch_add(1, std::memory_order_relaxed);
      return false;
    case Recorder::StepResult::kRecorded:
      break;
  }
  heartbeat_.callback(now);
  return true;
}

void ProgressPipeline::phaseFinish(char const* name) noexcept {
  int64_t now = callbackNowNs();
  if (closed_.load(std::memory_order_acquire)) {
    afterEnd_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  heartbeat_.callback(now);
  recorder_.phaseFinish(name, now);
  // After the finish is recorded (its time is the phase's end), before the builder goes on.
  waitForRoom();
}

void ProgressPipeline::waitForRoom() noexcept {
  room_.wait();
  // The flusher's lag is looked at every kQueueCheckEvery records of a thread only: the sequence
  // counter's cache line is the most contended one there is, and reading it on every start and
  // finish showed in the callbacks' p99 (bench:native, 8 threads).
  thread_local uint32_t sinceCheck = 0;
  if (++sinceCheck < kQueueCheckEvery) return;
  sinceCheck = 0;
  uint64_t const max = options_.maxQueuedRecords;
  if (max == 0) return;
  uint64_t queued = recorder_.issued() - drainedSeq_.load(std::memory_order_relaxed);
  if (queued >= max) helpFlush(queued);
}

// The flusher is far behind (starved of CPU, often by the builder's own threads). Waiting for
// it (an earlier version slept in 200 µs polls here) stalled the build behind a thread that was
// not running; flushing in its place gives the work the core that noticed it. When a flush is
// running, this thread waits for its lock (the flusher thread then steps aside after its current
// chunk) and then flushes: the bound on memory holds, and no builder waits for a flusher thread
// that the OS has not scheduled. Called only between records (at a start, after a finish, at a
// log), never with a sequence number taken and its record unpublished, so the flush it runs is
// not held up by its own gap. The consumer is then called on this builder thread (flushes are
// serialized by flushMu_, whichever thread runs them).
void ProgressPipeline::helpFlush(uint64_t queued) noexcept {
  uint64_t peak = peakQueued_.load(std::memory_order_relaxed);
  while (queued > peak && !peakQueued_.compare_exchange_weak(peak, queued, std::memory_order_relaxed)) {
  }
  if (!flusherRunning_.load(std::memory_order_acquire) || closed_.load(std::memory_order_acquire)) return;
  try {
    std::unique_lock<std::mutex> lk(flushMu_, std::try_to_lock);
    if (!lk.owns_lock()) {
      int64_t from = monoNowNs();
      // The flusher thread sees this and steps aside after its current chunk (flusherLoop).
      helpersWaiting_.fetch_add(1, std::memory_order_relaxed);
      lk.lock();
      helpersWaiting_.fetch_sub(1, std::memory_order_relaxed);
      flushLockWaits_.fetch_add(1, std::memory_order_relaxed);
      flushLockWaitedNs_.fetch_add(monoNowNs() - from, std::memory_order_relaxed);
    }
    // finish() may have run meanwhile: the final flush is the flusher thread's.
    if (closed_.load(std::memory_order_acquire)) return;
    int64_t from = monoNowNs();
    // Down to half the bound, so that the next look does not find it over again at once. (A
    // thread that waited may find that done by the one before it.)
    uint64_t const low = options_.maxQueuedRecords / 2;
    int chunks = 0;
    while (recorder_.issued() - expectedSeq_ >= low) {
      ++chunks;
      if (!flushChunk(false)) break;
    }
    if (chunks == 0) return;
    int64_t to = monoNowNs();
    pacer_.flushed(to);
    helpedFlushes_.fetch_add(1, std::memory_order_relaxed);
    helpedFlushNs_.fetch_add(to - from, std::memory_order_relaxed);
  } catch (...) {
    // The lock could not be taken: go on building; the flusher thread will flush.
  }
}

// One flush of at most kFlushChunk records (everything when final), with flushMu_ held, by
// whichever thread runs it. Out of memory in a consumer or the flusher must not terminate the
// build's process: the batch is lost and said so. Returns whether more records wait.
bool ProgressPipeline::flushChunk(bool final) noexcept {
  try {
    return flushOnce(final, kFlushChunk);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "trt-build-studio: progress flusher error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "trt-build-studio: progress flusher error\n");
  }
  return false;
}

uint64_t ProgressPipeline::pushControl(Record&& r) {
  uint64_t seq = recorder_.nextSeq();
  r.seq = seq;
  control_.push(std::move(r));
  pacer_.activity();
  return seq;
}

void ProgressPipeline::log(Severity severity, char const* message) noexcept {
  waitForRoom();  // a verbose build's lines are records too: the same bounds hold them
  try {
    Record r;
    r.ns = monoNowNs();
    r.type = EvType::kLog;
    r.a = static_cast<int64_t>(severity);
    r.text = message ? message : "";
    std::lock_guard<std::mutex> lk(controlMu_);
    if (closed_.load(std::memory_order_relaxed)) {
      afterEnd_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    pushControl(std::move(r));
  } catch (...) {
  }
}

void ProgressPipeline::cacheStats(CacheStats const& stats) noexcept {
  try {
    Record r;
    r.ns = monoNowNs();
    r.type = EvType::kCacheStats;
    r.text = cacheStatsJson(stats);
    std::lock_guard<std::mutex> lk(controlMu_);
    if (closed_.load(std::memory_order_relaxed)) {
      afterEnd_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    lastCacheJson_ = r.text;
    pushControl(std::move(r));
  } catch (...) {
  }
}

bool ProgressPipeline::cancelRequested() const noexcept { return cancel_.requested(); }

bool ProgressPipeline::waitForCancel(double ms) noexcept { return cancel_.waitFor(ms); }

void ProgressPipeline::started(std::string const& backend, std::string const& backendVersion, bool simulated, std::string const& gpu,
                               std::string const& computeCapability, int32_t device, std::string const& cudaDriver) {
  Record r;
  r.ns = monoNowNs();
  r.type = EvType::kStarted;
  JsonObject o;
  o.str("backend", backend).str("backendVersion", backendVersion).boolean("simulated", simulated);
  o.num("startedAtMs", startWallMs_);
  if (gpu.empty()) {
    o.null("gpu");
  } else {
    o.str("gpu", gpu);
  }
  if (!computeCapability.empty()) o.str("computeCapability", computeCapability);
  if (device >= 0) o.integer("device", device);
  if (!cudaDriver.empty()) o.str("cudaDriver", cudaDriver);
  r.text = o.done();
  std::lock_guard<std::mutex> lk(controlMu_);
  if (closed_.load(std::memory_order_relaxed) || started_.exchange(true)) return;
  pushControl(std::move(r));
  if (!crashError_.empty()) {
    // After build.started (always the first event); the build goes on without a crash site.
    Record w;
    w.ns = monoNowNs();
    w.type = EvType::kLog;
    w.a = static_cast<int64_t>(Severity::kWarning);
    w.text = crashError_ + " (a crash of this build will not name its phase)";
    pushControl(std::move(w));
  }
  if (cancelBeforeStart_) {
    cancelBeforeStart_ = false;
    pushControl(std::move(pendingCancel_));
    pacer_.urgent();
  }
}

bool ProgressPipeline::requestCancel(CancelReason reason) {
  // Stop works while the build is held by back-pressure: the waiting builder threads go on to
  // their next step, which returns false (the flag is set below, before they can get there).
  struct ReleaseAfter {
    RoomGate& g;
    ~ReleaseAfter() { g.release(); }
  } releaseAfter{room_};
  // Under controlMu_ so that a cancel the builder observed always has its build.cancelling
  // event before build.finished (finish() takes the same lock).
  std::lock_guard<std::mutex> lk(controlMu_);
  if (closed_.load(std::memory_order_relaxed)) return false;
  Record r;
  if (!cancel_.request(&r.ns)) return false;
  r.type = EvType::kCancelling;
  r.a = static_cast<int64_t>(reason);
  if (!started_.load(std::memory_order_relaxed)) {
    pendingCancel_ = std::move(r);  // emitted right after build.started
    cancelBeforeStart_ = true;
    return true;
  }
  pushControl(std::move(r));
  pacer_.urgent();  // deliver build.cancelling now rather than after the budget
  return true;
}

void ProgressPipeline::finish(BuildOutcome const& outcome) {
  room_.release();  // nothing may wait once the build has ended (a stray thread's late callback)
  {
    std::lock_guard<std::mutex> lk(controlMu_);
    if (closed_.load(std::memory_order_relaxed)) return;
    if (cancelBeforeStart_) {  // never started (a pipeline used without build.started)
      cancelBeforeStart_ = false;
      pushControl(std::move(pendingCancel_));
    }
    int64_t now = monoNowNs();
    cancel_.ended(now);
    CancelTimes ct = cancel_.times();
    int64_t requested = ct.requestedNs;
    int64_t firstFalse = ct.firstFalseNs;
    JsonObject o;
    static char const* const kStatus[] = {"succeeded", "cancelled", "failed"};
    o.str("status", kStatus[static_cast<int>(outcome.status)]);
    o.num("durationMs", msSinceStart(now));
    if (requested >= 0 && firstFalse >= 0) o.num("cancelLatencyMs", std::max(0.0, (firstFalse - requested) / 1e6));
    if (requested >= 0) o.num("stopToFinishMs", (now - requested) / 1e6);
    if (outcome.status == BuildOutcome::Status::kSucceeded && outcome.engineBytes >= 0) {
      o.integer("engineBytes", outcome.engineBytes);
    }
    if (!outcome.outputPath.empty()) o.str("outputPath", outcome.outputPath);
    if (!outcome.error.empty()) o.str("error", outcome.error);
    if (!lastCacheJson_.empty()) o.raw("cache", lastCacheJson_);
    Record r;
    r.ns = now;
    r.type = EvType::kFinished;
    r.a = static_cast<int64_t>(outcome.status);
    r.text = o.done();
    closed_.store(true, std::memory_order_release);
    uint64_t seq = pushControl(std::move(r));
    crash_.write(nullptr, 0);  // ended: a later crash (teardown) happened in no phase
    finalSeq_.store(seq, std::memory_order_release);
  }
  if (flusher_.joinable()) {
    pacer_.stop(false);
    flusher_.join();
  } else {
    std::lock_guard<std::mutex> lk(flushMu_);
    flushOnce(true);
  }
}

// ───────────────────────────── flusher side ─────────────────────────────

// Records not yet emitted (a sequence number taken is a record coming), phases whose steps
// moved, or steps carried over from the last flush. Sequentially consistent loads: see
// flush_pacer.h for why a producer's wake-up cannot be missed.
bool ProgressPipeline::hasWork() const noexcept {
  // Outside flushMu_ (a builder may be flushing): what the last flush published, not its state.
  return recorder_.issued() != drainedSeq_.load(std::memory_order_seq_cst) || recorder_.anyDirty() ||
         carrying_.load(std::memory_order_relaxed);
}

void ProgressPipeline::flusherLoop() {
  bool more = false;  // the last flush was cut at kFlushChunk: go on at once, budget or not
  for (;;) {
    FlushPacer::Wake wake = FlushPacer::Wake::kFlush;
    if (!more || pacer_.stopping()) wake = pacer_.next([this] { return hasWork(); }, heartbeat_.dueNs());
    if (wake == FlushPacer::Wake::kAbandon) return;
    bool stop = wake == FlushPacer::Wake::kStop;
    {
      std::lock_guard<std::mutex> lk(flushMu_);
      // A builder waits to flush in this thread's place (helpFlush): let it have the lock rather
      // than take the next chunk ahead of it (the mutex is not fair).
      more = flushChunk(stop) && helpersWaiting_.load(std::memory_order_relaxed) == 0;
      pacer_.flushed(monoNowNs());
    }
    if (stop) return;
  }
}

void ProgressPipeline::flushNow() {
  std::lock_guard<std::mutex> lk(flushMu_);
  flushOnce(closed_.load(std::memory_order_acquire));
}

void ProgressPipeline::emit(EventBatch& batch, OutEvent&& ev) {
  ev.seq = emitSeq_++;
  batch.events.push_back(std::move(ev));
}

// Closes a phase in the emitted tree on the flusher's own initiative (its parent finished, or
// the build ended), children first; the phase's own finish record, if it ever comes, is dropped.
void ProgressPipeline::closeOpenChildren(EventBatch& batch, int64_t id, int64_t ns) {
  for (int64_t c : tree_.openChildren(id)) closeInView(batch, c, ns, true);
}

void ProgressPipeline::closeInView(EventBatch& batch, int64_t id, int64_t ns, bool byParent) {
  uint32_t slot = tree_.slotOf(id);
  if (slot == EmittedTree::kNoSlot || !tree_.at(slot).open) return;
  closeOpenChildren(batch, id, ns);
  EmittedTree::Phase& v = tree_.at(slot);  // closing children inserts nothing: still there
  Node* n = static_cast<Node*>(v.node);
  uint64_t w = n->word.load(std::memory_order_seq_cst);
  auto wgen = static_cast<uint32_t>(w >> 32);
  int32_t steps = (wgen == v.gen || wgen == v.gen + 1) ? static_cast<int32_t>(w & kStepsMask) : n->flEmittedSteps;
  if (steps > n->flEmittedSteps && n->flGen == v.gen) {
    OutEvent st;
    st.type = EvType::kPhaseStep;
    st.t = msSinceStart(std::min(n->lastStepNs.load(std::memory_order_relaxed), ns));
    st.a = id;
    st.b = steps - 1;
    st.c = steps;
    n->flEmittedSteps = steps;
    v.stepsDone = steps;
    emit(batch, std::move(st));
  }
  steps = n->flEmittedSteps;
  n->flGen = UINT32_MAX;
  OutEvent fin;
  fin.type = EvType::kPhaseFinish;
  fin.t = msSinceStart(ns);
  fin.a = id;
  fin.b = steps;
  fin.c = steps < v.nbSteps ? 1 : 0;
  tree_.close(slot, steps, fin.t, fin.c != 0);
  (byParent ? closedByParent_ : closedAtEnd_).fetch_add(1, std::memory_order_relaxed);
  emit(batch, std::move(fin));
  // The node is not retired here: the producer still owns it until its own finish arrives.
}

// One flush: take the coalesced steps, apply the records up to the last sequence number issued
// when the flush began in sequence order (repairing what arrived out of order) with the steps
// placed between them, then emit the batch.
bool ProgressPipeline::flushOnce(bool final, uint64_t maxRecords) {
  if (finalEmitted_) return false;
  EventBatch batch;
  // A flush under load ends at the number issued when it began: records published while it runs
  // wait for the next one, so a batch never grows without end. One that is catching up takes
  // maxRecords at most (the final flush takes everything).
  uint64_t issued = recorder_.issued();
  uint64_t limit =
      final ? finalSeq_.load(std::memory_order_acquire) + 1 : (issued - expectedSeq_ > maxRecords ? expectedSeq_ + maxRecords : issued);
  retire_.clear();
  OutEvent finished;
  bool haveFinished = applyRecords(batch, final, limit, retire_, finished);
  drainedSeq_.store(expectedSeq_, std::memory_order_seq_cst);
  carrying_.store(!carry_.empty(), std::memory_order_relaxed);
  // After the records: every name a record of this batch uses was interned before its record was
  // published, so it is among these.
  names_.takeNew(&batch.firstNameId, &batch.newNames);
  emitBatch(std::move(batch), final, haveFinished, std::move(finished), retire_);
  return !final && limit < issued && expectedSeq_ == limit;
}

// Steps of phases that moved since the last flush: one candidate per phase with its latest step,
// sorted by time. Clearing `dirty` before reading the word means a step recorded after the read
// re-queues the phase for the next flush (both sides use seq_cst).
void ProgressPipeline::takeStepCandidates(std::vector<StepCandidate>& out) {
  out.clear();
  // Only nodes taken off the list get their flag cleared, and only after the whole list has
  // been walked. A carried node is not on this list: clearing its flag could clear it while a
  // producer has just linked it into the next list, and that producer's next step would link
  // it a second time — a cycle in the list. A node both carried and listed is a candidate once.
  ++flushNumber_;
  std::vector<Node*>& dirty = dirtyTaken_;
  dirty.clear();
  for (Node* n = recorder_.takeDirty(); n != nullptr;) {
    Node* next = n->nextDirty;
    dirty.push_back(n);
    n->flCandidateOf = flushNumber_;
    n = next;
  }
  // One full fence for the whole list rather than a locked store per node (this loop ran one per
  // phase that stepped): each flag's store is still ordered before the reads of the words below,
  // the store-then-load order a producer's step relies on (its CAS of the word, then its seq_cst
  // load of the flag).
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer does not model fences (GCC refuses them under -fsanitize=thread): there, the
  // locked store per node, the same order at a higher price.
  for (Node* n : dirty) n->dirty.store(false, std::memory_order_seq_cst);
#else
  for (Node* n : dirty) n->dirty.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  for (Node* n : carry_) {
    if (n->flCandidateOf == flushNumber_) continue;
    n->flCandidateOf = flushNumber_;
    dirty.push_back(n);
  }
  carry_.clear();
  for (Node* n : dirty) {
    uint64_t w = n->word.load(std::memory_order_seq_cst);
    // A finished leaf is no candidate: its finish record carries its last step and emits it just
    // before the finish (applyRecords), and with no children there is nothing to place that step
    // among. Under a storm most phases that step are such leaves, finished within the interval;
    // as candidates they were most of the sort below, a fifth of a flush's instructions
    // (callgrind). A finished parent stays one: its step may have come while a child was open.
    if ((w & kOpenBit) == 0 && n->instances[0].load(std::memory_order_relaxed) == 0) continue;
    bool open = (w & kOpenBit) != 0;
    auto gen = static_cast<uint32_t>(w >> 32) - (open ? 0 : 1);  // a closed word has gen + 1
    out.push_back(StepCandidate{n, n->lastStepNs.load(std::memory_order_relaxed), gen, static_cast<int32_t>(w & kStepsMask), open});
  }
  // Placed by time among the starts/finishes, so "a parent advanced while its child was open"
  // stays visible in the stream after coalescing. The dirty list is a stack (latest first), so
  // reversed it is often in order already.
  std::reverse(out.begin(), out.end());
  auto byTime = [](auto const& a, auto const& b) { return a.ns < b.ns; };
  if (!std::is_sorted(out.begin(), out.end(), byTime)) std::stable_sort(out.begin(), out.end(), byTime);
}

// The merge reads the control queue (index 0) and every builder thread's queue (index t + 1);
// threads that called for the first time since the last look join it.
void ProgressPipeline::syncQueues() {
  for (int q = recorder_.queueCount(); merge_.size() < static_cast<size_t>(q) + 1;) {
    merge_.add(recorder_.queue(static_cast<int>(merge_.size()) - 1));
  }
}

// The record numbered expectedSeq_ if it may be applied now, else nullptr (the flush ends). A
// number taken whose record is not published yet holds back the ones after it; in the final
// flush every builder thread has returned, so it waits briefly for it (without the tree's lock,
// which snapshot() may want), then skips it (never hang).
ProgressPipeline::Record* ProgressPipeline::nextRecord(bool final, uint64_t limit, std::unique_lock<std::mutex>& view,
                                                       int64_t& finalDeadlineNs) {
  if (expectedSeq_ >= limit) return nullptr;
  syncQueues();
  if (Record* r = merge_.find(expectedSeq_)) return r;
  if (!final) return nullptr;
  if (finalDeadlineNs == 0) finalDeadlineNs = monoNowNs() + 1000000000;
  view.unlock();
  Record* r = nullptr;
  while ((r = merge_.find(expectedSeq_)) == nullptr && monoNowNs() < finalDeadlineNs) {
    std::this_thread::yield();
    syncQueues();
  }
  view.lock();
  if (r != nullptr) return r;
  uint64_t lowest = merge_.lowestFront();
  if (lowest >= limit) return nullptr;
  seqGapsSkipped_.fetch_add(lowest - expectedSeq_, std::memory_order_relaxed);
  expectedSeq_ = lowest;
  return merge_.find(expectedSeq_);
}

// Repair: apply the records numbered expectedSeq_ up to `limit` (as far as they are published
// without a gap) to the emitted tree (a start under a parent already finished goes to the nearest
// open ancestor; a finish closes children left open), with the coalesced steps placed by time
// between them, into `batch`. The build's finish is held back in `finished`; returns whether
// there is one.
bool ProgressPipeline::applyRecords(EventBatch& batch, bool final, uint64_t limit, std::vector<Node*>& retire, OutEvent& finished) {
  std::vector<StepCandidate>& candidates = candidates_;
  takeStepCandidates(candidates);
  // Each record is an event, each candidate at most one, and a finish may add the step before
  // it: reserving for that spares the batch's reallocations (a flush under load holds ~10^4).
  size_t records = static_cast<size_t>(std::min<uint64_t>(limit - expectedSeq_, 1u << 17));
  batch.events.reserve(records + records / 2 + candidates.size() + 64);

  bool haveFinished = false;

  std::unique_lock<std::mutex> view(tree_.mutex());
  auto emitStep = [&](Node* n, int32_t stepsDone, int64_t ns) {
    if (stepsDone <= n->flEmittedSteps) return;
    OutEvent ev;
    ev.type = EvType::kPhaseStep;
    ev.t = msSinceStart(ns);
    ev.a = n->id.load(std::memory_order_relaxed);
    ev.b = stepsDone - 1;
    ev.c = stepsDone;
    n->flEmittedSteps = stepsDone;
    tree_.at(n->flSlot).stepsDone = stepsDone;  // called only while n->flGen is live
    emit(batch, std::move(ev));
  };
  size_t nextCandidate = 0;
  std::vector<StepCandidate>& deferred = deferred_;  // steps whose phase.start has not been emitted yet
  deferred.clear();
  auto emitCandidatesBefore = [&](int64_t ns) {
    for (; nextCandidate < candidates.size() && candidates[nextCandidate].ns < ns; ++nextCandidate) {
      StepCandidate const& c = candidates[nextCandidate];
      if (c.node->flGen == c.gen) {
        emitStep(c.node, c.stepsDone, c.ns);
      } else {
        deferred.push_back(c);
      }
    }
  };

  int64_t finalDeadlineNs = 0;
  for (Record* rp; (rp = nextRecord(final, limit, view, finalDeadlineNs)) != nullptr; merge_.pop(), ++expectedSeq_) {
    Record& r = *rp;
    if (r.type == EvType::kPhaseStart || r.type == EvType::kPhaseFinish) emitCandidatesBefore(r.ns);
    OutEvent ev;
    ev.type = r.type;
    ev.t = msSinceStart(r.ns);
    switch (r.type) {
      case EvType::kPhaseStart: {
        // A parent another thread finished just before this start was ordered: attach the child
        // to the nearest ancestor still open.
        bool moved = false;
        uint32_t parentSlot = EmittedTree::kNoSlot;
        int64_t parentId = tree_.nearestOpen(r.b, &moved, &parentSlot);
        if (moved) reparented_.fetch_add(1, std::memory_order_relaxed);
        r.node->flGen = r.gen;
        r.node->flEmittedSteps = 0;
        ev.a = r.a, ev.b = parentId, ev.c = r.c, ev.d = r.d, ev.e = r.e;
        EmittedTree::Phase v;
        v.parentId = parentId;
        v.nameId = static_cast<uint32_t>(r.c);
        v.nbSteps = static_cast<int32_t>(r.d);
        v.instance = static_cast<int32_t>(r.e);
        v.startT = ev.t;
        v.node = r.node;
        v.gen = r.gen;
        r.node->flSlot = tree_.add(r.a, std::move(v), parentSlot);
        break;
      }
      case EvType::kPhaseFinish: {
        retire.push_back(r.node);
        // Open in the view exactly while the node's flusher generation is this record's: a
        // phase closed with its parent (or whose start never came) has another.
        if (r.node->flGen != r.gen) continue;
        uint32_t slot = r.node->flSlot;
        if (!tree_.at(slot).openChildren.empty()) closeOpenChildren(batch, r.a, r.ns);
        auto stepsDone = static_cast<int32_t>(r.b);
        // The last steps before a finish are never coalesced away.
        if (r.node->flGen == r.gen) emitStep(r.node, stepsDone, r.node->lastStepNs.load(std::memory_order_relaxed));
        r.node->flGen = UINT32_MAX;
        ev.a = r.a, ev.b = r.b, ev.c = r.c;
        tree_.close(slot, stepsDone, ev.t, r.c != 0);
        break;
      }
      case EvType::kFinished: {
        // Phases still open when the build ends are closed (children first) before the result.
        emitCandidatesBefore(r.ns);
        for (int64_t id : tree_.openPhases()) closeInView(batch, id, r.ns, false);
        ev.a = r.a;
        ev.text = std::move(r.text);
        finished = std::move(ev);
        haveFinished = true;
        continue;  // emitted last
      }
      case EvType::kCancelling:
        ev.x = msSinceStart(r.ns);
        ev.a = r.a;
        break;
      default:
        ev.a = r.a;
        ev.text = std::move(r.text);
        break;
    }
    emit(batch, std::move(ev));
  }
  if (!haveFinished) emitCandidatesBefore(INT64_MAX);
  for (StepCandidate const& c : deferred) {
    if (c.node->flGen == c.gen && !haveFinished) {
      emitStep(c.node, c.stepsDone, c.ns);  // its start came later in this same batch
    } else if (!final && c.open) {
      // Its start is still waiting behind a sequence gap: next flush. (A closed one's finish
      // record carries its last step.)
      carry_.push_back(c.node);
    }
  }
  for (; nextCandidate < candidates.size(); ++nextCandidate) {
    StepCandidate const& c = candidates[nextCandidate];
    if (!final && c.open && c.node->flGen != c.gen) carry_.push_back(c.node);
  }
  tree_.forgetOldFinished();
  view.unlock();

  return haveFinished;
}

// Emit: a heartbeat when one is due, the build's finish last, and the batch to the consumer.
void ProgressPipeline::emitBatch(EventBatch&& batch, bool final, bool haveFinished, OutEvent&& finished, std::vector<Node*> const& retire) {
  int64_t now = monoNowNs();
  double silentMs = 0;
  // Never the stream's first event: build.started is (the addon announces it on the build thread,
  // which on a busy machine can come after the first heartbeat was due; a pipeline used without
  // build.started starts with its first record). The heartbeat stays due until then.
  if (!final && emitSeq_ > 0 && heartbeat_.take(now, &silentMs)) {
    OutEvent hb;
    hb.type = EvType::kHeartbeat;
    hb.t = msSinceStart(now);
    hb.x = silentMs;
    hb.a = cancel_.requested() ? 1 : 0;
    emit(batch, std::move(hb));
  }
  if (haveFinished) {
    emit(batch, std::move(finished));
    batch.final = true;
    finalEmitted_ = true;
  }
  recorder_.retire(retire);
  if (!batch.events.empty() || !batch.newNames.empty()) consumer_(std::move(batch));
}

// ───────────────────────────── queries ─────────────────────────────

std::vector<PhaseSnapshot> ProgressPipeline::snapshot() const { return tree_.snapshot(names_); }

CancelTimes ProgressPipeline::cancelTimes() const { return cancel_.times(); }

Anomalies ProgressPipeline::anomalies() const {
  Anomalies a;
  a.unknownStepName = recorder_.counters().unknownStep.load();
  a.unknownFinishName = recorder_.counters().unknownFinish.load();
  a.unknownParent = recorder_.counters().unknownParent.load();
  a.stepOutOfRange = recorder_.counters().stepOutOfRange.load();
  a.stepNotRising = recorder_.counters().stepNotRising.load();
  a.closedByParent = closedByParent_.load();
  a.closedAtEnd = closedAtEnd_.load();
  a.afterEnd = afterEnd_.load();
  a.reparented = reparented_.load();
  a.seqGapsSkipped = seqGapsSkipped_.load();
  return a;
}

}  // namespace tbs
