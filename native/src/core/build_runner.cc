#include "build_runner.h"

#include <exception>

namespace tbs {

void announceBuild(Backend& backend, BuildRequest const& request, ProgressPipeline& pipeline) {
  GpuFact gpu = backend.gpuFor(request);
  pipeline.started(request.backend, backend.version(), request.backend == "simulated", gpu.name, gpu.computeCapability, gpu.device,
                   gpu.cudaDriver);
}

BuildOutcome runBuild(Backend& backend, BuildRequest const& request, ProgressPipeline& pipeline) {
  BuildOutcome outcome;
  try {
    if (!pipeline.hasStarted()) announceBuild(backend, request, pipeline);
    outcome = backend.build(request, pipeline);
  } catch (std::exception const& e) {
    outcome = BuildOutcome{};
    outcome.error = std::string("internal error in the ") + request.backend + " backend: " + e.what();
  } catch (...) {
    outcome = BuildOutcome{};
    outcome.error = "internal error in the " + request.backend + " backend (unknown exception)";
  }
  // A backend that saw its stop request honoured but reported failure is still a cancel to the
  // user; one that completed despite a late Stop keeps its result (the file exists).
  if (outcome.status == BuildOutcome::Status::kFailed && outcome.error.empty() && pipeline.cancelRequested()) {
    outcome.status = BuildOutcome::Status::kCancelled;
  }
  try {
    pipeline.finish(outcome);
  } catch (...) {
  }
  return outcome;
}

}  // namespace tbs
