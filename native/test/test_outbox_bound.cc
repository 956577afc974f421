// The native hop's bound (bounded_outbox.h, room_gate.h): a consumer that stops taking events
// makes the builder threads wait in their callbacks once the outbox holds its bound in bytes, the
// outbox stays under the bound plus one flush, taking events down opens the gate again, a cancel
// releases builders waiting in any callback, steps never wait, and a consumer that keeps up never
// closes the gate. Nothing is lost: the stream delivered at the end passes the invariants.
// Also built with ThreadSanitizer by npm run test:sanitize (CMakeLists.txt).
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "check.h"
#include "core/bounded_outbox.h"
#include "event_log.h"
#include "sim_harness.h"

using namespace tbs;
using namespace tbs_test;

namespace {

using Clock = std::chrono::steady_clock;

// Polls `pred` until it holds or `ms` pass (a correctness bound, generous for a busy machine).
template <class Pred>
bool eventually(Pred pred, int ms = 20000) {
  auto until = Clock::now() + std::chrono::milliseconds(ms);
  while (!pred()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// A consumer holding a bounded outbox that the test drains (or not) by hand.
struct StallableConsumer {
  std::mutex mu;
  BoundedOutbox box;
  size_t largestBatchBytes = 0;  // what one flush added at most
  EventLog log;                  // everything taken, for the invariants

  explicit StallableConsumer(OutboxBounds b) : box(b) {}
  ProgressPipeline::Consumer consumer() {
    return [this](EventBatch&& b) {
      std::lock_guard<std::mutex> lk(mu);
      size_t before = box.bytes();
      box.add(std::move(b));
      largestBatchBytes = std::max(largestBatchBytes, box.bytes() - std::min(before, box.bytes()));
    };
  }
  void takeAll() {
    std::lock_guard<std::mutex> lk(mu);
    while (!box.empty()) log.consumer()(box.take(2000));
  }
  size_t bytes() {
    std::lock_guard<std::mutex> lk(mu);
    return box.bytes();
  }
};

// Builder threads flat out: phases under a shared root, each with one step.
struct Builders {
  std::atomic<uint64_t> phases{0};
  std::vector<std::thread> threads;
  void start(ProgressPipeline& p, int n) {
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([&p, this] {
        for (int i = 0; i < 5'000'000; ++i) {
          p.phaseStart("Measuring tactic time", "Timing graph nodes", 2);
          bool go = p.stepComplete("Measuring tactic time", 0);
          p.phaseFinish("Measuring tactic time");
          phases.fetch_add(1, std::memory_order_relaxed);
          if (!go) break;
        }
      });
    }
  }
  void join() {
    for (auto& t : threads) t.join();
  }
};

}  // namespace

TEST(outbox_bytes_follow_what_waits) {
  EventOutbox box;
  EventBatch b;
  b.newNames = {"Building engine"};
  for (int i = 0; i < 10; ++i) {
    OutEvent e;
    e.type = i % 2 ? EvType::kLog : EvType::kPhaseStart;
    e.seq = static_cast<uint64_t>(i);
    if (e.type == EvType::kLog) e.text = std::string(100, 'x');
    b.events.push_back(e);
  }
  box.add(std::move(b));
  size_t full = 10 * sizeof(OutEvent) + 5 * 100 + sizeof(std::string) + std::string("Building engine").size();
  CHECK_EQ(box.bytes(), full);
  EventBatch first = box.take(4);  // two logs and two starts, and the name
  CHECK_EQ(first.events.size(), 4u);
  CHECK_EQ(box.bytes(), 6 * sizeof(OutEvent) + 3 * 100);
  box.take();
  CHECK_EQ(box.bytes(), 0u);
}

TEST(a_stalled_consumer_makes_the_builders_wait_at_the_bound) {
  OutboxBounds bounds;
  bounds.highBytes = 256 * 1024;
  bounds.lowBytes = 128 * 1024;
  StallableConsumer c(bounds);
  PipelineOptions o;
  o.flushIntervalMs = 2;
  o.heartbeatMs = 0;
  o.maxQueuedRecords = 1024;  // scaled down with the outbox: a starved flusher's batches stay small
  ProgressPipeline p(o, c.consumer());
  c.box.gateTo(&p.room());
  p.startFlusher();
  p.started("simulated", "test", true, "");
  p.phaseStart("Timing graph nodes", nullptr, 0);
  constexpr int kThreads = 4;
  Builders b;
  b.start(p, kThreads);

  // Nobody takes: every builder thread ends up waiting at the gate.
  CHECK_MSG(eventually([&] { return p.room().waiting() == kThreads; }), "builders waiting: " << p.room().waiting());
  CHECK(p.room().closed());
  uint64_t paused = b.phases.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_EQ(b.phases.load(), paused);  // the build is paused, not merely slowed
  size_t held = c.bytes();
  {
    std::lock_guard<std::mutex> lk(c.mu);
    // The bound plus what was on its way when the gate closed, never more: a property of the
    // design (bounded_outbox.h), whatever the scheduling.
    size_t designed = bounds.highBytes + inFlightBytes(o.maxQueuedRecords, kThreads + 1);
    CHECK_MSG(c.box.peakBytes() <= designed,
              "peak " << c.box.peakBytes() << " bytes, designed bound " << designed << " (largest batch " << c.largestBatchBytes << ")");
    std::printf("  outbox peak %zu bytes, designed bound %zu, largest batch %zu\n", c.box.peakBytes(), designed, c.largestBatchBytes);
  }
  CHECK(held >= bounds.highBytes);

  // Taking the outbox down opens the gate: the builders go on. (How far: the outbox's 256 KiB
  // hold about 3,000 events, some 1,000 phases, and the queues the rest; so "on" is a hundred.)
  c.takeAll();
  CHECK_MSG(eventually([&] { return b.phases.load() > paused + 100; }), "no progress after the outbox was taken");
  // And stall again at the bound.
  CHECK(eventually([&] { return p.room().waiting() == kThreads; }));

  // Stop while held: the cancel releases every waiting builder, whose next step says stop.
  CHECK(p.requestCancel(CancelReason::kUser));
  CHECK_MSG(eventually([&] { return p.room().waiting() == 0; }, 10000), "still waiting after the cancel: " << p.room().waiting());
  b.join();
  CHECK(!p.room().closed());
  p.phaseFinish("Timing graph nodes");
  p.finish(BuildOutcome{BuildOutcome::Status::kCancelled, "", -1, ""});
  CHECK(p.room().closings() >= 2u);
  CHECK(p.room().waitedNs() > 0);

  // Everything the builders reported arrives, in order, with every phase closed.
  c.takeAll();
  CHECK_EQ(checkInvariants(c.log), "");
  CHECK(c.log.sawFinal);
  CHECK_EQ(c.log.count(EvType::kCancelling), 1u);
  CHECK_EQ(c.log.count(EvType::kPhaseStart), c.log.count(EvType::kPhaseFinish));
  CHECK_EQ(c.log.count(EvType::kPhaseStart), b.phases.load() + 1);
}

TEST(cancel_releases_a_builder_waiting_in_each_callback) {
  EventLog log;
  PipelineOptions o;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, log.consumer());
  p.phaseStart("Building engine", nullptr, 4);
  p.room().setClosed(true);
  // A step costs no memory and never waits, even with the gate closed.
  CHECK(p.stepComplete("Building engine", 0));
  std::atomic<int> stage{0};
  std::thread builder([&] {
    p.log(Severity::kInfo, "waits here");  // blocked until the cancel
    stage = 1;
    p.phaseStart("Measuring tactic time", "Building engine", 2);  // released for good: no wait
    stage = 2;
    if (!p.stepComplete("Measuring tactic time", 0)) stage = 3;  // the cancel is seen at the step
    p.phaseFinish("Measuring tactic time");
    p.phaseFinish("Building engine");
  });
  CHECK(eventually([&] { return p.room().waiting() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_EQ(stage.load(), 0);
  CHECK(p.requestCancel(CancelReason::kUser));
  builder.join();
  CHECK_EQ(stage.load(), 3);
  // A released gate stays open: the unwinding after a cancel cannot block.
  p.room().setClosed(true);
  CHECK(!p.room().closed());
  p.finish(BuildOutcome{BuildOutcome::Status::kCancelled, "", -1, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK_EQ(log.count(EvType::kLog), 1u);
}

TEST(finish_releases_a_waiting_stray_thread) {
  EventLog log;
  PipelineOptions o;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, log.consumer());
  p.phaseStart("Building engine", nullptr, 1);
  p.room().setClosed(true);
  std::thread stray([&] { p.phaseStart("Late", "Building engine", 1); });
  CHECK(eventually([&] { return p.room().waiting() == 1; }));
  // (No phaseFinish here: it would wait at the closed gate like any builder callback; finish()
  // closes what is open.)
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  stray.join();  // returns: the build has ended, its callback is ignored
  CHECK_EQ(checkInvariants(log), "");
}

TEST(a_consumer_that_keeps_up_never_closes_the_gate) {
  // The default bounds with a consumer that takes every batch at once (a reader that keeps up):
  // a whole simulated build runs without a single wait.
  TempDir dir;
  auto req = simRequest(dir, "keeps-up", 40, 5, 200, 4);
  StallableConsumer c(OutboxBounds{});
  PipelineOptions po;
  po.flushIntervalMs = 5;
  po.heartbeatMs = req.heartbeatMs;
  ProgressPipeline p(po, [&](EventBatch&& batch) {
    c.consumer()(std::move(batch));
    c.takeAll();
  });
  c.box.gateTo(&p.room());
  p.startFlusher();
  sim::SimBackend backend;
  announceBuild(backend, req, p);
  auto outcome = runBuild(backend, req, p);
  CHECK(outcome.status == BuildOutcome::Status::kSucceeded);
  CHECK_EQ(p.room().closings(), 0u);
  CHECK_EQ(p.room().waitedNs(), 0);
  CHECK_EQ(checkInvariants(c.log), "");
  CHECK(c.log.count(EvType::kPhaseStart) > 100u);
}

TEST_MAIN()
