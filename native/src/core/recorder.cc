#include "recorder.h"

#include <algorithm>
#include <cstring>

namespace tbs {
namespace {

std::atomic<uint64_t> gNextRecorderUid{1};

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
  int64_t lastNs = 0;  // the thread's latest clock reading in a callback (0: none yet)
  StepEntry steps[4];
  unsigned nextStep = 0;
  ThreadEntry threads[4];
  unsigned nextThread = 0;
};
thread_local Tls tTls;

// A free entry first (a phase this thread finished gives its entry back), so that a parent's
// entry survives its children coming and going: with round-robin alone, four short children
// pushed the parent out and every parent step took the slow path (findOpen).
void rememberStep(uint64_t uid, void* node, uint32_t gen, int32_t nbSteps, char const* raw, char const* interned) {
  StepEntry* free = nullptr;
  for (auto& e : tTls.steps) {
    if (e.uid == uid && e.node == node) {
      e = StepEntry{uid, node, gen, nbSteps, raw, interned};
      return;
    }
    if (free == nullptr && e.uid == 0) free = &e;
  }
  if (free == nullptr) free = &tTls.steps[tTls.nextStep++ % 4];
  *free = StepEntry{uid, node, gen, nbSteps, raw, interned};
}

// The phase ended: its entry would only match its name and then fail the generation check,
// sending the next step of a newer phase of that name to the slow path.
void forgetStep(uint64_t uid, void* node) {
  for (auto& e : tTls.steps) {
    if (e.uid == uid && e.node == node) e.uid = 0;
  }
}

}  // namespace

Recorder::Recorder(NameTable& names, FlushPacer& pacer, CrashRecord& crash, CancelState const& cancel, std::atomic<bool> const& ended)
    : names_(names), pacer_(pacer), crash_(crash), cancel_(cancel), ended_(ended), uid_(gNextRecorderUid.fetch_add(1)) {}

Recorder::~Recorder() {
  for (FreeChunk* c = freeChunks_.exchange(nullptr); c != nullptr;) {
    FreeChunk* next = c->next;
    delete c;
    c = next;
  }
}

// Lock-free on the flusher's side: the nodes go onto a stack of chunks that producers pop (one
// popper at a time, under poolMu_, which the flusher never takes: a callback that refills its
// spare nodes never waits for the flusher, and a single popper makes the pop ABA-free).
void Recorder::retire(std::vector<Node*> const& nodes) {
  for (size_t i = 0; i < nodes.size(); i += kRefill) {
    FreeChunk* c;
    try {
      c = new FreeChunk;
      c->nodes.assign(nodes.begin() + static_cast<std::ptrdiff_t>(i),
                      nodes.begin() + static_cast<std::ptrdiff_t>(std::min(nodes.size(), i + kRefill)));
    } catch (...) {
      return;  // out of memory: these nodes stay unused (the arena still owns them)
    }
    c->next = freeChunks_.load(std::memory_order_relaxed);
    while (!freeChunks_.compare_exchange_weak(c->next, c, std::memory_order_release, std::memory_order_relaxed)) {
    }
  }
}

