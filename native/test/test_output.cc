// Output file: only a successful build writes it (atomically, with the "not an engine" header);
// failed/cancelled builds leave nothing; an unwritable path is a clear error before the build.
#include <fcntl.h>
#include <sys/stat.h>

#include "check.h"
#include "sim_harness.h"

using namespace tbs;
using namespace tbs_test;

TEST(success_writes_header_and_metadata) {
  TempDir dir;
  auto req = simRequest(dir, "ok", 9, 2, 5, 2);
  auto r = runSim(req);
  CHECK(r.outcome.status == BuildOutcome::Status::kSucceeded);
  std::string bytes = readFile(req.outputPath);
  CHECK(bytes.rfind("TRT-BUILD-STUDIO SIMULATED ENGINE - NOT A TENSORRT ENGINE\n", 0) == 0);
  CHECK(bytes.find("\"format\":\"trt-build-studio-simulated-engine\"") != std::string::npos);
  CHECK_EQ(static_cast<int64_t>(bytes.size()), r.outcome.engineBytes);
  CHECK(finishedWith(*r.log, "succeeded"));
  CHECK(r.log->last(EvType::kFinished)->text.find("\"engineBytes\":" + std::to_string(bytes.size())) != std::string::npos);
  CHECK_EQ(dir.list().size(), 1u);  // the engine, no temp file
}

TEST(failed_build_leaves_no_file_and_names_the_phase) {
  TempDir dir;
  auto req = simRequest(dir, "fail", 9, 2, 5, 3);
  req.simFault = SimFaultKind::kFail;
  req.simFaultPhase = "Timing graph nodes";
  auto r = runSim(req);
  CHECK_EQ(checkInvariants(*r.log), "");
  CHECK(r.outcome.status == BuildOutcome::Status::kFailed);
  CHECK(r.outcome.error.find("\"Timing graph nodes\"") != std::string::npos);
  CHECK(finishedWith(*r.log, "failed"));
  CHECK(dir.list().empty());
}

TEST(failed_build_keeps_previous_file_untouched) {
  TempDir dir;
  auto req = simRequest(dir, "keep", 9, 2, 5, 3);
  CHECK(atomicWriteFile(req.outputPath, std::string("previous engine")).ok);
  req.simFault = SimFaultKind::kFail;
  req.simFaultPhase = "Optimizing graph";
  auto r = runSim(req);
  CHECK(r.outcome.status == BuildOutcome::Status::kFailed);
  CHECK_EQ(readFile(req.outputPath), "previous engine");
  CHECK_EQ(dir.list().size(), 1u);
}

TEST(cancelled_build_leaves_no_file) {
  TempDir dir;
  auto req = simRequest(dir, "cancel", 12, 2, 300, 3);
  auto r = runSim(req, 60);
  CHECK(r.outcome.status == BuildOutcome::Status::kCancelled);
  CHECK(dir.list().empty());
}

TEST(unwritable_output_is_a_clear_error_before_building) {
  TempDir dir;
  auto missing = simRequest(dir, "m", 5, 2, 5, 2);
  missing.outputPath = dir.file("no/such/dir/model.engine");
  auto r = runSim(missing);
  CHECK(r.outcome.status == BuildOutcome::Status::kFailed);
  CHECK_MSG(
      r.outcome.error.find("does not exist") != std::string::npos && r.outcome.error.find(dir.file("no/such/dir")) != std::string::npos,
      r.outcome.error);
  CHECK_EQ(r.log->count(EvType::kPhaseStart), 0u);  // failed before any work
  CHECK(finishedWith(*r.log, "failed"));

  CHECK(atomicWriteFile(dir.file("plainfile"), std::string("x")).ok);
  auto notDir = simRequest(dir, "n", 5, 2, 5, 2);
  notDir.outputPath = dir.file("plainfile/model.engine");
  r = runSim(notDir);
  CHECK_MSG(r.outcome.error.find("is not a directory") != std::string::npos, r.outcome.error);

  auto isDir = simRequest(dir, "d", 5, 2, 5, 2);
  isDir.outputPath = dir.path;
  r = runSim(isDir);
  CHECK_MSG(r.outcome.error.find("is a directory") != std::string::npos, r.outcome.error);

  auto empty = simRequest(dir, "e", 5, 2, 5, 2);
  empty.outputPath = "";
  r = runSim(empty);
  CHECK_MSG(r.outcome.error.find("no output path") != std::string::npos, r.outcome.error);

  // Permission bits do not stop root; only check read-only directories as a normal user.
  if (::geteuid() != 0) {
    std::string ro = dir.file("ro");
    ::mkdir(ro.c_str(), 0555);
    auto readOnly = simRequest(dir, "r", 5, 2, 5, 2);
    readOnly.outputPath = ro + "/model.engine";
    r = runSim(readOnly);
    CHECK_MSG(r.outcome.error.find("not writable") != std::string::npos, r.outcome.error);
  } else {
    std::printf("  (running as root: read-only directory case checked only via /proc)\n");
    auto proc = simRequest(dir, "p", 5, 2, 5, 2);
    proc.outputPath = "/proc/self/model.engine";
    r = runSim(proc);
    CHECK(r.outcome.status == BuildOutcome::Status::kFailed && !r.outcome.error.empty());
  }
}

TEST(unknown_fault_phase_is_rejected_with_the_list) {
  TempDir dir;
  auto req = simRequest(dir, "bad", 5, 2, 5, 2);
  req.simFault = SimFaultKind::kFail;
  req.simFaultPhase = "Nope";
  auto r = runSim(req);
  CHECK(r.outcome.status == BuildOutcome::Status::kFailed);
  CHECK(r.outcome.error.find("\"Nope\" is not a phase") != std::string::npos);
  CHECK(r.outcome.error.find("Timing graph nodes") != std::string::npos);
}

TEST(fault_phase_chosen_by_seed_when_not_named) {
  TempDir dir;
  auto req = simRequest(dir, "seeded", 5, 5, 5, 2);
  req.simFault = SimFaultKind::kFail;
  auto r = runSim(req);
  CHECK(r.outcome.status == BuildOutcome::Status::kFailed);
  CHECK(r.outcome.error.find("simulated failure in phase") != std::string::npos);
}

TEST_MAIN()
