#include "emitted_tree.h"

#include <algorithm>
#include <functional>

namespace tbs {

EmittedTree::Phase* EmittedTree::find(int64_t id) {
  auto it = phases_.find(id);
  return it == phases_.end() ? nullptr : &it->second;
}

int64_t EmittedTree::nearestOpen(int64_t id, bool* moved) const {
  *moved = false;
  while (id >= 0) {
    auto p = phases_.find(id);
    if (p != phases_.end() && p->second.open) break;
    id = p == phases_.end() ? -1 : p->second.parentId;
    *moved = true;
  }
  return id;
}

void EmittedTree::add(int64_t id, Phase phase) {
  int64_t parent = phase.parentId;
  phases_[id] = std::move(phase);
  if (parent >= 0) phases_[parent].openChildren.push_back(id);
}

void EmittedTree::close(int64_t id, int32_t stepsDone, double endT, bool early) {
  Phase* v = find(id);
  if (v == nullptr) return;
  v->open = false;
  v->stepsDone = stepsDone;
  v->endT = endT;
  v->early = early;
  if (Phase* p = v->parentId >= 0 ? find(v->parentId) : nullptr) {
    auto& oc = p->openChildren;
    oc.erase(std::remove(oc.begin(), oc.end(), id), oc.end());
  }
  finishedOrder_.push_back(id);
}

std::vector<int64_t> EmittedTree::openChildren(int64_t id) const {
  auto it = phases_.find(id);
  std::vector<int64_t> out = it == phases_.end() ? std::vector<int64_t>{} : it->second.openChildren;
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

std::vector<int64_t> EmittedTree::openPhases() const {
  std::vector<int64_t> out;
  for (auto const& [id, v] : phases_) {
    if (v.open) out.push_back(id);
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

void EmittedTree::forgetOldFinished() {
  while (finishedOrder_.size() > retainFinished_) {
    phases_.erase(finishedOrder_.front());
    finishedOrder_.pop_front();
  }
}

std::vector<PhaseSnapshot> EmittedTree::snapshot(NameTable const& names) const {
  std::vector<PhaseSnapshot> out;
  std::vector<uint32_t> nameIds;
  {
    std::lock_guard<std::mutex> lk(mu_);
    out.reserve(phases_.size());
    nameIds.reserve(phases_.size());
    for (auto const& [id, v] : phases_) {
      PhaseSnapshot s;
      s.id = id;
      s.parentId = v.parentId;
      s.nbSteps = v.nbSteps;
      s.instance = v.instance;
      s.stepsDone = v.stepsDone;
      s.startT = v.startT;
      s.endT = v.open ? -1 : v.endT;
      s.early = v.early;
      out.push_back(std::move(s));
      nameIds.push_back(v.nameId);
    }
  }
  std::vector<std::string> text = names.namesOf(nameIds);
  for (size_t i = 0; i < out.size(); ++i) out[i].name = std::move(text[i]);
  std::sort(out.begin(), out.end(), [](auto const& a, auto const& b) { return a.id < b.id; });
  return out;
}

}  // namespace tbs
