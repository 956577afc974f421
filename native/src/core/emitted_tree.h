// The phase tree as the flusher has emitted it: what snapshot() reports, and what tree repair
// consults (the nearest open ancestor of a phase whose parent already finished, the open children
// a finishing parent closes). Only the flusher changes it, holding mutex() for the whole flush;
// snapshot() takes the same mutex from any thread. Finished phases are kept up to a limit, oldest
// forgotten first, so memory stays flat over builds with millions of phases.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
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
  };

  explicit EmittedTree(size_t retainFinished) : retainFinished_(retainFinished) {}

  std::mutex& mutex() const { return mu_; }

  // The flusher, holding mutex(). Pointers stay valid until forgetOldFinished().
  Phase* find(int64_t id);
  // `id` if it is open, else its nearest open ancestor (-1: none); *moved says whether it moved.
  int64_t nearestOpen(int64_t id, bool* moved) const;
  void add(int64_t id, Phase phase);  // linked into its parent's open children
  void close(int64_t id, int32_t stepsDone, double endT, bool early);
  std::vector<int64_t> openChildren(int64_t id) const;  // newest first
  std::vector<int64_t> openPhases() const;              // newest first
  void forgetOldFinished();

  // Any thread: every phase kept, sorted by id.
  std::vector<PhaseSnapshot> snapshot(NameTable const& names) const;

 private:
  size_t const retainFinished_;
  mutable std::mutex mu_;
  std::unordered_map<int64_t, Phase> phases_;
  std::deque<int64_t> finishedOrder_;
};

}  // namespace tbs
