// The event pipeline: coalescing of steps, nothing structural ever dropped, heartbeats during
// silence, the final event last, and producers that never wait on a slow consumer.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "core/event_lines.h"
#include "core/event_outbox.h"
#include "core/flush_pacer.h"
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

// The addon announces on the build thread (TensorRT is loaded there), so a Stop can come first;
// build.started must still be the first event, with build.cancelling right after it.
TEST(cancel_before_started_is_emitted_after_it) {
  EventLog log;
  ProgressPipeline p(PipelineOptions{}, log.consumer());
  CHECK(p.requestCancel(CancelReason::kUser));
  CHECK(p.cancelRequested());
  CHECK(!p.requestCancel(CancelReason::kUser));  // still the first request only
  p.started("tensorrt", "10.16.0", false, "Fake H100", "9.0", 1, "13.0");
  p.finish(BuildOutcome{BuildOutcome::Status::kCancelled, "build cancelled", -1, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK(log.events.size() >= 3);
  CHECK(log.events.at(0).type == EvType::kStarted);
  CHECK(log.events.at(1).type == EvType::kCancelling);
  CHECK(log.events.back().type == EvType::kFinished);
  CHECK(log.events.at(0).text.find("\"cudaDriver\":\"13.0\"") != std::string::npos);
  CHECK(log.events.at(0).text.find("\"device\":1") != std::string::npos);
}

namespace {

// Resident memory of this process in KiB (Linux /proc), 0 elsewhere.
long rssKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

OutEvent ev(EvType type, int64_t a, int64_t c = 0) {
  OutEvent e;
  e.type = type;
  e.a = a;
  e.b = c - 1;
  e.c = c;
  return e;
}

}  // namespace

TEST(steps_never_queue_while_the_flusher_is_stalled) {
  // No flush at all for millions of steps on a few open phases: a step only updates its phase's
  // word, so nothing accumulates per step (the queues hold starts and finishes only).
  EventLog log;
  PipelineOptions o;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, log.consumer());
  p.phaseStart("root", nullptr, 1);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&p, t] {
      std::string name = "phase " + std::to_string(t);
      p.phaseStart(name.c_str(), "root", 1 << 30);
      for (int i = 0; i < 200000; ++i) p.stepComplete(name.c_str(), i);
    });
  }
  for (auto& t : ts) t.join();
  long before = rssKiB();
  ts.clear();
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&p, t] {
      std::string name = "phase " + std::to_string(t);
      for (int i = 200000; i < 1200000; ++i) p.stepComplete(name.c_str(), i);
      p.phaseFinish(name.c_str());
    });
  }
  for (auto& t : ts) t.join();
  long grown = rssKiB() - before;
  CHECK_MSG(grown < 1024, "4 M steps without a flush grew RSS by " << grown << " KiB");
  p.phaseFinish("root");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  // One coalesced step per phase: the latest.
  CHECK_EQ(log.count(EvType::kPhaseStep), size_t(4));
}

