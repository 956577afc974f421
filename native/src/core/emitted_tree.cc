#include "emitted_tree.h"

#include <algorithm>
#include <functional>

namespace tbs {
namespace {

// Ids are sequence numbers, added and forgotten roughly in order. Groups of four consecutive ids
// share 64 bytes of the index (Fibonacci hashing spreads the groups), so inserting and forgetting
// in order touches new cache lines about once per group rather than once per id: the index is
// larger than the cache, and its misses were most of its cost (perf, bench:native storm).
size_t home(int64_t id, size_t mask) {
  auto u = static_cast<uint64_t>(id);
  return static_cast<size_t>((((u >> 2) * 0x9E3779B97F4A7C15ull) >> 24) * 4 + (u & 3)) & mask;
}

}  // namespace

EmittedTree::EmittedTree(size_t retainFinished) : retainFinished_(retainFinished) {
  index_.resize(1024);  // a power of two, a multiple of 4 entries (home())
  mask_ = index_.size() - 1;
}

size_t EmittedTree::probe(int64_t id) const {
  size_t i = home(id, mask_);
  while (index_[i].id != -1 && index_[i].id != id) i = (i + 1) & mask_;
  return i;
}

void EmittedTree::grow() {
  std::vector<Entry> old;
  old.swap(index_);
  index_.assign(old.size() * 2, Entry{});
  mask_ = index_.size() - 1;
  for (Entry const& e : old) {
    if (e.id != -1) index_[probe(e.id)] = e;
  }
}

// Backward-shift deletion: later entries of the same probe run move up into the hole, so a
// lookup never needs tombstones.
void EmittedTree::eraseAt(size_t i) {
  for (size_t j = i;;) {
    index_[i].id = -1;
    for (;;) {
      j = (j + 1) & mask_;
      if (index_[j].id == -1) return;
      size_t want = home(index_[j].id, mask_);
      // Entry j may fill the hole at i unless its home lies cyclically in (i, j].
      bool stays = i <= j ? (i < want && want <= j) : (i < want || want <= j);
      if (!stays) break;
    }
    index_[i] = index_[j];
    i = j;
  }
}

uint32_t EmittedTree::slotOf(int64_t id) const {
  if (id < 0) return kNoSlot;
  Entry const& e = index_[probe(id)];
  return e.id == -1 ? kNoSlot : e.slot;
}

EmittedTree::Phase* EmittedTree::find(int64_t id) {
  uint32_t slot = slotOf(id);
  return slot == kNoSlot ? nullptr : &slots_[slot];
}

int64_t EmittedTree::nearestOpen(int64_t id, bool* moved, uint32_t* slot) const {
  *moved = false;
  uint32_t s = kNoSlot;
  while (id >= 0) {
    s = slotOf(id);
    if (s != kNoSlot && slots_[s].open) break;
    id = s == kNoSlot ? -1 : slots_[s].parentId;
    s = kNoSlot;
    *moved = true;
  }
  if (slot != nullptr) *slot = s;
  return id;
}

uint32_t EmittedTree::add(int64_t id, Phase phase, uint32_t parentSlot) {
  phase.parentSlot = parentSlot;
  size_t i = probe(id);
  uint32_t slot;
  if (index_[i].id == id) {
    slot = index_[i].slot;
    slots_[slot] = std::move(phase);
  } else {
    if (!freeSlots_.empty()) {
      slot = freeSlots_.back();
      freeSlots_.pop_back();
      // Keep the slot's child list capacity: the next phase there most likely has children too.
      std::vector<int64_t> children = std::move(slots_[slot].openChildren);
      children.clear();
      slots_[slot] = std::move(phase);
      if (slots_[slot].openChildren.empty()) slots_[slot].openChildren = std::move(children);
      slotIds_[slot] = id;
    } else {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.push_back(std::move(phase));
      slotIds_.push_back(id);
    }
    index_[i] = Entry{id, slot};
    if (++count_ * 2 > index_.size()) grow();
  }
  if (parentSlot != kNoSlot) slots_[parentSlot].openChildren.push_back(id);
  return slot;
}

void EmittedTree::close(uint32_t slot, int32_t stepsDone, double endT, bool early) {
  Phase& v = slots_[slot];
  if (!v.open) return;
  int64_t id = slotIds_[slot];
  v.open = false;
  v.stepsDone = stepsDone;
  v.endT = endT;
  v.early = early;
  if (v.parentSlot != kNoSlot) {
    auto& oc = slots_[v.parentSlot].openChildren;
    // The newest child is the one that usually ends first: search from the back.
    for (size_t k = oc.size(); k-- > 0;) {
      if (oc[k] == id) {
        oc.erase(oc.begin() + static_cast<std::ptrdiff_t>(k));
        break;
      }
    }
  }
  finishedOrder_.push_back(id);
}

std::vector<int64_t> EmittedTree::openChildren(int64_t id) const {
  std::vector<int64_t> out;
  if (id < 0) return out;
  Entry const& e = index_[probe(id)];
  if (e.id == -1 || slots_[e.slot].openChildren.empty()) return out;
  out = slots_[e.slot].openChildren;
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

std::vector<int64_t> EmittedTree::openPhases() const {
  std::vector<int64_t> out;
  for (size_t s = 0; s < slotIds_.size(); ++s) {
    if (slotIds_[s] >= 0 && slots_[s].open) out.push_back(slotIds_[s]);
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

void EmittedTree::forgetOldFinished() {
  while (finishedOrder_.size() > retainFinished_) {
    int64_t id = finishedOrder_.front();
    finishedOrder_.pop_front();
    size_t i = probe(id);
    if (index_[i].id == -1) continue;
    uint32_t slot = index_[i].slot;
    eraseAt(i);
    slotIds_[slot] = -1;
    freeSlots_.push_back(slot);
    --count_;
  }
}

std::vector<PhaseSnapshot> EmittedTree::snapshot(NameTable const& names) const {
  std::vector<PhaseSnapshot> out;
  std::vector<uint32_t> nameIds;
  {
    std::lock_guard<std::mutex> lk(mu_);
    out.reserve(count_);
    nameIds.reserve(count_);
    for (size_t s = 0; s < slotIds_.size(); ++s) {
      if (slotIds_[s] < 0) continue;
      Phase const& v = slots_[s];
      PhaseSnapshot p;
      p.id = slotIds_[s];
      p.parentId = v.parentId;
      p.nbSteps = v.nbSteps;
      p.instance = v.instance;
      p.stepsDone = v.stepsDone;
      p.startT = v.startT;
      p.endT = v.open ? -1 : v.endT;
      p.early = v.early;
      out.push_back(std::move(p));
      nameIds.push_back(v.nameId);
    }
  }
  std::vector<std::string> text = names.namesOf(nameIds);
  for (size_t i = 0; i < out.size(); ++i) out[i].name = std::move(text[i]);
  std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.id < b.id; });
  return out;
}

}  // namespace tbs
