#include "progress_pipeline.h"

#include <algorithm>
#include <cstring>

#include "json_writer.h"

namespace tbs {
namespace {

std::atomic<uint64_t> gNextPipelineUid{1};

// Per builder thread: the last few phases this thread stepped, so stepComplete normally finds
// its phase without the mutex. Entries are keyed by the pipeline's uid (several builds may run
// in one process; a uid is never reused, unlike an address).
struct TlsEntry {
  uint64_t uid = 0;
  void* node = nullptr;
  uint32_t gen = 0;
  int32_t nbSteps = 0;
  char const* raw = nullptr;       // the caller's pointer: the cheap first comparison
  char const* interned = nullptr;  // stable copy owned by the pipeline: the exact comparison
};
struct TlsCache {
  TlsEntry entries[4];
  unsigned next = 0;
};
thread_local TlsCache tCache;

void rememberInTls(uint64_t uid, void* node, uint32_t gen, int32_t nbSteps, char const* raw,
                   char const* interned) {
  for (auto& e : tCache.entries) {
    if (e.uid == uid && e.node == node) {
      e = TlsEntry{uid, node, gen, nbSteps, raw, interned};
      return;
    }
  }
  tCache.entries[tCache.next++ % 4] = TlsEntry{uid, node, gen, nbSteps, raw, interned};
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
  return o.done();
}

}  // namespace

ProgressPipeline::ProgressPipeline(PipelineOptions options, Consumer consumer)
    : options_(options),
      consumer_(std::move(consumer)),
      uid_(gNextPipelineUid.fetch_add(1)),
      startNs_(monoNowNs()),
      startWallMs_(std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count()),
      lastCallbackNs_(startNs_) {
  nextHeartbeatNs_ = startNs_ + int64_t{options_.heartbeatMs} * 1000000;
}

ProgressPipeline::~ProgressPipeline() {
  if (flusher_.joinable()) {
    {
      std::lock_guard<std::mutex> lk(wakeMu_);
      stopFlusher_ = true;
      abandonFlusher_ = true;  // finish() was never called: the consumer may already be gone
    }
    wakeCv_.notify_all();
    flusher_.join();
  }
}

void ProgressPipeline::startFlusher() {
  flusher_ = std::thread([this] { flusherLoop(); });
}

void ProgressPipeline::touch(int64_t now) noexcept {
  // Written at most about once per ms so that builder threads do not all fight over one cache
  // line; the heartbeat only needs millisecond resolution.
  if (now - lastCallbackNs_.load(std::memory_order_relaxed) > 1000000) {
    lastCallbackNs_.store(now, std::memory_order_relaxed);
  }
}

// ───────────────────────────── producer side ─────────────────────────────

uint32_t ProgressPipeline::internLocked(std::string_view name) {
  auto it = nameIndex_.find(name);
  if (it != nameIndex_.end()) return it->second;
  names_.emplace_back(name);
  auto id = static_cast<uint32_t>(names_.size() - 1);
  nameIndex_.emplace(std::string_view(names_.back()), id);
  openByName_.emplace_back();
  return id;
}

int64_t ProgressPipeline::findNameLocked(std::string_view name) const {
  auto it = nameIndex_.find(name);
  return it == nameIndex_.end() ? -1 : static_cast<int64_t>(it->second);
}

// Names are unique among the open phases of one hierarchy, but several builder threads may each
// have a phase of the same name open (parallel subtrees). Prefer the calling thread's own phase,
// then the most recently started one.
ProgressPipeline::Node* ProgressPipeline::findOpenLocked(uint32_t nameId) const {
  auto const& open = openByName_[nameId];
  if (open.empty()) return nullptr;
  auto self = std::this_thread::get_id();
  for (auto it = open.rbegin(); it != open.rend(); ++it) {
    if ((*it)->owner == self) return *it;
  }
  return open.back();
}

ProgressPipeline::Node* ProgressPipeline::allocNodeLocked() {
  if (!freeList_.empty()) {
    Node* n = freeList_.back();
    freeList_.pop_back();
    return n;
  }
  arena_.emplace_back();
  return &arena_.back();
}

void ProgressPipeline::phaseStart(char const* name, char const* parent, int32_t nbSteps) noexcept {
  int64_t now = monoNowNs();
  touch(now);
  std::string_view nm = name ? std::string_view(name) : std::string_view("(unnamed phase)");
  Node* node = nullptr;
  uint32_t gen = 0;
  int32_t nb = std::max<int32_t>(nbSteps, 0);
  char const* interned = nullptr;
  try {
    std::lock_guard<std::mutex> lk(mu_);
    if (closed_.load(std::memory_order_relaxed)) {
      afterEnd_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    uint32_t nameId = internLocked(nm);
    interned = names_[nameId].c_str();
    Node* parentNode = nullptr;
    if (parent != nullptr && *parent != '\0') {
      int64_t pid = findNameLocked(parent);
      if (pid >= 0) parentNode = findOpenLocked(static_cast<uint32_t>(pid));
      if (parentNode == nullptr) ++anomalies_.unknownParent;  // reported as a root phase
    }
    node = allocNodeLocked();
    gen = ++node->gen;
    node->id = nextId_++;
    node->parent = parentNode;
    node->nameId = nameId;
    node->nbSteps = nb;
    node->depth = parentNode ? parentNode->depth + 1 : 0;
    node->owner = std::this_thread::get_id();
    node->openChildren = 0;
    node->childInstances.clear();
    auto& counts = parentNode ? parentNode->childInstances : rootInstances_;
    int32_t instance = 0;
    auto found = std::find_if(counts.begin(), counts.end(), [&](auto const& p) { return p.first == nameId; });
    if (found == counts.end()) {
      counts.emplace_back(nameId, 1);
    } else {
      instance = found->second++;
    }
    if (parentNode) ++parentNode->openChildren;
    node->lastStepNs.store(now, std::memory_order_relaxed);
    node->word.store((uint64_t{gen} << 32) | kOpenBit, std::memory_order_seq_cst);
    openByName_[nameId].push_back(node);
    Record r{EvType::kPhaseStart, now};
    r.node = node;
    r.gen = gen;
    r.a = node->id;
    r.b = parentNode ? parentNode->id : -1;
    r.c = nameId;
    r.d = nb;
    r.e = instance;
    queue_.push_back(std::move(r));
  } catch (...) {
    return;  // allocation failure: drop the phase rather than throw into the builder
  }
  rememberInTls(uid_, node, gen, nb, name, interned);
}

bool ProgressPipeline::resolveForStep(char const* name, Node*& node, uint32_t& gen, int32_t& nbSteps) {
  std::lock_guard<std::mutex> lk(mu_);
  int64_t id = findNameLocked(name);
  if (id < 0) return false;
  Node* n = findOpenLocked(static_cast<uint32_t>(id));
  if (n == nullptr) return false;
  node = n;
  gen = n->gen;
  nbSteps = n->nbSteps;
  rememberInTls(uid_, n, gen, nbSteps, name, names_[n->nameId].c_str());
  return true;
}

void ProgressPipeline::markDirty(Node* node) noexcept {
  if (node->dirty.exchange(true, std::memory_order_seq_cst)) return;  // already queued
  Node* head = dirtyHead_.load(std::memory_order_relaxed);
  do {
    node->nextDirty = head;
  } while (!dirtyHead_.compare_exchange_weak(head, node, std::memory_order_release, std::memory_order_relaxed));
}

bool ProgressPipeline::stepComplete(char const* name, int32_t step) noexcept {
  // The timestamp is taken before the flag is read, and requestCancel() stores the flag before
  // taking its own timestamp: so every step recorded as completed has t <= requestedAt.
  int64_t now = monoNowNs();
  if (cancel_.load(std::memory_order_seq_cst)) {
    int64_t expected = -1;
    firstFalseNs_.compare_exchange_strong(expected, now);
    return false;
  }
  if (closed_.load(std::memory_order_acquire)) {
    afterEnd_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  touch(now);
  if (name == nullptr) {
    unknownStep_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  Node* node = nullptr;
  uint32_t gen = 0;
  int32_t nb = 0;
  for (auto const& e : tCache.entries) {
    if (e.uid == uid_ && e.raw == name) {
      node = static_cast<Node*>(e.node), gen = e.gen, nb = e.nbSteps;
      break;
    }
  }
  if (node == nullptr) {
    for (auto const& e : tCache.entries) {
      if (e.uid == uid_ && std::strcmp(e.interned, name) == 0) {
        node = static_cast<Node*>(e.node), gen = e.gen, nb = e.nbSteps;
        break;
      }
    }
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (node == nullptr) {
      bool found = false;
      try {
        found = resolveForStep(name, node, gen, nb);
      } catch (...) {
        found = false;
      }
      if (!found) {
        unknownStep_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
    }
    uint64_t w = node->word.load(std::memory_order_seq_cst);
    for (;;) {
      if ((w >> 32) != gen || (w & kOpenBit) == 0) break;  // stale cache entry
      if (step < 0 || step >= nb) {
        stepOutOfRange_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      uint64_t done = w & kStepsMask;
      if (uint64_t(step) + 1 <= done) {
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

void ProgressPipeline::closeLocked(Node* node, int64_t now, bool byParent) {
  if (node->openChildren > 0) {
    // TensorRT may finish a parent before its children; close the children first (deepest
    // first) so every start still has exactly one finish and the tree stays nested.
    std::vector<Node*> descendants;
    for (auto const& list : openByName_) {
      for (Node* m : list) {
        for (Node* p = m->parent; p != nullptr; p = p->parent) {
          if (p == node) {
            descendants.push_back(m);
            break;
          }
        }
      }
    }
    std::sort(descendants.begin(), descendants.end(), [](Node* a, Node* b) { return a->depth > b->depth; });
    for (Node* d : descendants) closeLocked(d, now, true);
  }
  uint32_t instanceGen = node->gen;
  uint64_t old = node->word.exchange(uint64_t{instanceGen + 1} << 32, std::memory_order_seq_cst);
  node->gen = instanceGen + 1;  // stale thread-local entries now miss
  auto stepsDone = static_cast<int32_t>(old & kStepsMask);
  auto& open = openByName_[node->nameId];
  open.erase(std::find(open.begin(), open.end(), node));
  if (node->parent) --node->parent->openChildren;
  if (byParent) ++anomalies_.closedByParent;
  Record r{EvType::kPhaseFinish, now};
  r.node = node;
  r.gen = instanceGen;
  r.a = node->id;
  r.b = stepsDone;
  r.c = stepsDone < node->nbSteps ? 1 : 0;
  queue_.push_back(std::move(r));
}

void ProgressPipeline::phaseFinish(char const* name) noexcept {
  int64_t now = monoNowNs();
  touch(now);
  try {
    std::lock_guard<std::mutex> lk(mu_);
    if (closed_.load(std::memory_order_relaxed)) {
      afterEnd_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    int64_t id = name ? findNameLocked(name) : -1;
    Node* node = id >= 0 ? findOpenLocked(static_cast<uint32_t>(id)) : nullptr;
    if (node == nullptr) {
      ++anomalies_.unknownFinishName;
      return;
    }
    closeLocked(node, now, false);
  } catch (...) {
  }
}

void ProgressPipeline::log(Severity severity, char const* message) noexcept {
  int64_t now = monoNowNs();
  try {
    Record r{EvType::kLog, now};
    r.a = static_cast<int64_t>(severity);
    r.text = message ? message : "";
    std::lock_guard<std::mutex> lk(mu_);
    if (closed_.load(std::memory_order_relaxed)) {
      afterEnd_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queue_.push_back(std::move(r));
  } catch (...) {
  }
}

void ProgressPipeline::cacheStats(CacheStats const& stats) noexcept {
  int64_t now = monoNowNs();
  try {
    Record r{EvType::kCacheStats, now};
    r.text = cacheStatsJson(stats);
    std::lock_guard<std::mutex> lk(mu_);
    if (closed_.load(std::memory_order_relaxed)) {
      afterEnd_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    lastCacheJson_ = r.text;
    queue_.push_back(std::move(r));
  } catch (...) {
  }
}

bool ProgressPipeline::cancelRequested() const noexcept { return cancel_.load(std::memory_order_seq_cst); }

bool ProgressPipeline::waitForCancel(double ms) noexcept {
  std::unique_lock<std::mutex> lk(cancelMu_);
  cancelCv_.wait_for(lk, std::chrono::duration<double, std::milli>(std::max(ms, 0.0)),
                     [this] { return cancel_.load(std::memory_order_seq_cst); });
  return cancel_.load(std::memory_order_seq_cst);
}

void ProgressPipeline::started(std::string const& backend, std::string const& backendVersion, bool simulated,
                               std::string const& gpu) {
  Record r{EvType::kStarted, monoNowNs()};
  JsonObject o;
  o.str("backend", backend).str("backendVersion", backendVersion).boolean("simulated", simulated);
  o.num("startedAtMs", startWallMs_);
  if (gpu.empty()) {
    o.null("gpu");
  } else {
    o.str("gpu", gpu);
  }
  r.text = o.done();
  std::lock_guard<std::mutex> lk(mu_);
  if (!closed_.load(std::memory_order_relaxed)) queue_.push_back(std::move(r));
}

bool ProgressPipeline::requestCancel(CancelReason reason) {
  if (closed_.load(std::memory_order_acquire)) return false;
  if (cancel_.exchange(true, std::memory_order_seq_cst)) return false;
  int64_t now = monoNowNs();
  cancelRequestedNs_.store(now, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lk(cancelMu_);  // pairs with waitForCancel: no lost wake-up
  }
  cancelCv_.notify_all();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!closed_.load(std::memory_order_relaxed)) {
      Record r{EvType::kCancelling, now};
      r.a = static_cast<int64_t>(reason);
      queue_.push_back(std::move(r));
    }
  }
  wakeCv_.notify_all();  // deliver build.cancelling now rather than at the next tick
  return true;
}

void ProgressPipeline::finish(BuildOutcome const& outcome) {
  int64_t now = monoNowNs();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (closed_.load(std::memory_order_relaxed)) return;
    std::vector<Node*> open;
    for (auto const& list : openByName_) open.insert(open.end(), list.begin(), list.end());
    std::sort(open.begin(), open.end(), [](Node* a, Node* b) { return a->depth > b->depth; });
    for (Node* n : open) {
      if (n->word.load(std::memory_order_relaxed) & kOpenBit) {
        closeLocked(n, now, false);
        ++anomalies_.closedAtEnd;
      }
    }
    endNs_.store(now, std::memory_order_relaxed);
    int64_t requested = cancelRequestedNs_.load(std::memory_order_seq_cst);
    int64_t firstFalse = firstFalseNs_.load(std::memory_order_seq_cst);
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
    Record r{EvType::kFinished, now};
    r.a = static_cast<int64_t>(outcome.status);
    r.text = o.done();
    queue_.push_back(std::move(r));
    closed_.store(true, std::memory_order_release);
  }
  if (flusher_.joinable()) {
    {
      std::lock_guard<std::mutex> lk(wakeMu_);
      stopFlusher_ = true;
    }
    wakeCv_.notify_all();
    flusher_.join();
  } else {
    flushOnce(true);
  }
}

// ───────────────────────────── flusher side ─────────────────────────────

void ProgressPipeline::flusherLoop() {
  std::unique_lock<std::mutex> lk(wakeMu_);
  for (;;) {
    wakeCv_.wait_for(lk, std::chrono::milliseconds(std::max(1, options_.flushIntervalMs)));
    bool stop = stopFlusher_;
    if (abandonFlusher_) return;
    lk.unlock();
    flushOnce(stop);
    lk.lock();
    if (stop) return;
  }
}

void ProgressPipeline::flushNow() { flushOnce(closed_.load(std::memory_order_acquire)); }

void ProgressPipeline::emit(EventBatch& batch, OutEvent&& ev) {
  ev.seq = nextSeq_++;
  batch.events.push_back(std::move(ev));
}

void ProgressPipeline::flushOnce(bool final) {
  if (finalEmitted_) return;
  EventBatch batch;
  work_.clear();
  {
    std::lock_guard<std::mutex> lk(mu_);
    work_.swap(queue_);
    batch.firstNameId = namesSent_;
    for (auto i = namesSent_; i < names_.size(); ++i) batch.newNames.push_back(names_[i]);
    namesSent_ = static_cast<uint32_t>(names_.size());
  }
  Node* dirty = dirtyHead_.exchange(nullptr, std::memory_order_acquire);
  std::vector<Node*> retire;
  OutEvent finished;
  bool haveFinished = false;

  auto stepEvent = [&](Node* n, int32_t stepsDone) {
    OutEvent ev;
    ev.type = EvType::kPhaseStep;
    ev.t = msSinceStart(n->lastStepNs.load(std::memory_order_relaxed));
    ev.a = n->id;
    ev.b = stepsDone - 1;
    ev.c = stepsDone;
    n->flEmittedSteps = stepsDone;
    return ev;
  };

  {
    std::lock_guard<std::mutex> view(viewMu_);
    for (Record& r : work_) {
      OutEvent ev;
      ev.type = r.type;
      ev.t = msSinceStart(r.ns);
      switch (r.type) {
        case EvType::kPhaseStart: {
          r.node->flGen = r.gen;
          r.node->flEmittedSteps = 0;
          ev.a = r.a, ev.b = r.b, ev.c = r.c, ev.d = r.d, ev.e = r.e;
          view_[static_cast<int32_t>(r.a)] =
              ViewEntry{static_cast<int32_t>(r.b), static_cast<uint32_t>(r.c), static_cast<int32_t>(r.d),
                        static_cast<int32_t>(r.e), 0, ev.t, -1, false};
          break;
        }
        case EvType::kPhaseFinish: {
          auto stepsDone = static_cast<int32_t>(r.b);
          // The last steps before a finish are never coalesced away.
          if (r.node->flGen == r.gen && stepsDone > r.node->flEmittedSteps) {
            emit(batch, stepEvent(r.node, stepsDone));
          }
          r.node->flGen = UINT32_MAX;
          retire.push_back(r.node);
          ev.a = r.a, ev.b = r.b, ev.c = r.c;
          auto it = view_.find(static_cast<int32_t>(r.a));
          if (it != view_.end()) {
            it->second.stepsDone = stepsDone;
            it->second.endT = ev.t;
            it->second.early = r.c != 0;
          }
          finishedOrder_.push_back(static_cast<int32_t>(r.a));
          while (finishedOrder_.size() > options_.retainFinished) {
            view_.erase(finishedOrder_.front());
            finishedOrder_.pop_front();
          }
          break;
        }
        case EvType::kFinished:
          ev.a = r.a;
          ev.text = std::move(r.text);
          finished = std::move(ev);
          haveFinished = true;
          continue;  // emitted last
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

    // Steps of phases that moved since the last flush: one event each, with the latest step.
    std::vector<Node*> pending;
    pending.swap(carry_);
    for (Node* n = dirty; n != nullptr;) {
      Node* next = n->nextDirty;
      pending.push_back(n);
      n = next;
    }
    for (Node* n : pending) {
      uint64_t w = n->word.load(std::memory_order_seq_cst);
      bool open = (w & kOpenBit) != 0;
      auto gen = static_cast<uint32_t>(w >> 32);
      if (open && gen != n->flGen && !final) {
        carry_.push_back(n);  // its phase.start is still in the producer queue: next flush
        continue;
      }
      n->dirty.store(false, std::memory_order_seq_cst);
      w = n->word.load(std::memory_order_seq_cst);  // steps recorded before the flag cleared
      if ((w & kOpenBit) && static_cast<uint32_t>(w >> 32) == n->flGen) {
        auto stepsDone = static_cast<int32_t>(w & kStepsMask);
        if (stepsDone > n->flEmittedSteps) {
          OutEvent ev = stepEvent(n, stepsDone);
          auto it = view_.find(static_cast<int32_t>(n->id));
          if (it != view_.end()) it->second.stepsDone = stepsDone;
          emit(batch, std::move(ev));
        }
      }
    }
  }

  int64_t now = monoNowNs();
  if (!final && options_.heartbeatMs > 0 && now >= nextHeartbeatNs_) {
    OutEvent hb;
    hb.type = EvType::kHeartbeat;
    hb.t = msSinceStart(now);
    hb.x = std::max(0.0, (now - lastCallbackNs_.load(std::memory_order_relaxed)) / 1e6);
    hb.a = cancel_.load(std::memory_order_relaxed) ? 1 : 0;
    emit(batch, std::move(hb));
    nextHeartbeatNs_ = now + int64_t{options_.heartbeatMs} * 1000000;
  }
  if (haveFinished) {
    emit(batch, std::move(finished));
    batch.final = true;
    finalEmitted_ = true;
  }
  if (!retire.empty()) {
    std::lock_guard<std::mutex> lk(mu_);
    freeList_.insert(freeList_.end(), retire.begin(), retire.end());
  }
  if (!batch.events.empty() || !batch.newNames.empty()) consumer_(std::move(batch));
}

// ───────────────────────────── queries ─────────────────────────────

std::vector<PhaseSnapshot> ProgressPipeline::snapshot() const {
  std::vector<std::pair<int32_t, ViewEntry>> copy;
  {
    std::lock_guard<std::mutex> lk(viewMu_);
    copy.assign(view_.begin(), view_.end());
  }
  std::sort(copy.begin(), copy.end(), [](auto const& a, auto const& b) { return a.first < b.first; });
  std::vector<PhaseSnapshot> out;
  out.reserve(copy.size());
  std::lock_guard<std::mutex> lk(mu_);
  for (auto const& [id, v] : copy) {
    PhaseSnapshot s;
    s.id = id;
    s.parentId = v.parentId;
    s.name = v.nameId < names_.size() ? names_[v.nameId] : std::string();
    s.nbSteps = v.nbSteps;
    s.instance = v.instance;
    s.stepsDone = v.stepsDone;
    s.startT = v.startT;
    s.endT = v.endT;
    s.early = v.early;
    out.push_back(std::move(s));
  }
  return out;
}

CancelTimes ProgressPipeline::cancelTimes() const {
  return CancelTimes{cancelRequestedNs_.load(), firstFalseNs_.load(), endNs_.load()};
}

Anomalies ProgressPipeline::anomalies() const {
  Anomalies a;
  {
    std::lock_guard<std::mutex> lk(mu_);
    a = anomalies_;
  }
  a.stepOutOfRange = stepOutOfRange_.load();
  a.stepNotRising = stepNotRising_.load();
  a.unknownStepName = unknownStep_.load();
  a.afterEnd = afterEnd_.load();
  return a;
}

}  // namespace tbs