TEST(outbox_coalesces_steps_and_heartbeats_keeps_the_rest) {
  EventOutbox box;
  CHECK(box.empty());
  uint64_t seq = 0;
  auto batch = [&](std::vector<OutEvent> evs, bool final = false) {
    EventBatch b;
    for (auto& e : evs) e.seq = seq++;
    b.events = std::move(evs);
    b.final = final;
    return b;
  };
  box.add(batch({ev(EvType::kPhaseStart, 1), ev(EvType::kPhaseStep, 1, 1), ev(EvType::kHeartbeat, 0)}));
  box.add(batch({ev(EvType::kPhaseStep, 1, 2), ev(EvType::kPhaseStart, 2), ev(EvType::kPhaseStep, 2, 1)}));
  box.add(batch({ev(EvType::kPhaseStep, 1, 3), ev(EvType::kHeartbeat, 0), ev(EvType::kPhaseFinish, 2, 1), ev(EvType::kLog, 0)}));
  box.add(batch({ev(EvType::kPhaseFinish, 1, 3), ev(EvType::kFinished, 0)}, true));
  CHECK_EQ(box.coalesced(), uint64_t(3));  // steps 1/1 and 1/2 of phase 1, the first heartbeat
  EventBatch out = box.take();
  CHECK(box.empty());
  CHECK(out.final);
  std::vector<uint64_t> seqs;
  for (auto const& e : out.events) seqs.push_back(e.seq);
  // start 1, start 2, step 2/1 (its finish keeps it), step 1/3, heartbeat, finish 2, log, finish 1, finished
  CHECK(seqs == (std::vector<uint64_t>{0, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(outbox_takes_in_bounded_bites_keeping_order_names_and_coalescing) {
  EventOutbox box;
  uint64_t seq = 0;
  EventBatch b;
  b.firstNameId = 5;
  b.newNames = {"a", "b"};
  for (int64_t id = 0; id < 6; ++id) {
    OutEvent e = ev(EvType::kPhaseStart, id);
    e.seq = seq++;
    b.events.push_back(std::move(e));
  }
  OutEvent step = ev(EvType::kPhaseStep, 5, 1);  // the last one: stays in the outbox after a bite
  step.seq = seq++;
  b.events.push_back(std::move(step));
  box.add(std::move(b));
  EventBatch first = box.take(4);
  CHECK_EQ(first.events.size(), size_t(4));
  CHECK_EQ(first.firstNameId, uint32_t(5));
  CHECK_EQ(first.newNames.size(), size_t(2));  // every waiting name goes with the first bite
  CHECK(!first.final);
  CHECK_EQ(box.size(), size_t(3));
  // A newer step of phase 5 still replaces the waiting one; a new name continues the numbering.
  EventBatch more;
  more.firstNameId = 7;
  more.newNames = {"c"};
  OutEvent newer = ev(EvType::kPhaseStep, 5, 2);
  newer.seq = seq++;
  more.events.push_back(std::move(newer));
  OutEvent fin = ev(EvType::kFinished, 0);
  fin.seq = seq++;
  more.events.push_back(std::move(fin));
  more.final = true;
  box.add(std::move(more));
  CHECK(box.final());
  CHECK_EQ(box.size(), size_t(4));  // starts 4 and 5, step 5/2, finished
  EventBatch rest = box.take(100);
  CHECK(box.empty());
  CHECK(rest.final);
  CHECK_EQ(rest.firstNameId, uint32_t(7));
  CHECK_EQ(rest.newNames.size(), size_t(1));
  std::vector<uint64_t> seqs;
  for (auto const& e : first.events) seqs.push_back(e.seq);
  for (auto const& e : rest.events) seqs.push_back(e.seq);
  CHECK(seqs == (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 7, 8}));
}

// A long backlog taken in bites while more arrives (a worker held, then catching up): every
// bite keeps seq order, a phase's newer step still replaces its waiting one across bites (never
// one already taken), nothing but coalesced steps is lost, and what stays is counted in bytes().
TEST(outbox_bites_of_a_long_backlog_keep_order_coalescing_and_bytes) {
  EventOutbox box;
  uint64_t seq = 0;
  constexpr int64_t kPhases = 40;
  size_t starts = 0, stepsIn = 0;
  auto addRound = [&](int round) {
    EventBatch b;
    for (int64_t id = 0; id < kPhases; ++id) {
      OutEvent e = ev(round == 0 ? EvType::kPhaseStart : EvType::kPhaseStep, id, round);
      e.seq = seq++;
      if (round == 0) ++starts;
      else ++stepsIn;
      b.events.push_back(std::move(e));
    }
    // A log each round: never dropped, so the backlog grows whatever the steps do.
    OutEvent log = ev(EvType::kLog, 0);
    log.seq = seq++;
    log.text = "x";
    b.events.push_back(std::move(log));
    box.add(std::move(b));
  };
  for (int round = 0; round < 2000; ++round) addRound(round);
  std::vector<OutEvent> got;
  uint64_t lastSeq = 0;
  bool ordered = true, first = true;
  std::vector<int64_t> lastStep(kPhases, 0);
  bool stepsRise = true;
  int round = 2000;
  while (!box.empty()) {
    size_t before = box.bytes();
    EventBatch bite = box.take(97);
    CHECK(bite.events.size() <= 97);
    if (!box.empty()) CHECK_MSG(box.bytes() < before, "bytes " << box.bytes() << " after a bite, " << before << " before");
    for (auto& e : bite.events) {
      if (!first && e.seq <= lastSeq) ordered = false;
      first = false;
      lastSeq = e.seq;
      if (e.type == EvType::kPhaseStep) {
        if (e.c <= lastStep[static_cast<size_t>(e.a)]) stepsRise = false;
        lastStep[static_cast<size_t>(e.a)] = e.c;
      }
      got.push_back(std::move(e));
    }
    if (round < 2300) addRound(round++);  // more arrives while the backlog drains
  }
  CHECK(ordered);
  CHECK(stepsRise);
  size_t logs = 0, gotStarts = 0;
  for (auto const& e : got) {
    logs += e.type == EvType::kLog ? 1 : 0;
    gotStarts += e.type == EvType::kPhaseStart ? 1 : 0;
  }
  CHECK_EQ(logs, size_t(2300));
  CHECK_EQ(gotStarts, starts);
  for (int64_t id = 0; id < kPhases; ++id) CHECK_EQ(lastStep[static_cast<size_t>(id)], int64_t(2299));  // every phase's last step arrives
  CHECK_EQ(got.size() + box.coalesced(), starts + stepsIn + 2300);
}

// The hot events' JSON text (event_lines.h) must be what JSON.stringify writes for the object
// addon.ts decodes (apps/worker/test/addon-lines.test.ts checks that through the addon); here,
// the number forms JavaScript's String(number) gives for the times the pipeline makes and for
// the ones it cannot (those take the general shortest form).
TEST(event_lines_write_numbers_as_javascript_does) {
  auto ms = [](double t) {
    std::string s;
    appendJsMs(s, t);
    return s;
  };
  CHECK_EQ(ms(0), std::string("0"));
  CHECK_EQ(ms(-0.0), std::string("0"));
  CHECK_EQ(ms(static_cast<double>(1) / 1e6), std::string("0.000001"));
  CHECK_EQ(ms(static_cast<double>(1500000) / 1e6), std::string("1.5"));
  CHECK_EQ(ms(static_cast<double>(16387284755) / 1e6), std::string("16387.284755"));
  CHECK_EQ(ms(static_cast<double>(12000001) / 1e6), std::string("12.000001"));
  CHECK_EQ(ms(static_cast<double>(100000000) / 1e6), std::string("100"));
  CHECK_EQ(ms(0.1 + 0.2), std::string("0.30000000000000004"));  // not a whole number of ns
  CHECK_EQ(ms(5e9), std::string("5000000000"));                 // past 2^32 ms
  CHECK_EQ(ms(5e9 + 0.25), std::string("5000000000.25"));

  EventLineWriter w("{\"v\":1,\"buildId\":\"b\"");
  w.addNames(0, {"conv \"a\"\b\f\x01"});
  OutEvent start = ev(EvType::kPhaseStart, 3);
  start.seq = 7;
  start.t = static_cast<double>(2500000) / 1e6;
  start.b = -1;
  start.c = 0;
  start.d = 12;
  OutEvent step = ev(EvType::kPhaseStep, 3, 4);
  step.seq = 8;
  step.b = 3;
  OutEvent fin = ev(EvType::kPhaseFinish, 3, 1);
  fin.seq = 9;
  fin.b = 4;
  OutEvent unnamed = ev(EvType::kPhaseStart, 4);
  unnamed.b = 3;
  unnamed.c = 9;  // a name id it was never given
  OutEvent log = ev(EvType::kLog, 0);
  std::string text = w.lines({start, step, fin, log, unnamed});
  CHECK_EQ(text,
           std::string("{\"v\":1,\"buildId\":\"b\",\"seq\":7,\"t\":2.5,\"type\":\"phase.start\",\"id\":3,\"parentId\":null,"
                       "\"name\":\"conv \\\"a\\\"\\b\\f\\u0001\",\"nbSteps\":12,\"instance\":0}\n"
                       "{\"v\":1,\"buildId\":\"b\",\"seq\":8,\"t\":0,\"type\":\"phase.step\",\"id\":3,\"step\":3,\"stepsDone\":4}\n"
                       "{\"v\":1,\"buildId\":\"b\",\"seq\":9,\"t\":0,\"type\":\"phase.finish\",\"id\":3,\"stepsDone\":4,\"early\":true}\n"
                       "\n"
                       "{\"v\":1,\"buildId\":\"b\",\"seq\":0,\"t\":0,\"type\":\"phase.start\",\"id\":4,\"parentId\":3,\"name\":\"#9\","
                       "\"nbSteps\":0,\"instance\":0}"));
}

TEST(outbox_stays_bounded_by_open_phases_for_steps) {
  EventOutbox box;
  uint64_t seq = 0;
  for (int round = 0; round < 10000; ++round) {
    EventBatch b;
    for (int64_t id = 0; id < 8; ++id) {
      OutEvent e = ev(EvType::kPhaseStep, id, round + 1);
      e.seq = seq++;
      b.events.push_back(std::move(e));
    }
    box.add(std::move(b));
  }
  CHECK_EQ(box.size(), size_t(8));
  CHECK_MSG(box.stored() <= 2 * 8 + 1024 + 8, "80,000 steps of 8 phases left " << box.stored() << " events stored");
  EventBatch out = box.take();
  CHECK_EQ(out.events.size(), size_t(8));
  for (auto const& e : out.events) CHECK_EQ(e.c, int64_t(10000));
}

// Regression: phases the flusher closed because their parent finished keep stepping on their own
// threads, so the flusher carries them from flush to flush. It once cleared the "queued" flag of a
// carried phase that a producer had just queued again; the producer's next step then linked the
// phase into the dirty list a second time, making the list a cycle the flusher walked forever
// (growing a vector until bad_alloc). The window is a few hundred nanoseconds, so this stress (four
// stepping threads, 1 ms flushes) hits it only now and then; it keeps the situation exercised.
TEST(carried_phases_never_corrupt_the_dirty_list) {
  EventLog log;
  PipelineOptions o;
  o.flushIntervalMs = 1;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, log.consumer());
  p.startFlusher();
  for (int round = 0; round < 20; ++round) {
    p.phaseStart("Parent", nullptr, 0);
    std::atomic<int> ready{0};
    std::atomic<bool> parentDone{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        std::string name = "Child " + std::to_string(t);
        p.phaseStart(name.c_str(), "Parent", 1 << 20);
        ready.fetch_add(1);
        int step = 0;
        while (!parentDone.load()) p.stepComplete(name.c_str(), step++);
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(15);
        while (std::chrono::steady_clock::now() < until) p.stepComplete(name.c_str(), step++);
        p.phaseFinish(name.c_str());
      });
    }
    while (ready.load() < 4) std::this_thread::yield();
    p.phaseFinish("Parent");  // its children are still open: the flusher closes them
    parentDone.store(true);
    for (auto& th : threads) th.join();
  }
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK(p.anomalies().closedByParent > 0);
}

