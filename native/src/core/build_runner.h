// Runs one build on the calling thread (never the JS thread): build.started, the backend's
// build, build.finished. Shared by the addon, the C++ tests and the benchmark.
#pragma once

#include "backend.h"
#include "progress_pipeline.h"

namespace tbs {

// Emits build.started. Call it before anyone can cancel (the addon does so on the JS thread
// before returning the handle) so build.started is always the first event.
void announceBuild(Backend& backend, BuildRequest const& request, ProgressPipeline& pipeline);

// Runs the backend (announcing first if that was not done) and finishes the pipeline.
// Never throws: an exception escaping the backend becomes a failed outcome naming it.
BuildOutcome runBuild(Backend& backend, BuildRequest const& request, ProgressPipeline& pipeline);

}  // namespace tbs
