// Multi-threaded stress of the pipeline for the sanitizers (npm run test:sanitize builds it with
// -fsanitize=thread): several concurrent builds, each with several producer threads sharing
// phase names, snapshots and cancels from other threads, the flusher running at 1 ms, and the
// simulated backend end to end. Also run (unsanitized) by ctest.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "check.h"
#include "sim_harness.h"

using namespace tbs;
using namespace tbs_test;

namespace {

void hammer(ProgressPipeline& p, int threads, int phasesPerThread) {
  p.phaseStart("Timing graph nodes", nullptr, 1000000);
  std::atomic<bool> stop{false};
  // Another thread advances the shared parent (cross-thread name resolution) and starts/finishes
  // a phase that the main thread later finishes on its behalf.
  std::thread stepper([&] {
    // Bounded and paced: an unbounded spinner would flood the test's event log on a loaded
    // machine (it once exhausted memory while the workers were starved).
    for (int32_t step = 0; step < 3000 && !stop.load(); ++step) {
      if (!p.stepComplete("Timing graph nodes", step)) break;
      p.phaseStart("Side job", "Timing graph nodes", 2);
      p.phaseFinish("Side job");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    p.phaseStart("Orphaned side job", "Timing graph nodes", 2);
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&p, phasesPerThread, t] {
      std::mt19937 rng(t);
      p.phaseStart("Evaluating tactic times", "Timing graph nodes", phasesPerThread);
      for (int i = 0; i < phasesPerThread; ++i) {
        p.phaseStart("Measuring tactic time", "Evaluating tactic times", 4);
        int steps = 1 + static_cast<int>(rng() % 4);  // some finish early
        bool go = true;
        for (int s = 0; s < steps && go; ++s) go = p.stepComplete("Measuring tactic time", s);
        p.phaseFinish("Measuring tactic time");
        if (!p.stepComplete("Evaluating tactic times", i)) break;
        if (rng() % 97 == 0) p.log(Severity::kVerbose, "tick");
      }
      p.phaseFinish("Evaluating tactic times");
    });
  }
  for (auto& t : ts) t.join();
  stop = true;
  stepper.join();
  p.phaseFinish("Orphaned side job");  // finished by a thread other than its starter
  p.phaseFinish("Timing graph nodes");
}

}  // namespace

TEST(concurrent_pipelines_with_cancel_and_snapshots) {
  constexpr int kBuilds = 4;
  std::vector<std::unique_ptr<EventLog>> logs;
  std::vector<std::unique_ptr<ProgressPipeline>> pipes;
  PipelineOptions o;
  o.flushIntervalMs = 1;
  o.heartbeatMs = 3;
  for (int b = 0; b < kBuilds; ++b) {
    logs.push_back(std::make_unique<EventLog>());
    pipes.push_back(std::make_unique<ProgressPipeline>(o, logs.back()->consumer()));
    pipes.back()->startFlusher();
  }
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      for (auto& p : pipes) (void)p->snapshot();
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  std::vector<std::thread> builds;
  for (int b = 0; b < kBuilds; ++b) {
    builds.emplace_back([&, b] {
      hammer(*pipes[b], 3, 1500);
      pipes[b]->finish(
          BuildOutcome{pipes[b]->cancelRequested() ? BuildOutcome::Status::kCancelled : BuildOutcome::Status::kSucceeded, "", -1, ""});
    });
  }
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pipes[1]->requestCancel(CancelReason::kUser);
    pipes[1]->requestCancel(CancelReason::kUser);
    pipes[3]->requestCancel(CancelReason::kShutdown);
  });
  for (auto& t : builds) t.join();
  canceller.join();
  done = true;
  watcher.join();
  for (int b = 0; b < kBuilds; ++b) CHECK_MSG(checkInvariants(*logs[b]).empty(), "build " << b << ": " << checkInvariants(*logs[b]));
}

TEST(simulated_builds_in_parallel_with_cancels) {
  TempDir dir;
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (int b = 0; b < 4; ++b) {
    ts.emplace_back([&, b] {
      for (int round = 0; round < 6; ++round) {
        auto req = simRequest(dir, "s" + std::to_string(b) + "_" + std::to_string(round), 8, 31 * b + round, 8, 3);
        req.timingCachePath = dir.file("shared.cache");
        req.heartbeatMs = 2;
        auto r = runSim(req, round % 2 ? 2.0 + round : -1, 1);
        if (!checkInvariants(*r.log).empty()) ++bad;
        if (r.outcome.status == BuildOutcome::Status::kFailed) ++bad;
      }
    });
  }
  for (auto& t : ts) t.join();
  CHECK_EQ(bad.load(), 0);
}

namespace {

long statusMiB(char const* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  size_t n = std::strlen(field);
  while (std::getline(f, line)) {
    if (line.compare(0, n, field) == 0) return std::stol(line.substr(n)) / 1024;
  }
  return 0;
}

long limitMiB() {
  char const* env = std::getenv("TBS_STRESS_MAX_MIB");
  return env != nullptr ? std::atol(env) : 512;
}

// Stops the run as soon as memory passes the limit, instead of letting the kernel's OOM killer
// (or a 24 GB swap storm) end it without a word.
struct MemoryGuard {
  std::atomic<bool> stop{false};
  std::thread watcher;
  MemoryGuard() {
    watcher = std::thread([this] {
      while (!stop.load()) {
        long rss = statusMiB("VmRSS:");
        if (rss > limitMiB()) {
          std::fprintf(stderr, "  FAIL stress: resident memory %ld MiB passed the limit of %ld MiB\n", rss, limitMiB());
          std::_Exit(3);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~MemoryGuard() {
    stop = true;
    watcher.join();
  }
};
MemoryGuard gGuard;

}  // namespace

// Last (cases run in order): whatever the scheduling did above, the process's peak memory stayed
// bounded. A starved flusher once let this test grow to 24 GB on a loaded machine. The limit
// covers the sanitizers' own overhead (ThreadSanitizer's shadow memory and history); it can be
// set with TBS_STRESS_MAX_MIB.
TEST(zz_peak_memory_is_bounded) {
  long peak = statusMiB("VmHWM:");
  std::fprintf(stderr, "  stress peak memory (VmHWM): %ld MiB, limit %ld MiB\n", peak, limitMiB());
  CHECK_MSG(peak <= limitMiB(), "peak memory " << peak << " MiB over the limit of " << limitMiB() << " MiB");
}

TEST_MAIN()
