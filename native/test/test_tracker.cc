// Phase tracker: ids and parents as TensorRT reports them, repeated names, early finish, a
// parent advancing while its child is open, and callbacks that break the contract.
#include <atomic>
#include <memory>
#include <thread>

#include "check.h"
#include "event_log.h"

using namespace tbs;
using namespace tbs_test;

namespace {
PipelineOptions quiet() {
  PipelineOptions o;
  o.heartbeatMs = 0;
  return o;
}
}  // namespace

TEST(repeated_names_thousands_of_instances) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("Evaluating tactic times", nullptr, 5000);
  for (int i = 0; i < 5000; ++i) {
    p.phaseStart("Measuring tactic time", "Evaluating tactic times", 4);
    for (int s = 0; s < 4; ++s) CHECK(p.stepComplete("Measuring tactic time", s));
    p.phaseFinish("Measuring tactic time");
    CHECK(p.stepComplete("Evaluating tactic times", i));
    if (i % 700 == 0) p.flushNow();  // some instances cross a flush, most do not
  }
  p.phaseFinish("Evaluating tactic times");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK_EQ(log.count(EvType::kPhaseStart), 5001u);
  CHECK_EQ(log.count(EvType::kPhaseFinish), 5001u);
  std::set<int64_t> instances;
  int64_t parentId = -2;
  for (auto const& e : log.events) {
    if (e.type != EvType::kPhaseStart) continue;
    if (e.b == -1) {
      parentId = e.a;
    } else {
      CHECK_EQ(e.b, parentId);
      CHECK_EQ(log.nameOf(e.c), std::string("Measuring tactic time"));
      instances.insert(e.e);
    }
  }
  CHECK_EQ(instances.size(), 5000u);
  CHECK_EQ(*instances.rbegin(), 4999);
  // Every measuring phase completed all 4 steps: none is early.
  for (auto const& e : log.events) {
    if (e.type == EvType::kPhaseFinish && e.a != parentId) CHECK(e.c == 0 && e.b == 4);
  }
  auto a = p.anomalies();
  CHECK_EQ(a.unknownStepName + a.unknownFinishName + a.unknownParent + a.closedAtEnd, 0u);
}

TEST(early_finish_is_marked) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("Building engine", nullptr, 6);
  for (int s = 0; s < 4; ++s) p.stepComplete("Building engine", s);
  p.phaseFinish("Building engine");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  auto const* fin = log.last(EvType::kPhaseFinish);
  CHECK(fin != nullptr && fin->b == 4 && fin->c == 1);
  auto snap = p.snapshot();
  CHECK(snap.size() == 1 && snap[0].stepsDone == 4 && snap[0].early && snap[0].endT >= 0);
}

TEST(parent_advances_while_child_open) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("Computing profile costs", nullptr, 10);
  p.stepComplete("Computing profile costs", 0);
  p.stepComplete("Computing profile costs", 1);
  p.phaseStart("Determining refit engines", "Computing profile costs", 5);
  p.stepComplete("Determining refit engines", 0);
  p.flushNow();
  p.stepComplete("Computing profile costs", 2);
  p.stepComplete("Computing profile costs", 3);
  auto mid = p.snapshot();
  p.flushNow();
  auto after = p.snapshot();
  p.stepComplete("Determining refit engines", 1);
  p.phaseFinish("Determining refit engines");
  p.phaseFinish("Computing profile costs");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK(after.size() == 2);
  CHECK(after[0].stepsDone == 4 && after[0].endT < 0);  // parent moved on
  CHECK(after[1].parentId == after[0].id && after[1].stepsDone == 1 && after[1].endT < 0);
  CHECK(mid.size() == 2 && mid[0].stepsDone == 2);  // snapshot reflects what was flushed
  auto const* parentFinish = log.last(EvType::kPhaseFinish);
  CHECK(parentFinish && parentFinish->a == after[0].id && parentFinish->b == 4 && parentFinish->c == 1);
}