Recorder::ThreadState* Recorder::self() noexcept {
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
bool Recorder::tryNode(Node* n, uint32_t slotGen, uint32_t nameId, Found& out) const noexcept {
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
Recorder::Found Recorder::findOpen(uint32_t nameId, ThreadState* me) noexcept {
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

void Recorder::pushOpen(ThreadState* ts, Node* n, uint32_t gen) noexcept {
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

void Recorder::removeOpen(ThreadState* ts, Node* n, uint32_t gen) noexcept {
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

int32_t Recorder::bumpInstance(std::atomic<uint64_t>* slots, int64_t ownerId, uint32_t nameId) noexcept {
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

Recorder::Node* Recorder::allocNode(ThreadState* ts) {
  if (ts->spare.empty()) {
    // Refill in bulk so the pool lock is taken once per 64 phases; only producers take it.
    std::lock_guard<std::mutex> lk(poolMu_);
    FreeChunk* c = freeChunks_.load(std::memory_order_acquire);
    while (c != nullptr && !freeChunks_.compare_exchange_weak(c, c->next, std::memory_order_acquire, std::memory_order_acquire)) {
    }
    if (c != nullptr) {
      ts->spare.swap(c->nodes);
      delete c;
    } else {
      // New nodes only when no retired ones wait: topping up every refill would grow the arena.
      for (size_t i = 0; i < kRefill; ++i) {
        arena_.emplace_back();
        ts->spare.push_back(&arena_.back());
      }
    }
  }
  Node* n = ts->spare.back();
  ts->spare.pop_back();
  return n;
}

void Recorder::phaseStart(char const* name, char const* parent, int32_t nbSteps, int64_t now) noexcept {
  tTls.lastNs = now;
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
    if (parentFound.node == nullptr) counters_.unknownParent.fetch_add(1, std::memory_order_relaxed);  // a root
  }
  int32_t instance =
      parentFound.node ? bumpInstance(parentFound.node->instances, parentFound.id, nameId) : bumpInstance(rootInstances_, -1, nameId);
  Node* n;
  try {
    n = allocNode(ts);
  } catch (...) {
    return;  // allocation failure: drop the phase rather than throw into the builder
  }
  uint64_t seq = seq_.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: flush_pacer.h
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
void Recorder::recordCrashPath(Node* n) noexcept {
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
Recorder::Found Recorder::latestOpen() noexcept {
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

void Recorder::markDirty(Node* node) noexcept {
  // Most steps find their phase already queued since the flusher's last look: a plain load
  // (seq_cst: the flusher clears the flag with a seq_cst store before its seq_cst read of the
  // word, so a step that sees the flag still set is read by that flush) spares them the locked
  // exchange, the largest part of a step's cost.
  if (node->dirty.load(std::memory_order_seq_cst)) return;
  if (node->dirty.exchange(true, std::memory_order_seq_cst)) return;  // already queued
  Node* head = dirtyHead_.load(std::memory_order_relaxed);
  do {
    node->nextDirty = head;
  } while (!dirtyHead_.compare_exchange_weak(head, node, std::memory_order_seq_cst, std::memory_order_relaxed));
  // The first phase to move since the flusher's last look: it may be asleep.
  if (head == nullptr) pacer_.activity();
}

Recorder::StepResult Recorder::stepComplete(char const* name, int32_t step, int64_t* nowOut) noexcept {
  Node* node = nullptr;
  uint32_t gen = 0;
  int32_t nb = 0;
  // The pointer is only a fast first check: TensorRT may reuse a name buffer for another phase,
  // so the name itself must match too.
  if (name != nullptr) {
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
  }
  // The time (see the declaration): a phase already queued for the flusher (`dirty`) has had
  // its timed step since the flusher's last look. Never earlier than the phase's own latest
  // step or start, which another thread may have timed.
  int64_t now = tTls.lastNs;
  if (node == nullptr || now == 0 || !node->dirty.load(std::memory_order_relaxed)) {
    now = callbackNowNs();
    tTls.lastNs = now;
  } else {
    now = std::max(now, node->lastStepNs.load(std::memory_order_relaxed));
  }
  *nowOut = now;
  if (cancel_.requested()) return StepResult::kCancelled;
  if (ended_.load(std::memory_order_acquire)) return StepResult::kEnded;
  if (name == nullptr) {
    counters_.unknownStep.fetch_add(1, std::memory_order_relaxed);
    return StepResult::kRecorded;
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
        counters_.stepOutOfRange.fetch_add(1, std::memory_order_relaxed);
        return StepResult::kRecorded;
      }
      if (uint64_t(step) + 1 <= (w & kStepsMask)) {
        counters_.stepNotRising.fetch_add(1, std::memory_order_relaxed);
        return StepResult::kRecorded;
      }
      if (node->word.compare_exchange_weak(w, (w & ~kStepsMask) | (uint64_t(step) + 1), std::memory_order_seq_cst)) {
        node->lastStepNs.store(now, std::memory_order_relaxed);
        markDirty(node);
        return StepResult::kRecorded;
      }
    }
    forgetStep(uid_, node);  // the cached phase has finished (on another thread): look the name up again
    node = nullptr;
  }
  counters_.unknownStep.fetch_add(1, std::memory_order_relaxed);
  return StepResult::kRecorded;
}

void Recorder::phaseFinish(char const* name, int64_t now) noexcept {
  tTls.lastNs = now;
  ThreadState* ts = self();
  uint32_t nameId = name ? names_.idOf(name, false) : kNoName;
  if (ts == nullptr || nameId == kNoName) {
    counters_.unknownFinish.fetch_add(1, std::memory_order_relaxed);
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
    forgetStep(uid_, f.node);
    if (crash_.active() && crashShownId_.load(std::memory_order_relaxed) == f.id) {
      // The recorded phase ended: show the most recently started phase still open instead.
      Found latest = latestOpen();
      int64_t expected = f.id;
      if (crashShownId_.compare_exchange_strong(expected, latest.id, std::memory_order_relaxed)) recordCrashPath(latest.node);
    }
    auto stepsDone = static_cast<int64_t>(w & kStepsMask);
    Record r;
    r.seq = seq_.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: flush_pacer.h
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
  counters_.unknownFinish.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tbs
