// The phase tree as the flusher has emitted it: what snapshot() reports, and what tree repair
// consults (the nearest open ancestor of a phase whose parent already finished, the open children
// a finishing parent closes). Only the flusher changes it, holding mutex() for the whole flush;
// snapshot() takes the same mutex from any thread. Finished phases are kept up to a limit, oldest
// forgotten first, so memory stays flat over builds with millions of phases.
//
// Storage: phases live in a pool of slots that are reused (a slot keeps its openChildren
// capacity), found through an open-addressing index keyed by id. A flush touches the tree
// several times per phase (parent lookup, insert, finish, forget); with std::unordered_map every
// phase was a heap node allocated by the flusher and freed when forgotten, and that allocation
// and hashing were the largest part of the flusher's time after the records themselves
// (bench:native, 8 producers on 2 cores, where the flusher's CPU is the builder's throughput).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "name_table.h"

namespace tbs {

// A phase as snapshot() reports it (protocol PhaseNode).
struct PhaseSnapshot {
  int64_t id = 0;
  int64_t parentId = -1;  // -1 = root
  std::string name;
  int32_t nbSteps = 0;
  int32_t instance = 0;
  int32_t stepsDone = 0;
  double startT = 0;
  double endT = -1;  // -1 = still open
  bool early = false;
};

class EmittedTree {
 public:
  struct Phase {
    int64_t parentId = -1;
    uint32_t nameId = 0;
    int32_t nbSteps = 0;
    int32_t instance = 0;
    int32_t stepsDone = 0;
    double startT = 0;
    double endT = -1;
    bool early = false;
    bool open = true;
    void* node = nullptr;  // the recorder's node for this phase (opaque here)
    uint32_t gen = 0;      // and its generation
    std::vector<int64_t> openChildren;
    // The parent's slot; valid while this phase is open (a phase is closed only after its open
    // children, so an open phase's parent is open and keeps its slot).
    uint32_t parentSlot = kNoSlot;
  };
  static constexpr uint32_t kNoSlot = UINT32_MAX;

  explicit EmittedTree(size_t retainFinished);

  std::mutex& mutex() const { return mu_; }

  // The flusher, holding mutex(). Pointers and slots stay valid until forgetOldFinished(). A
  // slot is a phase's place in the tree: the flusher keeps it beside the phase's recorder node,
  // so the records of a phase it already knows need no lookup by id.
  Phase* find(int64_t id);
  uint32_t slotOf(int64_t id) const;  // kNoSlot if not kept
  Phase& at(uint32_t slot) { return slots_[slot]; }
  // `id` if it is open, else its nearest open ancestor (-1: none); *moved says whether it moved,
  // *slot receives the slot of the phase returned (kNoSlot for -1).
  int64_t nearestOpen(int64_t id, bool* moved, uint32_t* slot = nullptr) const;
  // Linked into the open children of the phase at parentSlot (kNoSlot: a root). Returns its slot.
  uint32_t add(int64_t id, Phase phase, uint32_t parentSlot);
  void close(uint32_t slot, int32_t stepsDone, double endT, bool early);
  std::vector<int64_t> openChildren(int64_t id) const;  // newest first
  std::vector<int64_t> openPhases() const;              // newest first
  void forgetOldFinished();

  // Any thread: every phase kept, sorted by id.
  std::vector<PhaseSnapshot> snapshot(NameTable const& names) const;

 private:
  // Index: open addressing with linear probing, at most half full; id -1 marks a free entry.
  struct Entry {
    int64_t id = -1;
    uint32_t slot = 0;
  };  // 16 bytes: four to a cache line
  size_t probe(int64_t id) const;  // the entry holding id, or the free entry where it would go
  void eraseAt(size_t entry);
  void grow();

  size_t const retainFinished_;
  mutable std::mutex mu_;
  std::deque<Phase> slots_;       // a deque never moves its elements: Phase pointers stay valid
  std::vector<int64_t> slotIds_;  // the id each slot holds, -1 when free
  std::vector<uint32_t> freeSlots_;
  std::vector<Entry> index_;
  size_t mask_ = 0;
  size_t count_ = 0;
  std::deque<int64_t> finishedOrder_;
};

}  // namespace tbs