TEST(unknown_names_and_bad_steps_are_counted_not_fatal) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  CHECK(p.stepComplete("never started", 0));  // still true: only cancel returns false
  p.phaseFinish("never started");
  p.phaseFinish(nullptr);
  CHECK(p.stepComplete(nullptr, 0));
  p.phaseStart("orphan", "no such parent", 3);  // reported as a root
  p.stepComplete("orphan", 7);                  // out of range
  p.stepComplete("orphan", -1);                 // out of range
  p.stepComplete("orphan", 1);
  p.stepComplete("orphan", 0);  // not rising
  p.stepComplete("orphan", 1);  // repeated
  p.phaseStart(nullptr, nullptr, 0);
  p.phaseFinish("(unnamed phase)");
  p.phaseFinish("orphan");
  p.phaseFinish("orphan");      // finished twice
  p.stepComplete("orphan", 2);  // after its finish
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  auto a = p.anomalies();
  CHECK_EQ(a.unknownStepName, 3u);
  CHECK_EQ(a.unknownFinishName, 3u);
  CHECK_EQ(a.unknownParent, 1u);
  CHECK_EQ(a.stepOutOfRange, 2u);
  CHECK_EQ(a.stepNotRising, 2u);
  auto const* start = log.last(EvType::kPhaseStart);
  CHECK(start != nullptr);
  auto snap = p.snapshot();
  CHECK(snap.size() == 2 && snap[0].parentId == -1 && snap[0].stepsDone == 2 && snap[0].early);
}

TEST(parent_finished_before_child_closes_child_first) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("A", nullptr, 2);
  p.phaseStart("B", "A", 2);
  p.phaseStart("C", "B", 2);
  p.stepComplete("C", 0);
  p.phaseFinish("A");
  p.phaseFinish("C");             // already closed by its ancestor: ignored
  CHECK(p.stepComplete("B", 0));  // ditto
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK_EQ(p.anomalies().closedByParent, 2u);
  std::vector<int64_t> finishOrder;
  for (auto const& e : log.events) {
    if (e.type == EvType::kPhaseFinish) finishOrder.push_back(e.a);
  }
  CHECK(finishOrder == (std::vector<int64_t>{2, 1, 0}));
}

TEST(open_phases_closed_at_end) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("A", nullptr, 2);
  p.phaseStart("B", "A", 2);
  p.finish(BuildOutcome{BuildOutcome::Status::kFailed, "boom", -1, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK_EQ(p.anomalies().closedAtEnd, 2u);
  CHECK(log.events.back().type == EvType::kFinished && log.events.back().a == 2);
  CHECK(log.events.back().text.find("\"error\":\"boom\"") != std::string::npos);
}

TEST(name_reused_after_finish_gets_new_instance) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("root", nullptr, 1);
  for (int i = 0; i < 3; ++i) {
    p.phaseStart("X", "root", 2);
    p.stepComplete("X", 0);
    p.phaseFinish("X");
  }
  p.phaseFinish("root");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  std::vector<int64_t> ids, inst;
  for (auto const& e : log.events) {
    if (e.type == EvType::kPhaseStart && log.nameOf(e.c) == "X") ids.push_back(e.a), inst.push_back(e.e);
  }
  CHECK(ids.size() == 3 && ids[0] != ids[1] && ids[1] != ids[2]);
  CHECK(inst == (std::vector<int64_t>{0, 1, 2}));
}

TEST(same_name_open_on_two_threads_resolves_per_thread) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("Timing graph nodes", nullptr, 2);
  std::atomic<int> ready{0};
  auto worker = [&](int steps) {
    p.phaseStart("Evaluating tactic times", "Timing graph nodes", 100);
    ready.fetch_add(1);
    while (ready.load() < 2) std::this_thread::yield();
    for (int s = 0; s < steps; ++s) p.stepComplete("Evaluating tactic times", s);
    p.phaseFinish("Evaluating tactic times");
  };
  // Interleave deliberately: both phases are open while each thread steps its own.
  std::thread t1([&] { worker(30); });
  std::thread t2([&] { worker(70); });
  t1.join();
  t2.join();
  p.phaseFinish("Timing graph nodes");
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  std::multiset<int64_t> finals;
  for (auto const& e : log.events) {
    if (e.type == EvType::kPhaseFinish && e.a != 0) finals.insert(e.b);
  }
  CHECK(finals == (std::multiset<int64_t>{30, 70}));
}

