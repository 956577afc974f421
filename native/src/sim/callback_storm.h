// A load generator, not a build: producer threads report TensorRT-shaped callbacks (per thread an
// "Evaluating tactic times" subtree of short "Measuring tactic time" phases, ~30% start/finish
// and ~70% steps, like the 10.16 trace) as fast as they can. Used by the benchmark to push
// millions of callbacks through the real pipeline, including delivery to JS. Not listed by
// listBackends().
#pragma once

#include <cstdint>

#include "../core/backend.h"

namespace tbs::sim {

struct StormResult {
  int64_t callbacks = 0;
  int64_t producerNs = 0;  // first callback to last, across all producers
};

// Runs `callbacks` callbacks (rounded to whole tactics) from `threads` threads against `sink`,
// flat out, or paced to `ratePerSec` callbacks per second in total (0 = flat out).
StormResult runCallbackStorm(ProgressSink& sink, int64_t callbacks, int threads, double ratePerSec = 0);

class CallbackStormBackend final : public Backend {
 public:
  CallbackStormBackend(int64_t callbacks, int threads, double ratePerSec)
      : callbacks_(callbacks), threads_(threads), ratePerSec_(ratePerSec) {}
  BackendProbe probe() override;
  BuildOutcome build(BuildRequest const& request, ProgressSink& sink) override;
  std::string version() override { return "storm-1"; }

 private:
  int64_t callbacks_;
  int threads_;
  double ratePerSec_;
};

}  // namespace tbs::sim