// The flusher's pacing (flush_pacer.h): after a quiet spell an event goes out at once, not after
// the budget; while callbacks keep coming, batches are at least one budget apart.
TEST(quiet_events_go_out_at_once_busy_ones_once_per_budget) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> batchAt;
  PipelineOptions o;
  o.flushIntervalMs = 300;  // far longer than a wake-up takes, even on a busy machine
  o.heartbeatMs = 0;
  ProgressPipeline p(o, [&](EventBatch&&) {
    std::lock_guard<std::mutex> lk(mu);
    batchAt.push_back(monoNowNs());
    cv.notify_all();
  });
  p.startFlusher();
  auto waitBatches = [&](size_t n) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, std::chrono::seconds(5), [&] { return batchAt.size() >= n; });
  };
  // Three quiet spells (each longer than two budgets, so the previous batch is over a budget
  // old): a flusher on a fixed 300 ms tick would pass all three by luck one time in eight.
  size_t seen = 0;
  for (int quiet = 0; quiet < 3; ++quiet) {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    std::string name = "Quiet " + std::to_string(quiet);
    int64_t t0 = monoNowNs();
    p.phaseStart(name.c_str(), nullptr, 0);
    CHECK(waitBatches(seen + 1));
    double ms = (batchAt[seen] - t0) / 1e6;
    CHECK_MSG(ms < 150, "an event after a quiet spell took " << ms << " ms to go out (budget 300 ms)");
    p.phaseFinish(name.c_str());
    CHECK(waitBatches(seen + 2));  // the finish, one budget later
    seen = batchAt.size();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  p.phaseStart("A", nullptr, 1 << 20);
  // Busy for ~1 s: steps all the time.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
  for (int32_t s = 0; std::chrono::steady_clock::now() < until; ++s) {
    p.stepComplete("A", s);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  p.phaseFinish("A");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  std::lock_guard<std::mutex> lk(mu);
  // The final batch (finish) may follow its predecessor at once; every other gap is a budget.
  for (size_t i = 1; i + 1 < batchAt.size(); ++i) {
    double gapMs = (batchAt[i] - batchAt[i - 1]) / 1e6;
    CHECK_MSG(gapMs >= 299, "batches " << i - 1 << " and " << i << " only " << gapMs << " ms apart");
  }
  size_t busy = batchAt.size() - seen;
  CHECK_MSG(busy >= 3 && busy <= 7, busy << " batches in the busy second");
}

// A builder thread's wake-up of the flusher never waits for the flusher: here the flusher is
// stopped in the middle of looking for work (as a descheduled flusher would be), and activity(),
// urgent() and a retire/refill of phase nodes must all return while it is still stopped there.
// (The earlier pacer held its mutex across that look, and activity() took the same mutex.)
TEST(a_callback_never_waits_on_a_stalled_flusher) {
  FlushPacer pacer(8);
  std::atomic<bool> inside{false}, release{false}, returned{false};
  std::thread flusher([&] {
    pacer.next(
        [&] {
          inside = true;
          // Held until released, or 20 s (so that a wrong implementation fails instead of hanging).
          auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (!release && std::chrono::steady_clock::now() < until) std::this_thread::yield();
          return true;
        },
        INT64_MAX);
    returned = true;
  });
  while (!inside) std::this_thread::yield();
  pacer.activity();
  pacer.urgent();
  bool stillStalled = !returned;
  release = true;
  flusher.join();
  CHECK_MSG(stillStalled, "activity()/urgent() waited for the flusher to finish looking for work");

  // The pipeline as a whole: the flusher stalled inside its consumer (a slow JS thread) while
  // producers start and finish far more phases than one refill of nodes holds.
  std::atomic<bool> consumerInside{false}, consumerRelease{false};
  std::atomic<int> consumerReturned{0};
  PipelineOptions o;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, [&](EventBatch&&) {
    consumerInside = true;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!consumerRelease && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    ++consumerReturned;
  });
  p.startFlusher();
  p.phaseStart("Root", nullptr, 1);
  while (!consumerInside) std::this_thread::yield();
  for (int i = 0; i < 1000; ++i) {
    p.phaseStart("Child", "Root", 2);
    p.stepComplete("Child", 0);
    p.phaseFinish("Child");
    p.log(Severity::kInfo, "still going");
  }
  bool consumerStillStalled = consumerReturned == 0;
  consumerRelease = true;
  p.phaseFinish("Root");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK(consumerStillStalled);
}

