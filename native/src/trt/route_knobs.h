// The knobs of a TensorRT 11.1 build-route database (IBuilderConfig::getAllBuildRoutes() JSON),
// read as NVIDIA's tuner reads it (trtexec's sampleTuning): every `tuner_options` entry with a
// non-empty string `option` is a knob, whatever its `allowed_values` holds. What a knob allows is
// parsed in one place, apps/shared/build-routes.ts; here the entries only become the pattern list
// a backend probe reports (BackendProbe::buildRoutes) beside the raw JSON. No TensorRT header.
#pragma once

#include <string>
#include <vector>

namespace tbs::trt {

// One pattern per knob, in the database's order: `allowed_values` as the library wrote it when it
// is a string naming the knob (`-conv_use_long_w=[on|off]`); `-knob=<text>` when it is a string
// that does not start with the knob (`=int32_t`); the bare `-knob` when it is not a string or
// is empty. A leading dash is added to an option without one. Empty for "" (no routes) and for
// text that is not a JSON object with a `tuner_options` array.
std::vector<std::string> routeKnobPatterns(std::string const& json);

}  // namespace tbs::trt
