// Protocol invariants over many seeded simulated builds with random cancel points and several
// builder threads (see event_log.h checkInvariants for the list).
#include <random>

#include "check.h"
#include "sim_harness.h"

using namespace tbs;
using namespace tbs_test;

TEST(invariants_over_600_seeded_builds) {
  TempDir dir;
  std::mt19937_64 rng(20261129);
  int cancelled = 0, succeeded = 0, failed = 0, cancelsHonoured = 0;
  for (int i = 0; i < 600; ++i) {
    int layers = 2 + static_cast<int>(rng() % 14);
    int threads = 1 + static_cast<int>(rng() % 6);
    double duration = static_cast<double>(rng() % 12);
    auto req = simRequest(dir, "b" + std::to_string(i), layers, rng(), duration, threads);
    if (i % 5 == 0) req.heartbeatMs = 2;  // heartbeats interleaved with everything else
    // ~1/3 never cancelled, ~1/3 cancelled at a random point, the rest very early or late.
    double cancelAt = -1;
    switch (rng() % 6) {
      case 0:
      case 1:
        break;
      case 2:
        cancelAt = 0;
        break;
      default:
        cancelAt = 0.05 + static_cast<double>(rng() % 1000) / 1000.0 * (duration + 2);
        break;
    }
    auto r = runSim(req, cancelAt, 1 + static_cast<int>(rng() % 4));
    std::string why = checkInvariants(*r.log);
    CHECK_MSG(why.empty(), "build " << i << ": " << why);
    bool sawFalse = r.cancel.firstFalseNs >= 0;
    if (sawFalse) {
      ++cancelsHonoured;
      CHECK_MSG(r.outcome.status == BuildOutcome::Status::kCancelled,
                "build " << i << " saw stepComplete()==false but ended " << int(r.outcome.status));
      CHECK_MSG(finishedWith(*r.log, "cancelled"), "build " << i);
      CHECK_MSG(r.log->count(EvType::kCancelling) == 1,
                "build " << i << ": " << r.log->count(EvType::kCancelling) << " cancelling events, cancelAt " << cancelAt);
    }
    if (cancelAt == 0)
      CHECK_MSG(sawFalse && r.log->count(EvType::kPhaseStep) == 0,
                "build " << i << ": cancel before the first step was not honoured at the first step");
    CHECK_EQ(r.anomalies.unknownStepName + r.anomalies.unknownFinishName + r.anomalies.unknownParent, 0u);
    CHECK_EQ(r.anomalies.stepOutOfRange + r.anomalies.stepNotRising, 0u);
    bool engine = fileExists(req.outputPath);
    CHECK_MSG(engine == (r.outcome.status == BuildOutcome::Status::kSucceeded), "build " << i);
    switch (r.outcome.status) {
      case BuildOutcome::Status::kSucceeded:
        ++succeeded;
        break;
      case BuildOutcome::Status::kCancelled:
        ++cancelled;
        break;
      case BuildOutcome::Status::kFailed:
        ++failed;
        break;
    }
    if (engine) ::unlink(req.outputPath.c_str());
  }
  std::printf("  600 builds: %d succeeded, %d cancelled (%d at a false stepComplete), %d failed\n", succeeded, cancelled, cancelsHonoured,
              failed);
  CHECK_EQ(failed, 0);
  CHECK(cancelled >= 150 && succeeded >= 150);
  CHECK(dir.list().empty());  // no temp files left behind by any build
}

TEST(several_threads_really_report_concurrently) {
  // The multi-threaded sink is exercised only if builder threads overlap: count distinct
  // "Evaluating tactic times" phases open at the same time in the event stream.
  TempDir dir;
  auto req = simRequest(dir, "wide", 40, 7, 200, 4);
  auto r = runSim(req);
  CHECK_EQ(checkInvariants(*r.log), "");
  int open = 0, maxOpen = 0;
  std::set<int64_t> evaluating;
  for (auto const& e : r.log->events) {
    if (e.type == EvType::kPhaseStart && r.log->nameOf(e.c) == "Evaluating tactic times") evaluating.insert(e.a), ++open;
    if (e.type == EvType::kPhaseFinish && evaluating.count(e.a)) --open;
    maxOpen = std::max(maxOpen, open);
  }
  CHECK_MSG(maxOpen >= 2, "max concurrently open Evaluating phases " << maxOpen);
}

