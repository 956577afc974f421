#include "progress_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "json_writer.h"

namespace tbs {
namespace {

std::atomic<uint64_t> gNextPipelineUid{1};

// Thread-local caches, keyed by the pipeline's uid (several builds may run in one process; a uid
// is never reused, unlike an address).
struct StepEntry {
  uint64_t uid = 0;
  void* node = nullptr;
  uint32_t gen = 0;
  int32_t nbSteps = 0;
  char const* raw = nullptr;       // the caller's pointer: the cheap first comparison
  char const* interned = nullptr;  // stable copy owned by the pipeline: the exact comparison
};
struct ThreadEntry {
  uint64_t uid = 0;
  void* state = nullptr;
};
struct Tls {
  StepEntry steps[4];
  unsigned nextStep = 0;
  ThreadEntry threads[4];
  unsigned nextThread = 0;
};
thread_local Tls tTls;

void rememberStep(uint64_t uid, void* node, uint32_t gen, int32_t nbSteps, char const* raw, char const* interned) {
  for (auto& e : tTls.steps) {
    if (e.uid == uid && e.node == node) {
      e = StepEntry{uid, node, gen, nbSteps, raw, interned};
      return;
    }
  }
  tTls.steps[tTls.nextStep++ % 4] = StepEntry{uid, node, gen, nbSteps, raw, interned};
}

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
      uid_(gNextPipelineUid.fetch_add(1)),
      startNs_(monoNowNs()),
      startWallMs_(std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count()),
      heartbeat_(options.heartbeatMs, startNs_),
      pacer_(options.flushIntervalMs),
      tree_(options.retainFinished) {
  if (!options_.crashRecordPath.empty()) crashError_ = crash_.open(options_.crashRecordPath);
}

ProgressPipeline::~ProgressPipeline() {
  if (flusher_.joinable()) {
    pacer_.stop(true);  // finish() was never called: the consumer may already be gone
    flusher_.join();
  }
}

void ProgressPipeline::startFlusher() {
  flusher_ = std::thread([this] { flusherLoop(); });
}

// ───────────────────────────── producer side ─────────────────────────────

ProgressPipeline::ThreadState* ProgressPipeline::self() noexcept {
  for (auto const& e : tTls.threads) {
    if (e.uid == uid_) return static_cast<ThreadState*>(e.state);
  }
  ThreadState* ts = nullptr;
  try {
    std::lock_guard<std::mutex> lk(regMu_);
    auto tid = std::this_thread::get_id();
    for (auto& t : threads_) {
      if (t.tid == tid) ts = &t;  // evicted from the small cache, not new
    }
    if (ts == nullptr) {
      int n = threadCount_.load(std::memory_order_relaxed);
      if (n >= kMaxThreads) return nullptr;
      threads_.emplace_back();
      ts = &threads_.back();
      ts->tid = tid;
      threadArr_[n].store(ts, std::memory_order_release);
      threadCount_.store(n + 1, std::memory_order_release);
    }
  } catch (...) {
    return nullptr;
  }
  tTls.threads[tTls.nextThread++ % 4] = ThreadEntry{uid_, ts};
  return ts;
}

// A slot or cache entry is trusted only if the node is open, still in the same generation and
// carries the wanted name, read consistently (the word is checked before and after).
bool ProgressPipeline::tryNode(Node* n, uint32_t slotGen, uint32_t nameId, Found& out) const noexcept {
  uint64_t w1 = n->word.load(std::memory_order_acquire);
  if ((w1 & kOpenBit) == 0 || static_cast<uint32_t>(w1 >> 32) != slotGen) return false;
  if (n->nameId.load(std::memory_order_relaxed) != nameId) return false;
  int64_t id = n->id.load(std::memory_order_relaxed);
  int32_t nb = n->nbSteps.load(std::memory_order_relaxed);
  uint64_t w2 = n->word.load(std::memory_order_acquire);
  if ((w2 & kOpenBit) == 0 || (w2 >> 32) != (w1 >> 32)) return false;
  out = Found{n, slotGen, id, nb};
  return true;
}

// Names are unique among the open phases of one hierarchy, but several builder threads may each
// have a phase of the same name open (parallel subtrees). Prefer the calling thread's own
// (innermost first), then the most recently started one of any thread.
ProgressPipeline::Found ProgressPipeline::findOpen(uint32_t nameId, ThreadState* me) noexcept {
  Found found;
  if (me != nullptr) {
    for (int i = me->openCount.load(std::memory_order_relaxed) - 1; i >= 0; --i) {
      Node* n = me->open[i].load(std::memory_order_relaxed);
      if (n != nullptr && tryNode(n, me->openGen[i].load(std::memory_order_relaxed), nameId, found)) return found;
    }
  }
  int threads = threadCount_.load(std::memory_order_acquire);
  for (int t = 0; t < threads; ++t) {
    ThreadState* ts = threadArr_[t].load(std::memory_order_acquire);
    if (ts == me || ts == nullptr) continue;
    int count = std::min(ts->openCount.load(std::memory_order_acquire), kMaxOpenPerThread);
    for (int i = 0; i < count; ++i) {
      Node* n = ts->open[i].load(std::memory_order_acquire);
      Found f;
      if (n != nullptr && tryNode(n, ts->openGen[i].load(std::memory_order_acquire), nameId, f) && f.id > found.id) found = f;
    }
  }
  return found;
}

void ProgressPipeline::pushOpen(ThreadState* ts, Node* n, uint32_t gen) noexcept {
  int count = ts->openCount.load(std::memory_order_relaxed);
  if (count == kMaxOpenPerThread) {
    // Drop entries of phases other threads finished (this thread never saw their finish).
    int kept = 0;
    for (int i = 0; i < count; ++i) {
      Node* m = ts->open[i].load(std::memory_order_relaxed);
      uint32_t g = ts->openGen[i].load(std::memory_order_relaxed);
      uint64_t w = m ? m->word.load(std::memory_order_acquire) : 0;
      if (m && (w & kOpenBit) && static_cast<uint32_t>(w >> 32) == g) {
        ts->openGen[kept].store(g, std::memory_order_relaxed);
        ts->open[kept].store(m, std::memory_order_release);
        ++kept;
      }
    }
    count = kept;
    ts->openCount.store(count, std::memory_order_release);
    if (count == kMaxOpenPerThread) return;  // 64 phases open on one thread: found by the scan only
  }
  ts->openGen[count].store(gen, std::memory_order_relaxed);
  ts->open[count].store(n, std::memory_order_release);
  ts->openCount.store(count + 1, std::memory_order_release);
}

void ProgressPipeline::removeOpen(ThreadState* ts, Node* n, uint32_t gen) noexcept {
  int count = ts->openCount.load(std::memory_order_relaxed);
  for (int i = count - 1; i >= 0; --i) {
    if (ts->open[i].load(std::memory_order_relaxed) == n && ts->openGen[i].load(std::memory_order_relaxed) == gen) {
      for (int j = i; j + 1 < count; ++j) {
        ts->openGen[j].store(ts->openGen[j + 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
        ts->open[j].store(ts->open[j + 1].load(std::memory_order_relaxed), std::memory_order_release);
      }
      ts->open[count - 1].store(nullptr, std::memory_order_release);
      ts->openCount.store(count - 1, std::memory_order_release);
      return;
    }
  }
}

int32_t ProgressPipeline::bumpInstance(std::atomic<uint64_t>* slots, int64_t ownerId, uint32_t nameId) noexcept {
  uint64_t tag = uint64_t{nameId} + 1;
  for (int i = 0; i < kInstanceSlots; ++i) {
    uint64_t v = slots[i].load(std::memory_order_relaxed);
    for (;;) {
      if (v == 0) {
        if (slots[i].compare_exchange_weak(v, (tag << 32) | 1, std::memory_order_relaxed)) return 0;
        continue;
      }
      if ((v >> 32) != tag) break;
      if (slots[i].compare_exchange_weak(v, v + 1, std::memory_order_relaxed)) return static_cast<int32_t>(v & 0xffffffffu);
    }
  }
  try {
    std::lock_guard<std::mutex> lk(instanceMu_);
    return instanceOverflow_[(static_cast<uint64_t>(ownerId + 1) << 24) ^ nameId]++;
  } catch (...) {
    return 0;
  }
}

ProgressPipeline::Node* ProgressPipeline::allocNode(ThreadState* ts) {
  if (ts->spare.empty()) {
    // Refill in bulk so the pool lock is taken once per 64 phases.
    std::lock_guard<std::mutex> lk(poolMu_);
    size_t take = std::min<size_t>(pool_.size(), 64);
    ts->spare.assign(pool_.end() - static_cast<std::ptrdiff_t>(take), pool_.end());
    pool_.resize(pool_.size() - take);
    // New nodes only when the pool is dry: topping up every refill would grow the arena.
    for (int i = 0; take == 0 && i < 64; ++i) {
      arena_.emplace_back();
      ts->spare.push_back(&arena_.back());
    }
  }
  Node* n = ts->spare.back();
  ts->spare.pop_back();
  return n;
}

void ProgressPipeline::phaseStart(char const* name, char const* parent, int32_t nbSteps) noexcept {
  int64_t now = monoNowNs();
  if (closed_.load(std::memory_order_acquire)) {
    afterEnd_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  heartbeat_.callback(now);
  ThreadState* ts = self();
  if (ts == nullptr) return;
  char const* nm = name ? name : "(unnamed phase)";
  char const* internedName = nullptr;
  uint32_t nameId = names_.idOf(nm, true, &internedName);
  if (nameId == kNoName) return;
  int32_t nb = std::max<int32_t>(nbSteps, 0);
  Found parentFound;
  if (parent != nullptr && *parent != '\0') {
    uint32_t pid = names_.idOf(parent, false);
    if (pid != kNoName) parentFound = findOpen(pid, ts);
    if (parentFound.node == nullptr) unknownParent_.fetch_add(1, std::memory_order_relaxed);  // a root
  }
  int32_t instance = parentFound.node ? bumpInstance(parentFound.node->instances, parentFound.id, nameId)
                                      : bumpInstance(rootInstances_, -1, nameId);
  Node* n;
  try {
    n = allocNode(ts);
  } catch (...) {
    return;  // allocation failure: drop the phase rather than throw into the builder
  }
  uint64_t seq = recordSeq_.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: flush_pacer.h
  auto gen = static_cast<uint32_t>(n->word.load(std::memory_order_relaxed) >> 32) + 1;
  auto id = static_cast<int64_t>(seq);
  n->id.store(id, std::memory_order_relaxed);
  n->nameId.store(nameId, std::memory_order_relaxed);
  n->nbSteps.store(nb, std::memory_order_relaxed);
  for (auto& slot : n->instances) slot.store(0, std::memory_order_relaxed);
  n->lastStepNs.store(now, std::memory_order_relaxed);
  n->nameStr.store(internedName, std::memory_order_relaxed);
  n->parent.store(parentFound.node, std::memory_order_relaxed);
  n->parentGen.store(parentFound.gen, std::memory_order_relaxed);
  n->word.store((uint64_t{gen} << 32) | kOpenBit, std::memory_order_seq_cst);  // publish
  pushOpen(ts, n, gen);
  if (crash_.active()) {
    crashShownId_.store(id, std::memory_order_relaxed);
    recordCrashPath(n);
  }
  Record r;
  r.seq = seq;
  r.ns = now;
  r.type = EvType::kPhaseStart;
  r.node = n;
  r.gen = gen;
  r.a = id;
  r.b = parentFound.node ? parentFound.id : -1;
  r.c = nameId;
  r.d = nb;
  r.e = instance;
  try {
    ts->queue.push(std::move(r));
  } catch (...) {
  }
  pacer_.activity();
  rememberStep(uid_, n, gen, nb, nm, internedName);
}

// Writes the names from the root down to `n` (none for nullptr). Ancestors are followed only
// while they are the instance the child started under: a parent that was finished and reused
// since (another generation) ends the walk rather than lending its new name.
void ProgressPipeline::recordCrashPath(Node* n) noexcept {
  constexpr int kMaxDepth = 64;
  char const* rev[kMaxDepth];
  int depth = 0;
  for (Node* cur = n; cur != nullptr && depth < kMaxDepth;) {
    char const* nm = cur->nameStr.load(std::memory_order_relaxed);
    if (nm == nullptr) break;
    rev[depth++] = nm;
    Node* parent = cur->parent.load(std::memory_order_relaxed);
    uint32_t pgen = cur->parentGen.load(std::memory_order_relaxed);
    if (parent == nullptr) break;
    auto g = static_cast<uint32_t>(parent->word.load(std::memory_order_acquire) >> 32);
    if (g != pgen && g != pgen + 1) break;  // open, or closed and not reused
    cur = parent;
  }
  char const* names[kMaxDepth];
  for (int i = 0; i < depth; ++i) names[i] = rev[depth - 1 - i];
  crash_.write(names, depth);
}

// The most recently started open phase of any thread (nullptr node if none).
ProgressPipeline::Found ProgressPipeline::latestOpen() noexcept {
  Found found;
  int threads = threadCount_.load(std::memory_order_acquire);
  for (int t = 0; t < threads; ++t) {
    ThreadState* ts = threadArr_[t].load(std::memory_order_acquire);
    if (ts == nullptr) continue;
    int count = std::min(ts->openCount.load(std::memory_order_acquire), kMaxOpenPerThread);
    for (int i = 0; i < count; ++i) {
      Node* n = ts->open[i].load(std::memory_order_acquire);
      Found f;
      if (n != nullptr && tryNode(n, ts->openGen[i].load(std::memory_order_acquire), n->nameId.load(std::memory_order_relaxed), f) &&
          f.id > found.id) {
        found = f;
      }
    }
  }
  return found;
}

void ProgressPipeline::markDirty(Node* node) noexcept {
  if (node->dirty.exchange(true, std::memory_order_seq_cst)) return;  // already queued
  Node* head = dirtyHead_.load(std::memory_order_relaxed);
  do {
    node->nextDirty = head;
  } while (!dirtyHead_.compare_exchange_weak(head, node, std::memory_order_seq_cst, std::memory_order_relaxed));
  // The first phase to move since the flusher's last look: it may be asleep.
  if (head == nullptr) pacer_.activity();
}

bool ProgressPipeline::stepComplete(char const* name, int32_t step) noexcept {
  // The timestamp is taken before the flag is read, and requestCancel() stores the flag before
  // taking its own timestamp: so every step recorded as completed has t <= requestedAt.
  int64_t now = monoNowNs();
  if (cancel_.requested()) {
    cancel_.sawByBuilder(now);
    return false;
  }
  if (closed_.load(std::memory_order_acquire)) {
    afterEnd_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  heartbeat_.callback(now);
  if (name == nullptr) {
    unknownStep_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  Node* node = nullptr;
  uint32_t gen = 0;
  int32_t nb = 0;
  // The pointer is only a fast first check: TensorRT may reuse a name buffer for another phase,
  // so the name itself must match too.
  for (auto const& e : tTls.steps) {
    if (e.uid == uid_ && e.raw == name && std::strcmp(e.interned, name) == 0) {
      node = static_cast<Node*>(e.node), gen = e.gen, nb = e.nbSteps;
      break;
    }
  }
  if (node == nullptr) {
    for (auto const& e : tTls.steps) {
      if (e.uid == uid_ && std::strcmp(e.interned, name) == 0) {
        node = static_cast<Node*>(e.node), gen = e.gen, nb = e.nbSteps;
        break;
      }
    }
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (node == nullptr) {
      char const* interned = nullptr;
      uint32_t nameId = names_.idOf(name, false, &interned);
      Found f = nameId == kNoName ? Found{} : findOpen(nameId, self());
      if (f.node == nullptr) break;
      node = f.node, gen = f.gen, nb = f.nbSteps;
      rememberStep(uid_, node, gen, nb, name, interned);
    }
    uint64_t w = node->word.load(std::memory_order_seq_cst);
    for (;;) {
      if ((w >> 32) != gen || (w & kOpenBit) == 0) break;  // stale cache entry
      if (step < 0 || step >= nb) {
        stepOutOfRange_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      if (uint64_t(step) + 1 <= (w & kStepsMask)) {
        stepNotRising_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      if (node->word.compare_exchange_weak(w, (w & ~kStepsMask) | (uint64_t(step) + 1), std::memory_order_seq_cst)) {
        node->lastStepNs.store(now, std::memory_order_relaxed);
        markDirty(node);
        return true;
      }
    }
    node = nullptr;  // the cached phase has finished: look the name up again
  }
  unknownStep_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ProgressPipeline::phaseFinish(char const* name) noexcept {
  int64_t now = monoNowNs();
  if (closed_.load(std::memory_order_acquire)) {
    afterEnd_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  heartbeat_.callback(now);
  ThreadState* ts = self();
  uint32_t nameId = name ? names_.idOf(name, false) : kNoName;
  if (ts == nullptr || nameId == kNoName) {
    unknownFinish_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  for (int attempt = 0; attempt < 4; ++attempt) {
    Found f = findOpen(nameId, ts);
    if (f.node == nullptr) break;
    uint64_t w = f.node->word.load(std::memory_order_seq_cst);
    bool closed = false;
    while ((w >> 32) == f.gen && (w & kOpenBit)) {
      // Generation + 1 makes every stale cache entry miss; the steps stay for the flusher.
      if (f.node->word.compare_exchange_weak(w, (uint64_t{f.gen + 1} << 32) | (w & kStepsMask), std::memory_order_seq_cst)) {
        closed = true;
        break;
      }
    }
    if (!closed) continue;  // another thread finished it first: look again
    removeOpen(ts, f.node, f.gen);
    if (crash_.active() && crashShownId_.load(std::memory_order_relaxed) == f.id) {
      // The recorded phase ended: show the most recently started phase still open instead.
      Found latest = latestOpen();
      int64_t expected = f.id;
      if (crashShownId_.compare_exchange_strong(expected, latest.id, std::memory_order_relaxed)) recordCrashPath(latest.node);
    }
    auto stepsDone = static_cast<int64_t>(w & kStepsMask);
    Record r;
    r.seq = recordSeq_.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: flush_pacer.h
    r.ns = now;
    r.type = EvType::kPhaseFinish;
    r.node = f.node;
    r.gen = f.gen;
    r.a = f.id;
    r.b = stepsDone;
    r.c = stepsDone < f.nbSteps ? 1 : 0;
    try {
      ts->queue.push(std::move(r));
    } catch (...) {
    }
    pacer_.activity();
    return;
  }
  unknownFinish_.fetch_add(1, std::memory_order_relaxed);
}

void ProgressPipeline::pushControl(Record&& r) {
  r.seq = recordSeq_.fetch_add(1, std::memory_order_seq_cst);
  control_.push_back(std::move(r));
  pacer_.activity();
}

void ProgressPipeline::log(Severity severity, char const* message) noexcept {
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

void ProgressPipeline::started(std::string const& backend, std::string const& backendVersion, bool simulated,
                               std::string const& gpu, std::string const& computeCapability, int32_t device) {
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
}

bool ProgressPipeline::requestCancel(CancelReason reason) {
  // Under controlMu_ so that a cancel the builder observed always has its build.cancelling
  // event before build.finished (finish() takes the same lock).
  std::lock_guard<std::mutex> lk(controlMu_);
  if (closed_.load(std::memory_order_relaxed)) return false;
  Record r;
  if (!cancel_.request(&r.ns)) return false;
  r.type = EvType::kCancelling;
  r.a = static_cast<int64_t>(reason);
  pushControl(std::move(r));
  pacer_.urgent();  // deliver build.cancelling now rather than after the budget
  return true;
}

void ProgressPipeline::finish(BuildOutcome const& outcome) {
  {
    std::lock_guard<std::mutex> lk(controlMu_);
    if (closed_.load(std::memory_order_relaxed)) return;
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
    pushControl(std::move(r));
    crash_.write(nullptr, 0);  // ended: a later crash (teardown) happened in no phase
    finalSeq_.store(control_.back().seq, std::memory_order_release);
  }
  if (flusher_.joinable()) {
    pacer_.stop(false);
    flusher_.join();
  } else {
    flushOnce(true);
  }
}

// ───────────────────────────── flusher side ─────────────────────────────

// Records not yet emitted (a sequence number taken is a record coming), phases whose steps
// moved, or steps carried over from the last flush. Sequentially consistent loads: see
// flush_pacer.h for why a producer's wake-up cannot be missed.
bool ProgressPipeline::hasWork() const noexcept {
  return recordSeq_.load(std::memory_order_seq_cst) != expectedSeq_ || dirtyHead_.load(std::memory_order_seq_cst) != nullptr ||
         !carry_.empty();
}

void ProgressPipeline::flusherLoop() {
  for (;;) {
    int64_t due = heartbeat_.dueNs();
    FlushPacer::Wake wake = pacer_.next([this] { return hasWork(); }, due);
    if (wake == FlushPacer::Wake::kAbandon) return;
    bool stop = wake == FlushPacer::Wake::kStop;
    try {
      flushOnce(stop);
    } catch (std::exception const& e) {
      // Out of memory in a consumer or the flusher must not terminate the build's process; the
      // batch is lost and said so.
      std::fprintf(stderr, "trt-build-studio: progress flusher error: %s\n", e.what());
    }
    pacer_.flushed(monoNowNs());
    if (stop) return;
  }
}

void ProgressPipeline::flushNow() { flushOnce(closed_.load(std::memory_order_acquire)); }

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
  EmittedTree::Phase* found = tree_.find(id);
  if (found == nullptr || !found->open) return;
  closeOpenChildren(batch, id, ns);
  EmittedTree::Phase& v = *tree_.find(id);  // closing children inserts nothing: still there
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
  tree_.close(id, steps, fin.t, fin.c != 0);
  (byParent ? closedByParent_ : closedAtEnd_).fetch_add(1, std::memory_order_relaxed);
  emit(batch, std::move(fin));
  // The node is not retired here: the producer still owns it until its own finish arrives.
}

void ProgressPipeline::flushOnce(bool final) {
  if (finalEmitted_) return;
  EventBatch batch;
  uint64_t finalSeq = final ? finalSeq_.load(std::memory_order_acquire) : UINT64_MAX;

  auto drainAll = [&] {
    int threads = threadCount_.load(std::memory_order_acquire);
    for (int t = 0; t < threads; ++t) {
      threadArr_[t].load(std::memory_order_acquire)->queue.drain([&](Record&& r) { pending_.push_back(std::move(r)); });
    }
    std::lock_guard<std::mutex> lk(controlMu_);
    for (auto& r : control_) pending_.push_back(std::move(r));
    control_.clear();
  };
  drainAll();
  // Sort (seq, index) pairs rather than the records themselves: each thread's queue is already
  // in order and records are large, so this is the cheap way to merge them.
  std::vector<std::pair<uint64_t, uint32_t>> order;
  auto sortOrder = [&] {
    order.resize(pending_.size());
    for (size_t i = 0; i < pending_.size(); ++i) order[i] = {pending_[i].seq, static_cast<uint32_t>(i)};
    std::sort(order.begin(), order.end());
  };
  sortOrder();
  if (final) {
    // A record whose sequence number was taken but not yet published blocks the ones after it.
    // At the end every builder thread has returned, so wait briefly, then skip (never hang).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    auto contiguousToFinal = [&] {
      uint64_t s = expectedSeq_;
      for (auto const& [seq, idx] : order) {
        if (seq < s) continue;
        if (seq != s) return false;
        if (s == finalSeq) return true;
        ++s;
      }
      return false;
    };
    while (!contiguousToFinal() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
      drainAll();
      sortOrder();
    }
  }
  size_t ready = 0;
  while (ready < order.size() && order[ready].first <= finalSeq) {
    if (order[ready].first != expectedSeq_) {
      if (!final) break;
      seqGapsSkipped_.fetch_add(order[ready].first - expectedSeq_, std::memory_order_relaxed);
      expectedSeq_ = order[ready].first;
    }
    ++expectedSeq_;
    ++ready;
  }
  batch.events.reserve(ready + 64);
  names_.takeNew(&batch.firstNameId, &batch.newNames);

  // Steps of phases that moved since the last flush: one candidate per phase with its latest
  // step. Clearing `dirty` before reading the word means a step recorded after the read
  // re-queues the phase for the next flush (both sides use seq_cst).
  struct Candidate {
    Node* node;
    int64_t ns;
    uint32_t gen;
    int32_t stepsDone;
    bool open;
  };
  std::vector<Candidate> candidates;
  {
    // Only nodes taken off the list get their flag cleared, and only after the whole list has
    // been walked. A carried node is not on this list: clearing its flag could clear it while a
    // producer has just linked it into the next list, and that producer's next step would link
    // it a second time — a cycle in the list. A node both carried and listed is a candidate once.
    ++flushNumber_;
    std::vector<Node*> dirty;
    for (Node* n = dirtyHead_.exchange(nullptr, std::memory_order_seq_cst); n != nullptr;) {
      Node* next = n->nextDirty;
      dirty.push_back(n);
      n->flCandidateOf = flushNumber_;
      n = next;
    }
    for (Node* n : dirty) n->dirty.store(false, std::memory_order_seq_cst);
    for (Node* n : carry_) {
      if (n->flCandidateOf == flushNumber_) continue;
      n->flCandidateOf = flushNumber_;
      dirty.push_back(n);
    }
    carry_.clear();
    for (Node* n : dirty) {
      uint64_t w = n->word.load(std::memory_order_seq_cst);
      bool open = (w & kOpenBit) != 0;
      auto gen = static_cast<uint32_t>(w >> 32) - (open ? 0 : 1);  // a closed word has gen + 1
      candidates.push_back(Candidate{n, n->lastStepNs.load(std::memory_order_relaxed), gen,
                                     static_cast<int32_t>(w & kStepsMask), open});
    }
  }
  // Placed by time among the starts/finishes, so "a parent advanced while its child was open"
  // stays visible in the stream after coalescing.
  std::stable_sort(candidates.begin(), candidates.end(), [](auto const& a, auto const& b) { return a.ns < b.ns; });

  std::vector<Node*> retire;
  OutEvent finished;
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
    if (EmittedTree::Phase* v = tree_.find(ev.a)) v->stepsDone = stepsDone;
    emit(batch, std::move(ev));
  };
  size_t nextCandidate = 0;
  std::vector<Candidate> deferred;  // steps whose phase.start has not been emitted yet
  auto emitCandidatesBefore = [&](int64_t ns) {
    for (; nextCandidate < candidates.size() && candidates[nextCandidate].ns < ns; ++nextCandidate) {
      Candidate const& c = candidates[nextCandidate];
      if (c.node->flGen == c.gen) {
        emitStep(c.node, c.stepsDone, c.ns);
      } else {
        deferred.push_back(c);
      }
    }
  };

  for (size_t i = 0; i < ready; ++i) {
    Record& r = pending_[order[i].second];
    if (r.type == EvType::kPhaseStart || r.type == EvType::kPhaseFinish) emitCandidatesBefore(r.ns);
    OutEvent ev;
    ev.type = r.type;
    ev.t = msSinceStart(r.ns);
    switch (r.type) {
      case EvType::kPhaseStart: {
        // A parent another thread finished just before this start was ordered: attach the child
        // to the nearest ancestor still open.
        bool moved = false;
        int64_t parentId = tree_.nearestOpen(r.b, &moved);
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
        tree_.add(r.a, std::move(v));
        break;
      }
      case EvType::kPhaseFinish: {
        retire.push_back(r.node);
        EmittedTree::Phase* v = tree_.find(r.a);
        if (v == nullptr || !v->open) continue;  // already closed with its parent
        closeOpenChildren(batch, r.a, r.ns);
        auto stepsDone = static_cast<int32_t>(r.b);
        // The last steps before a finish are never coalesced away.
        if (r.node->flGen == r.gen) emitStep(r.node, stepsDone, r.node->lastStepNs.load(std::memory_order_relaxed));
        r.node->flGen = UINT32_MAX;
        ev.a = r.a, ev.b = r.b, ev.c = r.c;
        tree_.close(r.a, stepsDone, ev.t, r.c != 0);
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
  if (ready == pending_.size()) {
    pending_.clear();
  } else {
    // Keep what waits behind a sequence gap (usually a handful of records).
    // Two buffers swapped back and forth keep their capacity (no page faults per flush).
    spare_.clear();
    for (size_t i = ready; i < order.size(); ++i) spare_.push_back(std::move(pending_[order[i].second]));
    pending_.clear();
    pending_.swap(spare_);
  }
  if (!haveFinished) emitCandidatesBefore(INT64_MAX);
  for (Candidate const& c : deferred) {
    if (c.node->flGen == c.gen && !haveFinished) {
      emitStep(c.node, c.stepsDone, c.ns);  // its start came later in this same batch
    } else if (!final && c.open) {
      // Its start is still waiting behind a sequence gap: next flush. (A closed one's finish
      // record carries its last step.)
      carry_.push_back(c.node);
    }
  }
  for (; nextCandidate < candidates.size(); ++nextCandidate) {
    Candidate const& c = candidates[nextCandidate];
    if (!final && c.open && c.node->flGen != c.gen) carry_.push_back(c.node);
  }
  tree_.forgetOldFinished();
  view.unlock();

  int64_t now = monoNowNs();
  double silentMs = 0;
  if (!final && heartbeat_.take(now, &silentMs)) {
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
    pending_.clear();
  }
  if (!retire.empty()) {
    std::lock_guard<std::mutex> lk(poolMu_);
    pool_.insert(pool_.end(), retire.begin(), retire.end());
  }
  if (!batch.events.empty() || !batch.newNames.empty()) consumer_(std::move(batch));
}

// ───────────────────────────── queries ─────────────────────────────

std::vector<PhaseSnapshot> ProgressPipeline::snapshot() const { return tree_.snapshot(names_); }

CancelTimes ProgressPipeline::cancelTimes() const {
  return cancel_.times();
}

Anomalies ProgressPipeline::anomalies() const {
  Anomalies a;
  a.unknownStepName = unknownStep_.load();
  a.unknownFinishName = unknownFinish_.load();
  a.unknownParent = unknownParent_.load();
  a.stepOutOfRange = stepOutOfRange_.load();
  a.stepNotRising = stepNotRising_.load();
  a.closedByParent = closedByParent_.load();
  a.closedAtEnd = closedAtEnd_.load();
  a.afterEnd = afterEnd_.load();
  a.reparented = reparented_.load();
  a.seqGapsSkipped = seqGapsSkipped_.load();
  return a;
}

}  // namespace tbs
