// The simulator's memory (native/src/sim/sim_memory.h): what it holds is resident (RSS rises by
// it), rises and falls as asked, and an allocation the kernel refuses fails the simulated build
// with "out of memory", no engine written.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "check.h"
#include "sim/sim_memory.h"
#include "sim_harness.h"

using tbs::sim::SimMemory;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Resident bytes of this process (/proc/self/statm, second field, in pages).
int64_t rssBytes() {
  std::ifstream f("/proc/self/statm");
  int64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace

TEST(held_memory_is_resident_and_follows_rise_and_fall) {
  SimMemory m(256 * kMiB);
  int64_t before = rssBytes();
  std::string error;
  CHECK(m.rise(0.5, error));
  CHECK_EQ(m.heldBytes(), 128 * kMiB);
  // Every page was written: the RSS rose by (nearly) all of it.
  CHECK_MSG(rssBytes() - before >= 120 * kMiB, std::to_string(rssBytes() - before));
  CHECK(m.rise(0.25, error));  // rise never shrinks
  CHECK_EQ(m.heldBytes(), 128 * kMiB);
  CHECK(m.rise(1.0, error));
  CHECK_EQ(m.heldBytes(), 256 * kMiB);
  m.fall(0.5);
  CHECK(m.heldBytes() <= 128 * kMiB && m.heldBytes() >= 96 * kMiB);
  CHECK_MSG(rssBytes() - before <= 180 * kMiB, std::to_string(rssBytes() - before));
}

TEST(zero_target_holds_nothing) {
  SimMemory m(0);
  std::string error;
  CHECK(m.rise(1.0, error));
  CHECK_EQ(m.heldBytes(), 0);
}

TEST(simulated_build_peaks_at_its_target_and_frees_it) {
  tbs_test::TempDir dir;
  auto req = tbs_test::simRequest(dir, "mem", 40, 3, 300);
  req.simMemoryBytes = 200 * kMiB;
  int64_t before = rssBytes();
  auto r = tbs_test::runSim(req);
  CHECK(r.outcome.status == tbs::BuildOutcome::Status::kSucceeded);
  CHECK(tbs_test::fileExists(req.outputPath));
  // Released at the end of the build.
  CHECK_MSG(rssBytes() - before < 100 * kMiB, std::to_string(rssBytes() - before));
}

// In a child process whose address space is capped (ulimit -v), the simulator's allocation fails:
// the build fails with an "out of memory" error naming the size, and writes no engine.
TEST(refused_allocation_fails_the_build_as_out_of_memory) {
  tbs_test::TempDir dir;
  auto req = tbs_test::simRequest(dir, "oom", 40, 3, 300);
  req.simMemoryBytes = int64_t{64} << 30;  // 64 GiB: far above the cap below
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    // What is mapped now plus 384 MiB (thread stacks, a few chunks): the 64 GiB never fit, and
    // little memory is touched before the refusal (the machine is shared).
    std::ifstream statm("/proc/self/statm");
    int64_t vmPages = 0;
    statm >> vmPages;
    rlimit lim{};
    getrlimit(RLIMIT_AS, &lim);
    lim.rlim_cur = static_cast<rlim_t>(vmPages * sysconf(_SC_PAGESIZE) + 384 * kMiB);
    setrlimit(RLIMIT_AS, &lim);
    auto r = tbs_test::runSim(req);
    std::string line = std::to_string(static_cast<int>(r.outcome.status)) + "\n" + r.outcome.error;
    ssize_t n = write(fds[1], line.data(), line.size());
    _exit(n > 0 ? 0 : 1);
  }
  close(fds[1]);
  std::string got;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, std::to_string(status));
  CHECK_MSG(got.rfind(std::to_string(static_cast<int>(tbs::BuildOutcome::Status::kFailed)) + "\n", 0) == 0, got);
  CHECK_MSG(got.find("out of memory") != std::string::npos, got);
  CHECK(!tbs_test::fileExists(req.outputPath));
}

TEST_MAIN()
