// The knob database the simulated backend offers when it imitates TensorRT 11.1 or later, in the
// form IBuilderConfig::getAllBuildRoutes() returns it (11.1 NvInfer.h), and the check that
// IBuilderConfig::setBuildRoute makes of a route against it. The knobs include the two of
// NVIDIA's header example, so the route "-conv_use_long_w=off -kgen:codegen:cuda_tile=2" builds
// in simulation. The other knobs are those trtexec's README uses in its examples; their help
// texts are ours. Real libraries list more knobs (which, depends on the library and the GPU).
#pragma once

#include <string>
#include <vector>

namespace tbs::sim {

// The JSON text (tuner_version, tuner_options[{option, allowed_values, default_value, help}]).
std::string const& simKnobDatabaseJson();

// The allowed-values patterns ("-conv_use_long_w=[on|off]"), one per knob, in database order.
std::vector<std::string> simKnobPatterns();

// Empty when every "-knob=value" of the route names a knob of the database with one of its
// allowed values; otherwise why not, naming the knob or the token.
std::string simRouteError(std::string const& route);

// "11.1.0" → true for 11.1 and later (the versions that have build routes).
bool simVersionHasBuildRoutes(std::string const& version);

}  // namespace tbs::sim
