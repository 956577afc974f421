#include "sim_plan.h"

#include <algorithm>
#include <random>

namespace tbs::sim {
namespace {

// Operators TensorRT fuses into the preceding heavy layer.
bool isFusable(std::string const& op) {
  static char const* const kOps[] = {"Relu", "Add",         "Mul",       "Sigmoid", "BatchNormalization", "Clip",    "LeakyRelu",
                                     "Tanh", "HardSigmoid", "HardSwish", "Gelu",    "Identity",           "Dropout", "Sub",
                                     "Div",  "Erf"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](char const* o) { return op == o; });
}

// Heavier operators have more candidate kernels (the real trace shows 1..153 per node).
std::pair<int, int> tacticRange(std::string const& op) {
  if (op == "Conv" || op == "ConvTranspose") return {40, 153};
  if (op == "MatMul" || op == "Gemm" || op == "Attention") return {20, 90};
  if (op == "LayerNormalization" || op == "Softmax" || op == "InstanceNormalization") return {5, 24};
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "Resize") return {3, 14};
  return {1, 8};
}

std::string optionsMaterial(BuildRequest const& r) {
  std::string m = "opt=" + std::to_string(r.optLevel) + ";strong=" + (r.stronglyTyped ? "1" : "0") + ";prec=";
  std::vector<std::string> precision = r.precision;
  std::sort(precision.begin(), precision.end());
  for (auto const& p : precision) m += p + ",";
  for (auto const& [name, range] : r.shapes) {
    m += ";" + name + "=";
    for (auto d : range.opt) m += std::to_string(d) + "x";
  }
  return m;
}

}  // namespace

std::vector<std::string> const& simPhaseNames() {
  static std::vector<std::string> const kNames = {"Building engine",
                                                  "Cloning network graph",
                                                  "Preparing graph for optimization",
                                                  "Building engine from subgraph",
                                                  "Optimizing graph",
                                                  "Computing profile costs",
                                                  "Timing tactics",
                                                  "Timing graph nodes",
                                                  "Evaluating tactic times",
                                                  "Measuring tactic time",
                                                  "Timing tensor reformats",
                                                  "Computing reformatting costs",
                                                  "Determining refit engines"};
  return kNames;
}

SimPlan makeSimPlan(BuildRequest const& request) {
  std::vector<LayerInfo> layers = request.layers;
  if (layers.empty()) {
    static char const* const kOps[] = {"Conv", "Relu", "MaxPool", "Conv", "Relu", "MaxPool", "Reshape", "Gemm", "Relu", "Gemm", "Softmax"};
    for (size_t i = 0; i < std::size(kOps); ++i) layers.push_back({std::string(kOps[i]) + "_" + std::to_string(i), kOps[i]});
  }
  // Seeded by the request seed only (not by layer names) so "same seed, same model" repeats.
  std::mt19937_64 rng(request.simSeed * 0x9e3779b97f4a7c15ull + 17);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)); };

  SimPlan plan;
  plan.layerCount = static_cast<int>(layers.size());
  plan.cloneSteps = std::clamp(static_cast<int>(layers.size()) * 2 + 6, 8, 2000);
  plan.optimizeSteps = std::clamp(static_cast<int>(layers.size()) / 2 + 20, 20, 400);
  plan.optimizeEarlyAt = std::max(1, plan.optimizeSteps * pick(80, 90) / 100);

  std::string const material = optionsMaterial(request);
  for (size_t i = 0; i < layers.size();) {
    TacticGroup g;
    g.name = layers[i].name.empty() ? "layer_" + std::to_string(i) : layers[i].name;
    g.op = layers[i].op;
    size_t j = i + 1;
    while (j < layers.size() && isFusable(layers[j].op) && j - i < 3) {
      g.name += " + " + (layers[j].name.empty() ? "layer_" + std::to_string(j) : layers[j].name);
      ++j;
    }
    auto [lo, hi] = tacticRange(g.op);
    int tactics = pick(lo, hi);
    for (int t = 0; t < tactics; ++t) g.measureSteps.push_back(pick(0, 3) == 0 ? 4 : 2);
    g.key = makeCacheKey("node|" + g.op + "|" + g.name + "|" + material);
    plan.groups.push_back(std::move(g));
    i = j;
  }
  int reformats = std::clamp(static_cast<int>(plan.groups.size()), 1, 64);
  for (int r = 0; r < reformats; ++r) {
    ReformatGroup rg;
    rg.costs = pick(1, 9);
    rg.key = makeCacheKey("reformat|" + std::to_string(r) + "|" + plan.groups[static_cast<size_t>(r) % plan.groups.size()].name + "|" +
                          material);
    plan.reformats.push_back(rg);
  }
  plan.engineBytes = 4096 + 256 * static_cast<int64_t>(layers.size());
  return plan;
}

}  // namespace tbs::sim