TEST(same_seed_same_tree) {
  TempDir dir;
  auto shape = [&](uint64_t seed) {
    auto r = runSim(simRequest(dir, "s" + std::to_string(seed), 12, seed, 0, 3));
    std::multiset<std::pair<std::string, int64_t>> phases;
    for (auto const& e : r.log->events) {
      if (e.type == EvType::kPhaseStart) phases.insert({r.log->nameOf(e.c), e.d});
    }
    return phases;
  };
  auto a = shape(42), b = shape(42), c = shape(43);
  CHECK(a == b);
  CHECK(a != c);
}

TEST(tree_shape_matches_tensorrt_10) {
  TempDir dir;
  auto r = runSim(simRequest(dir, "shape", 10, 3, 20, 2));
  CHECK_EQ(checkInvariants(*r.log), "");
  std::map<int64_t, std::pair<std::string, int64_t>> byId;  // id -> (name, parentId)
  std::map<std::string, OutEvent> finishOf;
  for (auto const& e : r.log->events) {
    if (e.type == EvType::kPhaseStart) byId[e.a] = {r.log->nameOf(e.c), e.b};
    if (e.type == EvType::kPhaseFinish) finishOf[byId[e.a].first] = e;
  }
  auto parentName = [&](std::string const& child) {
    for (auto const& [id, np] : byId) {
      if (np.first == child) return np.second < 0 ? std::string("(root)") : byId[np.second].first;
    }
    return std::string("(missing)");
  };
  CHECK_EQ(parentName("Building engine"), "(root)");
  CHECK_EQ(parentName("Cloning network graph"), "Building engine");
  CHECK_EQ(parentName("Optimizing graph"), "Building engine from subgraph");
  CHECK_EQ(parentName("Timing graph nodes"), "Timing tactics");
  CHECK_EQ(parentName("Measuring tactic time"), "Evaluating tactic times");
  CHECK_EQ(parentName("Computing reformatting costs"), "Timing tensor reformats");
  CHECK_EQ(parentName("Determining refit engines"), "Computing profile costs");
  // Early finishes where TensorRT 10.16 has them.
  CHECK(finishOf["Building engine"].b == 4 && finishOf["Building engine"].c == 1);
  CHECK(finishOf["Timing tactics"].b == 1 && finishOf["Timing tactics"].c == 1);
  CHECK(finishOf["Optimizing graph"].c == 1);
  CHECK(finishOf["Computing profile costs"].b == 4);
  // The parent advanced while "Determining refit engines" was open.
  int64_t profileId = -1, refitId = -1;
  for (auto const& [id, np] : byId) {
    if (np.first == "Computing profile costs") profileId = id;
    if (np.first == "Determining refit engines") refitId = id;
  }
  bool refitOpen = false, advancedWhileOpen = false;
  for (auto const& e : r.log->events) {
    if (e.type == EvType::kPhaseStart && e.a == refitId) refitOpen = true;
    if (e.type == EvType::kPhaseFinish && e.a == refitId) refitOpen = false;
    if (e.type == EvType::kPhaseStep && e.a == profileId && refitOpen && e.c >= 3) advancedWhileOpen = true;
  }
  CHECK(advancedWhileOpen);
  CHECK(r.log->count(EvType::kLog) >= 3);
  bool warned = false;
  for (auto const& e : r.log->events) warned |= e.type == EvType::kLog && e.a == int64_t(Severity::kWarning);
  CHECK(warned);
}

