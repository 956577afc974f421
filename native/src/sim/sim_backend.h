// The simulated backend: reports a TensorRT-10-shaped build through the same ProgressSink the
// TensorRT backend uses, from several threads, so the whole pipeline (and every UI above it) can
// be exercised without a GPU. Its output file says loudly that it is not an engine.
#pragma once

#include <memory>
#include <string>

#include "../core/backend.h"

namespace tbs::sim {

constexpr char const* kSimVersion = "sim-1";
constexpr char const* kEngineHeader = "TRT-BUILD-STUDIO SIMULATED ENGINE - NOT A TENSORRT ENGINE";

class SimBackend final : public Backend {
 public:
  BackendProbe probe() override;
  BuildOutcome build(BuildRequest const& request, ProgressSink& sink) override;
  std::string version() override { return kSimVersion; }
};

std::unique_ptr<Backend> makeSimBackend();

}  // namespace tbs::sim
