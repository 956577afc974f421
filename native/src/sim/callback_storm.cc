#include "callback_storm.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../core/clock.h"

namespace tbs::sim {
namespace {

constexpr int32_t kTacticsPerNode = 153;
constexpr int32_t kMeasureSteps = 4;
// Per tactic: start + 4 steps + finish of "Measuring tactic time", + 1 step of the parent.
constexpr int64_t kCallbacksPerTactic = 2 + kMeasureSteps + 1;

void producer(ProgressSink& sink, int64_t tactics, double callbacksPerNs) {
  int64_t start = monoNowNs();
  int64_t done = 0;
  while (tactics > 0) {
    if (callbacksPerNs > 0) {
      // Paced runs sleep whenever they are ahead of schedule (checked once per node).
      auto due = start + static_cast<int64_t>(static_cast<double>(done) / callbacksPerNs);
      int64_t now = monoNowNs();
      if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
    }
    int32_t n = static_cast<int32_t>(std::min<int64_t>(tactics, kTacticsPerNode));
    sink.phaseStart("Evaluating tactic times", "Timing graph nodes", kTacticsPerNode);
    for (int32_t t = 0; t < n; ++t) {
      sink.phaseStart("Measuring tactic time", "Evaluating tactic times", kMeasureSteps);
      for (int32_t s = 0; s < kMeasureSteps; ++s) sink.stepComplete("Measuring tactic time", s);
      sink.phaseFinish("Measuring tactic time");
      sink.stepComplete("Evaluating tactic times", t);
    }
    sink.phaseFinish("Evaluating tactic times");
    tactics -= n;
    done += n * kCallbacksPerTactic + 2;
  }
}

}  // namespace

StormResult runCallbackStorm(ProgressSink& sink, int64_t callbacks, int threads, double ratePerSec) {
  threads = std::max(1, threads);
  int64_t tacticsPerThread = std::max<int64_t>(1, callbacks / kCallbacksPerTactic / threads);
  sink.phaseStart("Timing graph nodes", nullptr, 1);
  int64_t start = monoNowNs();
  std::vector<std::thread> pool;
  double perThreadPerNs = ratePerSec > 0 ? ratePerSec / threads / 1e9 : 0;
  for (int i = 0; i < threads; ++i) pool.emplace_back([&] { producer(sink, tacticsPerThread, perThreadPerNs); });
  for (auto& t : pool) t.join();
  int64_t end = monoNowNs();
  sink.stepComplete("Timing graph nodes", 0);
  sink.phaseFinish("Timing graph nodes");
  int64_t nodesPerThread = (tacticsPerThread + kTacticsPerNode - 1) / kTacticsPerNode;
  StormResult r;
  r.callbacks = threads * (tacticsPerThread * kCallbacksPerTactic + nodesPerThread * 2) + 3;
  r.producerNs = end - start;
  return r;
}

BackendProbe CallbackStormBackend::probe() {
  BackendProbe p;
  p.name = "storm";
  p.available = true;
  p.version = version();
  return p;
}

BuildOutcome CallbackStormBackend::build(BuildRequest const&, ProgressSink& sink) {
  StormResult r = runCallbackStorm(sink, callbacks_, threads_, ratePerSec_);
  std::string msg = "storm: " + std::to_string(r.callbacks) + " callbacks in " + std::to_string(r.producerNs) + " ns by " +
                    std::to_string(threads_) + " threads";
  sink.log(Severity::kInfo, msg.c_str());
  BuildOutcome o;
  o.status = BuildOutcome::Status::kSucceeded;
  return o;
}

}  // namespace tbs::sim