TEST(duration_target_and_silent_stretches) {
  TempDir dir;
  auto req = simRequest(dir, "paced", 12, 5, 400, 4);
  req.heartbeatMs = 20;
  auto r = runSim(req, -1, 10);
  CHECK_EQ(checkInvariants(*r.log), "");
  CHECK_MSG(r.wallMs > 300 && r.wallMs < 650, "wall " << r.wallMs << " ms for a 400 ms target");
  // Silent stretches: the longest gap between progress callbacks is a noticeable share.
  double last = 0, longest = 0;
  for (auto const& e : r.log->events) {
    if (e.type == EvType::kPhaseStart || e.type == EvType::kPhaseStep || e.type == EvType::kPhaseFinish) {
      longest = std::max(longest, e.t - last);
      last = e.t;
    }
  }
  CHECK_MSG(longest > 20, "longest silent stretch " << longest << " ms");
  double maxSince = 0;
  for (auto const& e : r.log->events) {
    if (e.type == EvType::kHeartbeat) maxSince = std::max(maxSince, e.x);
  }
  CHECK_MSG(maxSince > 10, "heartbeat sinceLastCallbackMs max " << maxSince);
}

TEST_MAIN()

namespace {
struct LogCounts {
  size_t verbose = 0, simulated = 0, autotuning = 0, capNotes = 0;
};
LogCounts countLogs(EventLog& log) {
  LogCounts n;
  for (auto const& e : log.events) {
    if (e.type != EvType::kLog) continue;
    if (e.a == static_cast<int64_t>(Severity::kVerbose)) {
      ++n.verbose;
      n.simulated += e.text.rfind("[simulated] ", 0) == 0;
      n.autotuning += e.text.rfind("Autotuning op ", 0) == 0;
    }
    n.capNotes += e.text.find("Simulated verbose log stops after") != std::string::npos;
  }
  return n;
}
}  // namespace

TEST(verbose_log_is_forwarded_only_when_asked_and_leaves_the_tree_alone) {
  TempDir dir;
  auto req = simRequest(dir, "quiet", 12, 7, 0, 3);
  auto quiet = runSim(req);
  req.buildId = "loud";
  req.outputPath = dir.file("loud.engine");
  req.verboseLog = true;
  auto loud = runSim(req);
  CHECK(finishedWith(*quiet.log, "succeeded"));
  CHECK(finishedWith(*loud.log, "succeeded"));
  CHECK_EQ(checkInvariants(*loud.log), std::string());
  CHECK_EQ(countLogs(*quiet.log).verbose, size_t{0});
  LogCounts n = countLogs(*loud.log);
  CHECK(n.simulated > 12);  // clone steps, tactics and reformats each log one
  CHECK(n.autotuning > 0);  // every group is a miss without a cache
  CHECK_EQ(n.capNotes, size_t{0});
  // The same phases with and without the verbose log: it is logging only.
  auto phases = [](EventLog& log) {
    std::multiset<std::pair<std::string, int64_t>> out;
    for (auto const& e : log.events) {
      if (e.type == EvType::kPhaseStart) out.insert({log.nameOf(e.c), e.d});
    }
    return out;
  };
  CHECK(phases(*quiet.log) == phases(*loud.log));
}

TEST(infer_cache_misses_forwards_verbose_lines_too) {
  TempDir dir;
  auto req = simRequest(dir, "infer", 6, 3, 0, 2);
  req.inferCacheMisses = true;
  auto r = runSim(req);
  CHECK(countLogs(*r.log).autotuning > 0);
}

TEST(a_huge_verbose_build_stops_its_verbose_log_at_the_cap) {
  TempDir dir;
  // ~13k groups x up to 24 tactics: far more candidate lines than the cap.
  auto req = simRequest(dir, "huge", 40000, 11, 0, 4);
  req.verboseLog = true;
  auto r = runSim(req);
  CHECK(finishedWith(*r.log, "succeeded"));
  LogCounts n = countLogs(*r.log);
  CHECK_EQ(n.verbose, size_t{200000});
  CHECK_EQ(n.capNotes, size_t{1});
}
