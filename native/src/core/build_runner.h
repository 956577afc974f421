// Runs one build on the calling thread (never the JS thread): build.started, the backend's
// build, build.finished. Shared by the addon, the C++ tests and the benchmark.
#pragma once

#include "backend.h"
#include "progress_pipeline.h"

namespace tbs {

// Emits build.started, always the first event: a cancel requested before it is emitted right
// after it (ProgressPipeline::requestCancel). runBuild calls it on the build thread, so the
// backend's version() and gpuFor() (TensorRT: loading libraries) never run on the JS thread.
void announceBuild(Backend& backend, BuildRequest const& request, ProgressPipeline& pipeline);

// Runs the backend (announcing first if that was not done) and finishes the pipeline.
// Never throws: an exception escaping the backend becomes a failed outcome naming it.
BuildOutcome runBuild(Backend& backend, BuildRequest const& request, ProgressPipeline& pipeline);

}  // namespace tbs
