// The crash record: the open phase path the host reads after a worker died (crash_record.h). These
// cases read the file the way the host does (newest complete slot) while the pipeline is alive;
// the worker-level test (apps/worker/test/crash-record.test.ts) kills a real process.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "check.h"
#include "core/crash_record.h"
#include "core/progress_pipeline.h"
#include "temp_dir.h"

using namespace tbs;
using namespace tbs_test;

namespace {

// The host's reading rule, in C++: the complete slot (seqBegin == seqEnd != 0) with the highest
// sequence number; "<none>" when no complete slot exists, "" when it records no open phase.
std::string readPath(std::string const& file) {
  std::ifstream in(file, std::ios::binary);
  std::string buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (buf.size() < CrashRecord::kFileSize || buf.compare(0, 8, "TBSCRASH") != 0) return "<bad file>";
  uint64_t best = 0;
  std::string out = "<none>";
  for (uint32_t i = 0; i < CrashRecord::kSlots; ++i) {
    char const* slot = buf.data() + CrashRecord::kHeaderSize + i * CrashRecord::kSlotSize;
    uint64_t begin, end;
    uint32_t bytes;
    std::memcpy(&begin, slot, 8);
    std::memcpy(&end, slot + CrashRecord::kSlotSize - 8, 8);
    std::memcpy(&bytes, slot + 12, 4);
    if (begin == 0 || begin != end || begin <= best) continue;
    best = begin;
    out.assign(slot + 16, bytes);
  }
  return out;
}

PipelineOptions withRecord(std::string const& file) {
  PipelineOptions o;
  o.heartbeatMs = 0;
  o.crashRecordPath = file;
  return o;
}

BuildOutcome ok() { return BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""}; }

}  // namespace

TEST(record_follows_the_open_path) {
  TempDir dir("tbs-crash");
  std::string file = dir.path + "/crash";
  ProgressPipeline p(withRecord(file), [](EventBatch&&) {});
  p.phaseStart("Building engine", nullptr, 0);
  p.phaseStart("Optimizing", "Building engine", 0);
  p.phaseStart("Timing tactics", "Optimizing", 10);
  CHECK_EQ(readPath(file), "Building engine\nOptimizing\nTiming tactics");
  p.phaseFinish("Timing tactics");
  CHECK_EQ(readPath(file), "Building engine\nOptimizing");
  p.phaseStart("Timing tactics", "Optimizing", 10);  // names repeat: the new instance is shown
  CHECK_EQ(readPath(file), "Building engine\nOptimizing\nTiming tactics");
  p.phaseFinish("Timing tactics");
  p.phaseFinish("Optimizing");
  p.phaseFinish("Building engine");
  CHECK_EQ(readPath(file), "");
  p.finish(ok());
  CHECK_EQ(readPath(file), "");
}

TEST(several_threads_show_the_most_recently_started_open_phase) {
  TempDir dir("tbs-crash");
  std::string file = dir.path + "/crash";
  ProgressPipeline p(withRecord(file), [](EventBatch&&) {});
  p.phaseStart("Build", nullptr, 0);
  std::thread([&] { p.phaseStart("Layer A", "Build", 0); }).join();
  CHECK_EQ(readPath(file), "Build\nLayer A");
  std::thread([&] { p.phaseStart("Layer B", "Build", 0); }).join();
  CHECK_EQ(readPath(file), "Build\nLayer B");
  // Finishing a phase that is not the one shown changes nothing.
  std::thread([&] { p.phaseFinish("Layer A"); }).join();
  CHECK_EQ(readPath(file), "Build\nLayer B");
  // Finishing the one shown falls back to the most recent phase still open.
  std::thread([&] { p.phaseFinish("Layer B"); }).join();
  CHECK_EQ(readPath(file), "Build");
  p.finish(ok());
}

TEST(a_killed_process_leaves_its_last_path) {
  TempDir dir("tbs-crash");
  std::string file = dir.path + "/crash";
  pid_t child = fork();
  if (child == 0) {
    ProgressPipeline p(withRecord(file), [](EventBatch&&) {});
    p.phaseStart("Building engine", nullptr, 0);
    p.phaseStart("Timing tactics", "Building engine", 5);
    ::kill(::getpid(), SIGKILL);  // no destructor, no msync, no exit handler
    _exit(3);
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK_EQ(readPath(file), "Building engine\nTiming tactics");
}

TEST(long_paths_keep_the_deepest_names) {
  TempDir dir("tbs-crash");
  std::string file = dir.path + "/crash";
  CrashRecord rec;
  CHECK_EQ(rec.open(file), "");
  std::string big(3000, 'x');
  std::string deep = std::string(2000, 'y') + "\xC3\xA9";  // ends in a two-byte UTF-8 character
  char const* names[] = {"root", big.c_str(), deep.c_str()};
  rec.write(names, 3);
  CHECK_EQ(readPath(file), deep);  // root and the 3000-byte name do not fit beside it
  std::string huge(CrashRecord::kTextCapacity - 1, 'z');
  huge += "\xC3\xA9";  // the cut would fall inside this character
  char const* one[] = {huge.c_str()};
  rec.write(one, 1);
  CHECK_EQ(readPath(file), std::string(CrashRecord::kTextCapacity - 1, 'z'));
}

TEST(an_unwritable_path_is_reported_not_fatal) {
  CrashRecord rec;
  std::string why = rec.open("/nonexistent-dir/crash");
  CHECK_CONTAINS(why, "/nonexistent-dir/crash");
  CHECK(!rec.active());
  char const* names[] = {"a"};
  rec.write(names, 1);  // a no-op
}

TEST_MAIN()
