// Test support: run one simulated build through the real pipeline (flusher thread included),
// optionally cancelling it from another thread after a delay, and keep everything it produced.
#pragma once

#include <chrono>
#include <memory>
#include <thread>

#include "core/atomic_file.h"
#include "core/build_runner.h"
#include "event_log.h"
#include "sim/sim_backend.h"
#include "temp_dir.h"

namespace tbs_test {

struct SimRunResult {
  std::unique_ptr<EventLog> log = std::make_unique<EventLog>();
  tbs::BuildOutcome outcome;
  tbs::CancelTimes cancel;
  tbs::Anomalies anomalies;
  double wallMs = 0;
  bool cancelAccepted = false;
};

// cancelAfterMs < 0: never cancel. cancelAfterMs == 0: cancel before the build starts.
inline SimRunResult runSim(tbs::BuildRequest const& req, double cancelAfterMs = -1, int flushMs = 5) {
  SimRunResult r;
  tbs::PipelineOptions po;
  po.flushIntervalMs = flushMs;
  po.heartbeatMs = req.heartbeatMs;
  tbs::ProgressPipeline pipeline(po, r.log->consumer());
  pipeline.startFlusher();
  tbs::sim::SimBackend backend;
  auto t0 = std::chrono::steady_clock::now();
  tbs::announceBuild(backend, req, pipeline);
  if (cancelAfterMs == 0) r.cancelAccepted = pipeline.requestCancel(tbs::CancelReason::kUser);
  std::thread canceller;
  if (cancelAfterMs > 0) {
    canceller = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(cancelAfterMs));
      r.cancelAccepted = pipeline.requestCancel(tbs::CancelReason::kUser);
    });
  }
  r.outcome = tbs::runBuild(backend, req, pipeline);
  r.wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (canceller.joinable()) canceller.join();
  r.cancel = pipeline.cancelTimes();
  r.anomalies = pipeline.anomalies();
  return r;
}

inline tbs::BuildRequest simRequest(TempDir const& dir, std::string const& name, int layers, uint64_t seed, double durationMs,
                                    int threads = 4) {
  tbs::BuildRequest req;
  req.buildId = name;
  req.backend = "simulated";
  req.modelPath = dir.file(name + ".onnx");
  req.outputPath = dir.file(name + ".engine");
  req.layers = layersOf(layers, static_cast<unsigned>(seed));
  req.simSeed = seed;
  req.simDurationMs = durationMs;
  req.simThreads = threads;
  req.heartbeatMs = 0;
  return req;
}

// Status of build.finished as text (the JSON payload's "status").
inline bool finishedWith(EventLog& log, char const* status) {
  auto const* f = log.last(tbs::EvType::kFinished);
  return f && f->text.find(std::string("\"status\":\"") + status + "\"") != std::string::npos;
}

}  // namespace tbs_test
