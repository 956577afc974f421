// The event pipeline: coalescing of steps, nothing structural ever dropped, heartbeats during
// silence, the final event last, and producers that never wait on a slow consumer.
#include <atomic>
#include <thread>

#include "check.h"
#include "event_log.h"

using namespace tbs;
using namespace tbs_test;

TEST(steps_coalesce_to_latest_per_flush) {
  EventLog log;
  PipelineOptions o;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, log.consumer());
  p.phaseStart("A", nullptr, 1000);
  for (int i = 0; i < 500; ++i) p.stepComplete("A", i);
  p.flushNow();
  for (int i = 500; i < 1000; ++i) p.stepComplete("A", i);
  p.flushNow();
  p.phaseFinish("A");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  std::vector<int64_t> steps;
  for (auto const& e : log.events) {
    if (e.type == EvType::kPhaseStep) steps.push_back(e.c);
  }
  CHECK(steps == (std::vector<int64_t>{500, 1000}));
  auto seqOfFinal = log.events.back().seq;
  CHECK_EQ(seqOfFinal, log.events.size() - 1);
}

TEST(starts_finishes_logs_never_dropped_under_load) {
  EventLog log;
  PipelineOptions o;
  o.flushIntervalMs = 1;
  ProgressPipeline p(o, log.consumer());
  p.startFlusher();
  p.phaseStart("root", nullptr, 1);
  constexpr int kThreads = 6, kPhases = 3000;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      std::string mine = "worker " + std::to_string(t);
      p.phaseStart(mine.c_str(), "root", kPhases);
      for (int i = 0; i < kPhases; ++i) {
        p.phaseStart("Measuring tactic time", mine.c_str(), 4);
        for (int s = 0; s < 4; ++s) p.stepComplete("Measuring tactic time", s);
        p.phaseFinish("Measuring tactic time");
        p.stepComplete(mine.c_str(), i);
        if (i % 500 == 0) p.log(Severity::kVerbose, "progress");
      }
      p.phaseFinish(mine.c_str());
    });
  }
  for (auto& t : ts) t.join();
  p.phaseFinish("root");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  size_t expectedPhases = 1 + kThreads * (1 + kPhases);
  CHECK_EQ(log.count(EvType::kPhaseStart), expectedPhases);
  CHECK_EQ(log.count(EvType::kPhaseFinish), expectedPhases);
  CHECK_EQ(log.count(EvType::kLog), size_t(kThreads * (kPhases / 500)));
  // Each measuring phase ends at 4/4 (its last step is never coalesced away).
  size_t complete = 0;
  for (auto const& e : log.events) complete += e.type == EvType::kPhaseFinish && e.b == 4 && e.c == 0;
  CHECK_EQ(complete, size_t(kThreads * kPhases));
  CHECK(log.batches > 1);
}

TEST(heartbeat_reports_silence) {
  EventLog log;
  PipelineOptions o;
  o.flushIntervalMs = 5;
  o.heartbeatMs = 20;
  ProgressPipeline p(o, log.consumer());
  p.startFlusher();
  p.phaseStart("A", nullptr, 2);
  p.stepComplete("A", 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  p.stepComplete("A", 1);
  p.phaseFinish("A");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK(log.count(EvType::kHeartbeat) >= 3);
  double maxSilence = 0;
  for (auto const& e : log.events) {
    if (e.type == EvType::kHeartbeat) maxSilence = std::max(maxSilence, e.x);
  }
  CHECK_MSG(maxSilence >= 60, "max sinceLastCallbackMs " << maxSilence);
}

TEST(slow_consumer_never_blocks_producers) {
  std::atomic<int> delivered{0};
  PipelineOptions o;
  o.flushIntervalMs = 1;
  ProgressPipeline p(o, [&](EventBatch&& b) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a JS thread busy elsewhere
    delivered += static_cast<int>(b.events.size());
  });
  p.startFlusher();
  p.phaseStart("A", nullptr, 1 << 20);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 200000; ++i) {
    p.stepComplete("A", i);
    if (i % 1000 == 0) {
      p.phaseStart("B", "A", 1);
      p.phaseFinish("B");
    }
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK_MSG(ms < 200, "200k callbacks took " << ms << " ms with a consumer that sleeps 50 ms per batch");
  p.phaseFinish("A");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK(delivered.load() > 400);
}

TEST(started_and_finished_payloads) {
  EventLog log;
  ProgressPipeline p(PipelineOptions{}, log.consumer());
  p.started("simulated", "sim-1", true, "");
  CacheStats cs;
  cs.entriesBefore = 3;
  cs.entriesAfter = 5;
  cs.bytes = 100;
  cs.hits = 3;
  cs.misses = 2;
  cs.path = "/tmp/c \"q\".bin";
  p.cacheStats(cs);
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 1234, "/tmp/e.engine"});
  CHECK_EQ(checkInvariants(log), "");
  CHECK(log.events.front().type == EvType::kStarted);
  CHECK(log.events.front().text.find("\"backend\":\"simulated\",\"backendVersion\":\"sim-1\",\"simulated\":true") != std::string::npos);
  auto const* c = log.last(EvType::kCacheStats);
  CHECK(c && c->text.find("\"added\":2") != std::string::npos && c->text.find("c \\\"q\\\".bin") != std::string::npos);
  std::string const& f = log.events.back().text;
  CHECK(f.find("\"engineBytes\":1234") != std::string::npos && f.find("\"cache\":{\"entriesBefore\":3") != std::string::npos);
  CHECK(f.find("cancelLatencyMs") == std::string::npos);
}

TEST_MAIN()
