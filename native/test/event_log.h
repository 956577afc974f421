// Test support: a pipeline consumer that keeps every event, and the protocol invariants every
// event stream must satisfy (shared by the invariants, cancel, pipeline and stress tests).
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/events.h"
#include "core/progress_pipeline.h"

namespace tbs_test {

using tbs::EvType;
using tbs::OutEvent;

struct EventLog {
  std::mutex mu;
  std::vector<OutEvent> events;
  std::vector<std::string> names;
  int batches = 0;
  int batchesAfterFinal = 0;
  bool sawFinal = false;

  tbs::ProgressPipeline::Consumer consumer() {
    return [this](tbs::EventBatch&& b) {
      std::lock_guard<std::mutex> lk(mu);
      ++batches;
      if (sawFinal) ++batchesAfterFinal;
      if (names.size() < b.firstNameId + b.newNames.size()) names.resize(b.firstNameId + b.newNames.size());
      for (size_t i = 0; i < b.newNames.size(); ++i) names[b.firstNameId + i] = b.newNames[i];
      for (auto& e : b.events) events.push_back(std::move(e));
      if (b.final) sawFinal = true;
    };
  }
  size_t count(EvType t) {
    size_t n = 0;
    for (auto const& e : events) n += e.type == t;
    return n;
  }
  OutEvent const* last(EvType t) {
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
      if (it->type == t) return &*it;
    }
    return nullptr;
  }
  std::string nameOf(int64_t nameId) { return nameId >= 0 && size_t(nameId) < names.size() ? names[nameId] : "?"; }
};

// Returns "" when every invariant holds, else the first violation.
inline std::string checkInvariants(EventLog& log, bool requireFinished = true) {
  std::ostringstream err;
  struct Open {
    int64_t parent;
    int64_t nbSteps;
    int64_t stepsDone;
  };
  std::map<int64_t, Open> open;
  std::set<int64_t> seen;
  uint64_t expectSeq = 0;
  bool finished = false;
  double cancelAt = -1;
  for (size_t i = 0; i < log.events.size(); ++i) {
    OutEvent const& e = log.events[i];
    if (finished) return "event after build.finished at index " + std::to_string(i);
    if (e.seq != expectSeq) {
      err << "seq " << e.seq << " at index " << i << ", expected " << expectSeq;
      return err.str();
    }
    ++expectSeq;
    switch (e.type) {
      case EvType::kPhaseStart:
        if (seen.count(e.a)) return "phase id " + std::to_string(e.a) + " started twice";
        seen.insert(e.a);
        if (e.b >= 0 && !open.count(e.b)) {
          err << "phase " << e.a << " (" << log.nameOf(e.c) << ") started under parent " << e.b << " which is not open";
          return err.str();
        }
        open[e.a] = Open{e.b, e.d, 0};
        break;
      case EvType::kPhaseStep: {
        auto it = open.find(e.a);
        if (it == open.end()) return "step for phase " + std::to_string(e.a) + " which is not open";
        if (e.c != e.b + 1) return "stepsDone != step + 1";
        if (e.c < 1 || e.c > it->second.nbSteps) {
          err << "step " << e.b << " out of range [0," << it->second.nbSteps << ") for phase " << e.a;
          return err.str();
        }
        if (e.c <= it->second.stepsDone) {
          err << "steps not rising for phase " << e.a << ": " << it->second.stepsDone << " then " << e.c;
          return err.str();
        }
        if (cancelAt >= 0 && e.t > cancelAt) {
          err << "step of phase " << e.a << " completed at t=" << e.t << " after cancel at " << cancelAt;
          return err.str();
        }
        it->second.stepsDone = e.c;
        break;
      }
      case EvType::kPhaseFinish: {
        auto it = open.find(e.a);
        if (it == open.end()) return "finish for phase " + std::to_string(e.a) + " which is not open (double finish?)";
        for (auto const& [id, o] : open) {
          if (o.parent == e.a) return "phase " + std::to_string(e.a) + " finished while child " + std::to_string(id) + " open";
        }
        if (e.b != it->second.stepsDone) {
          err << "finish stepsDone " << e.b << " != last step event " << it->second.stepsDone << " (phase " << e.a << ")";
          return err.str();
        }
        if ((e.c != 0) != (e.b < it->second.nbSteps)) return "early flag wrong for phase " + std::to_string(e.a);
        open.erase(it);
        break;
      }
      case EvType::kCancelling:
        cancelAt = e.x;
        break;
      case EvType::kFinished:
        finished = true;
        break;
      default:
        break;
    }
  }
  if (requireFinished && !finished) return "no build.finished";
  if (finished && !open.empty()) return std::to_string(open.size()) + " phases never finished";
  if (log.batchesAfterFinal != 0) return "consumer called after the final batch";
  return "";
}

inline std::vector<tbs::LayerInfo> layersOf(int n, unsigned seed = 1) {
  static char const* const kOps[] = {"Conv", "Relu", "Add", "MatMul", "Softmax", "MaxPool", "Gemm", "Sigmoid"};
  std::vector<tbs::LayerInfo> out;
  for (int i = 0; i < n; ++i) out.push_back({"layer_" + std::to_string(i), kOps[(i * 7 + seed) % 8]});
  return out;
}

}  // namespace tbs_test
