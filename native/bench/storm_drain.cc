// The storm of bench:native's sustained run, timed to the last event delivered: eight producer
// threads flat out through a ProgressPipeline with its flusher, then finish(), which returns once
// everything recorded has been flushed. Prints one JSON object: the producers' time and the time
// until finish() returned, so a pipeline whose queues grow without bound (producers fast, the
// flusher seconds behind) shows what it really delivers per second.
//
// bench/native.js --against DIR compiles this one file against DIR's headers and static core
// library as well as ours (it uses only what both the earlier code and this one declare), and
// runs the two alternately.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/progress_pipeline.h"
#include "sim/callback_storm.h"

using namespace tbs;

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t callbacks = argc > 1 ? std::atoll(argv[1]) : 20000000;
  std::atomic<int64_t> delivered{0};
  ProgressPipeline p(PipelineOptions{}, [&](EventBatch&& b) { delivered += static_cast<int64_t>(b.events.size()); });
  p.startFlusher();
  int64_t t0 = nowNs();
  sim::StormResult storm = sim::runCallbackStorm(p, callbacks, 8);
  int64_t f0 = nowNs();
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  int64_t t1 = nowNs();
  double wallS = static_cast<double>(t1 - t0) / 1e9;
  std::printf(
      "{\"callbacks\":%lld,\"producerCallbacksPerSec\":%.0f,\"finishMs\":%.1f,\"deliveredCallbacksPerSec\":%.0f,\"wallS\":%.3f,"
      "\"eventsDelivered\":%lld}\n",
      static_cast<long long>(storm.callbacks), static_cast<double>(storm.callbacks) / (static_cast<double>(storm.producerNs) / 1e9),
      static_cast<double>(t1 - f0) / 1e6, static_cast<double>(storm.callbacks) / wallS, wallS, static_cast<long long>(delivered.load()));
  return 0;
}