// A flusher that does not get its turn (here: asleep for its 60 s budget after the first batch,
// as a flusher starved of CPU would be) is not waited for: once the queues hold
// maxQueuedRecords, the builder thread that notices flushes in its place, on its own thread,
// and goes on. Nothing is lost or reordered, and the queues stay near their bound.
TEST(a_builder_flushes_in_place_of_a_flusher_that_does_not_run) {
  EventLog log;
  std::mutex idsMu;
  std::vector<std::thread::id> consumerThreads;
  auto record = log.consumer();
  PipelineOptions o;
  o.heartbeatMs = 0;
  o.flushIntervalMs = 60000;
  o.maxQueuedRecords = 512;
  ProgressPipeline p(o, [&](EventBatch&& b) {
    {
      std::lock_guard<std::mutex> lk(idsMu);
      consumerThreads.push_back(std::this_thread::get_id());
    }
    record(std::move(b));
  });
  p.startFlusher();
  p.phaseStart("Root", nullptr, 1);
  // The first batch goes out at once (a quiet spell); the next one is a budget away.
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(log.mu);
      if (log.batches > 0) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto from = std::chrono::steady_clock::now();
  for (int i = 0; i < 4000; ++i) {
    p.phaseStart("Child", "Root", 2);
    p.stepComplete("Child", 0);
    p.stepComplete("Child", 1);
    p.phaseFinish("Child");
  }
  double loopS = std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  size_t deliveredBeforeFinish;
  {
    std::lock_guard<std::mutex> lk(log.mu);
    deliveredBeforeFinish = log.events.size();
  }
  p.stepComplete("Root", 0);
  p.phaseFinish("Root");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK_EQ(log.count(EvType::kPhaseStart), 4001u);
  CHECK_EQ(log.count(EvType::kPhaseFinish), 4001u);
  CHECK_MSG(p.helpedFlushes() > 0, "no builder flushed in the sleeping flusher's place");
  size_t onBuilder = 0;
  for (auto id : consumerThreads) onBuilder += id == std::this_thread::get_id();
  CHECK_MSG(onBuilder > 0, "no batch was delivered from the builder's own thread");
  // Most of the 8,000 records went out while the builder ran, not at finish().
  CHECK_MSG(deliveredBeforeFinish > 7000, deliveredBeforeFinish << " events out before finish()");
  // The queues' high-water mark: the bound plus what one thread adds between two looks.
  CHECK_MSG(p.peakQueuedRecords() <= o.maxQueuedRecords + ProgressPipeline::kQueueCheckEvery,
            "peak " << p.peakQueuedRecords() << " records queued");
  // A correctness bound with slack, not a timing: the loop never waited out the 60 s budget.
  CHECK_MSG(loopS < 30, "the builder took " << loopS << " s");
}

