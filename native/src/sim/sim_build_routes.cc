#include "sim_build_routes.h"

#include <cstdio>
#include <sstream>

#include "../trt/trt_capabilities.h"

namespace tbs::sim {
namespace {

struct SimKnob {
  char const* option;
  std::vector<char const*> values;
  char const* defaultValue;
  char const* help;
};

std::vector<SimKnob> const& simKnobs() {
  static auto const* knobs = new std::vector<SimKnob>{
      {"-conv_use_long_w", {"on", "off"}, "on", "Convert Conv [N, C, X, 1] to [N, C, 1, X] in CASK params for perf."},
      {"-kgen:codegen:cuda_tile",
       {"0", "1", "2", "3"},
       "1",
       "CUDA Tile codegen. 0: disable, 1: where profitable, 2: supported kdags, 3: force all."},
      {"-match_ragged_mha", {"on", "off"}, "on", "Simulated knob (from trtexec's README examples): ragged multi-head attention fusion."},
      {"-copy_ppg", {"on", "off"}, "on", "Simulated knob (from trtexec's README examples): copy pointwise producer groups."},
  };
  return *knobs;
}

std::string pattern(SimKnob const& k) {
  std::string p = std::string(k.option) + "=[";
  for (size_t i = 0; i < k.values.size(); ++i) p += (i ? "|" : "") + std::string(k.values[i]);
  return p + "]";
}

}  // namespace

std::string const& simKnobDatabaseJson() {
  static auto const* json = [] {
    std::string s = "{\"tuner_version\": \"sim-2.19.15\", \"tuner_options\": [";
    bool first = true;
    for (auto const& k : simKnobs()) {
      s += std::string(first ? "" : ", ") + "{\"option\": \"" + k.option + "\", \"allowed_values\": \"" + pattern(k) +
           "\", \"default_value\": \"" + k.defaultValue + "\", \"help\": \"" + k.help + "\"}";
      first = false;
    }
    return new std::string(s + "]}");
  }();
  return *json;
}

std::vector<std::string> simKnobPatterns() {
  std::vector<std::string> out;
  for (auto const& k : simKnobs()) out.push_back(pattern(k));
  return out;
}

std::string simRouteError(std::string const& route) {
  std::istringstream in(route);
  std::string token;
  bool any = false;
  while (in >> token) {
    any = true;
    size_t eq = token.find('=');
    if (token.size() < 2 || token[0] != '-' || eq == std::string::npos || eq + 1 == token.size()) {
      return "\"" + token + "\" is not a knob setting (-knob=value)";
    }
    std::string option = token.substr(0, eq);
    std::string value = token.substr(eq + 1);
    SimKnob const* knob = nullptr;
    for (auto const& k : simKnobs()) {
      if (option == k.option) knob = &k;
    }
    if (knob == nullptr) return "unknown knob " + option;
    bool allowed = false;
    for (char const* v : knob->values) allowed = allowed || value == v;
    if (!allowed) return "knob " + option + " does not take \"" + value + "\" (allowed: " + pattern(*knob) + ")";
  }
  return any ? std::string() : std::string("the route is empty");
}

bool simVersionHasBuildRoutes(std::string const& version) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return trt::releaseHas({major, minor, 0}, facts::kBuildRoutes);
}

}  // namespace tbs::sim