TEST(phase_finished_by_another_thread) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  std::thread a([&] {
    p.phaseStart("Root", nullptr, 1);
    p.phaseStart("Shared", "Root", 10);
  });
  a.join();
  std::thread b([&] {
    CHECK(p.stepComplete("Shared", 0));  // found through thread a's open list
    CHECK(p.stepComplete("Shared", 1));
    p.phaseFinish("Shared");
    p.phaseFinish("Root");
  });
  b.join();
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  auto snap = p.snapshot();
  CHECK(snap.size() == 2 && snap[1].stepsDone == 2 && snap[1].endT >= 0 && snap[1].parentId == snap[0].id);
  auto an = p.anomalies();
  CHECK_EQ(an.unknownStepName + an.unknownFinishName + an.closedAtEnd, 0u);
}

TEST(parent_finished_on_other_thread_while_child_open) {
  EventLog log;
  ProgressPipeline p(quiet(), log.consumer());
  p.phaseStart("P", nullptr, 2);
  std::thread child([&] {
    p.phaseStart("C", "P", 5);
    p.stepComplete("C", 0);
  });
  child.join();
  p.phaseFinish("P");  // C (thread child) still open
  p.flushNow();
  std::thread late([&] {
    p.stepComplete("C", 1);  // after its parent closed: not in the emitted tree any more
    p.phaseFinish("C");
  });
  late.join();
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
  CHECK_EQ(p.anomalies().closedByParent, 1u);
  CHECK_EQ(log.count(EvType::kPhaseFinish), 2u);
}

TEST(many_pipelines_on_one_thread) {
  // More pipelines than the thread-local caches hold: each must still keep its own phases.
  std::vector<std::unique_ptr<EventLog>> logs;
  std::vector<std::unique_ptr<ProgressPipeline>> pipes;
  for (int i = 0; i < 7; ++i) {
    logs.push_back(std::make_unique<EventLog>());
    pipes.push_back(std::make_unique<ProgressPipeline>(quiet(), logs.back()->consumer()));
  }
  for (int round = 0; round < 3; ++round) {
    for (auto& p : pipes) p->phaseStart("A", nullptr, 3);
    for (auto& p : pipes) CHECK(p->stepComplete("A", round));
    for (auto& p : pipes) p->phaseFinish("A");
  }
  for (size_t i = 0; i < pipes.size(); ++i) {
    pipes[i]->finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
    CHECK_EQ(checkInvariants(*logs[i]), "");
    CHECK_EQ(logs[i]->count(EvType::kPhaseStart), 3u);
    CHECK_EQ(logs[i]->count(EvType::kPhaseStep), 3u);
    auto a = pipes[i]->anomalies();
    CHECK_EQ(a.unknownStepName + a.unknownFinishName + a.stepNotRising, 0u);
  }
}

TEST(snapshot_retention_is_bounded) {
  EventLog log;
  PipelineOptions o = quiet();
  o.retainFinished = 100;
  ProgressPipeline p(o, log.consumer());
  p.phaseStart("root", nullptr, 1);
  for (int i = 0; i < 1000; ++i) {
    p.phaseStart("leaf", "root", 1);
    p.stepComplete("leaf", 0);
    p.phaseFinish("leaf");
  }
  p.flushNow();
  auto snap = p.snapshot();
  CHECK_EQ(snap.size(), 101u);  // the open root + the 100 most recent leaves
  int64_t lastLeaf = -1;
  for (auto const& e : log.events) {
    if (e.type == EvType::kPhaseStart) lastLeaf = e.a;
  }
  CHECK(snap.front().name == "root" && snap.back().id == lastLeaf);
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  CHECK_EQ(checkInvariants(log), "");
}

TEST_MAIN()