// A step reads the clock when it is the first of its phase since the flusher last looked;
// the steps after it in the same interval carry the time of the thread's latest timed callback
// (recorder.h). So a lone step is timed exactly, and a run of steps within one interval is one
// coalesced event no later than its last step.
TEST(a_step_is_timed_when_it_is_the_first_since_the_last_flush) {
  EventLog log;
  PipelineOptions o;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, log.consumer());
  p.phaseStart("A", nullptr, 10);
  p.flushNow();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  double before = static_cast<double>(monoNowNs() - p.startNs()) / 1e6;
  p.stepComplete("A", 0);  // first since the flush: timed
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  p.stepComplete("A", 1);  // same interval: the thread's latest time, step 0's
  double after = static_cast<double>(monoNowNs() - p.startNs()) / 1e6;
  p.flushNow();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  double beforeThird = static_cast<double>(monoNowNs() - p.startNs()) / 1e6;
  p.stepComplete("A", 2);  // first since the second flush: timed again
  p.flushNow();
  p.phaseFinish("A");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  std::vector<OutEvent> steps;
  for (auto const& e : log.events) {
    if (e.type == EvType::kPhaseStep) steps.push_back(e);
  }
  CHECK_EQ(steps.size(), 2u);
  CHECK_EQ(steps.at(0).c, 2);
  CHECK_MSG(steps.at(0).t >= before && steps.at(0).t < after - 20,
            "coalesced steps at t=" << steps.at(0).t << " (first step after " << before << ", last before " << after << ")");
  CHECK_EQ(steps.at(1).c, 3);
  CHECK_MSG(steps.at(1).t >= beforeThird, "third step at t=" << steps.at(1).t << ", taken after " << beforeThird);
}

// Each flush takes every record published before it, not only the first one (a flush's chunk
// limit once wrapped around for "no limit" and made every later flushNow() take nothing).
TEST(every_flush_takes_the_records_published_before_it) {
  EventLog log;
  PipelineOptions o;
  o.heartbeatMs = 0;
  ProgressPipeline p(o, log.consumer());
  for (int round = 1; round <= 3; ++round) {
    p.phaseStart("A", nullptr, 0);
    p.phaseFinish("A");
    p.flushNow();
    CHECK_EQ(log.count(EvType::kPhaseFinish), static_cast<size_t>(round));
  }
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
}

TEST_MAIN()
