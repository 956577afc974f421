// The shape of a simulated build, derived from the model's layer list and the seed before any
// callback is made, so a seed always yields the same tree (only thread interleaving varies).
// Shaped after the TensorRT 10.16 build described in docs/tensorrt.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../core/backend.h"
#include "sim_timing_cache.h"

namespace tbs::sim {

// One fused layer group timed under "Timing graph nodes" ("conv1 + relu1").
struct TacticGroup {
  std::string name;
  std::string op;
  std::vector<uint8_t> measureSteps;  // per tactic: 2 or 4 ("Measuring tactic time")
  CacheKey key;
};

// One entry of "Timing tensor reformats": 1..9 reformatting costs, each timed with 3 tactics.
struct ReformatGroup {
  int costs = 1;
  CacheKey key;
};

struct SimPlan {
  int cloneSteps = 1;
  int optimizeSteps = 1;
  int optimizeEarlyAt = 1;  // "Optimizing graph" finishes early after this many steps
  std::vector<TacticGroup> groups;
  std::vector<ReformatGroup> reformats;
  int64_t engineBytes = 0;
  int layerCount = 0;
};

// Layers with no list (e.g. a request without a model reader) get a small synthetic network.
SimPlan makeSimPlan(BuildRequest const& request);

// Names of the phases the simulator reports (for fault-phase validation and seeded choice).
std::vector<std::string> const& simPhaseNames();

}  // namespace tbs::sim
