// Runs one build on the calling thread (never the JS thread): build.started, the backend's
// build, build.finished. Shared by the addon, the C++ tests and the benchmark.
#pragma once

#include "backend.h"
#include "progress_pipeline.h"

namespace tbs {

// Never throws: an exception escaping the backend becomes a failed outcome naming it.
BuildOutcome runBuild(Backend& backend, BuildRequest const& request, ProgressPipeline& pipeline);

}  // namespace tbs
