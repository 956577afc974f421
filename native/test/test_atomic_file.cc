// AtomicFile and FileLock: never a half-written file at the target, clear errors, and a lock
// that really excludes (threads of one process and other processes).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "check.h"
#include "core/atomic_file.h"
#include "core/file_lock.h"
#include "temp_dir.h"

using namespace tbs;
using namespace tbs_test;

TEST(write_and_replace) {
  TempDir dir;
  std::string p = dir.file("out.bin");
  CHECK(atomicWriteFile(p, std::string("first")).ok);
  CHECK_EQ(readFile(p), "first");
  CHECK(atomicWriteFile(p, std::string(100000, 'z')).ok);
  CHECK_EQ(readFile(p).size(), 100000u);
  CHECK_EQ(dir.list().size(), 1u);
}

TEST(streamed_write_is_invisible_until_commit) {
  TempDir dir;
  std::string p = dir.file("engine");
  CHECK(atomicWriteFile(p, std::string("old")).ok);
  {
    AtomicFile f(p);
    CHECK(f.open());
    CHECK(f.write("new-part-1", 10));
    CHECK_EQ(readFile(p), "old");  // readers still see the old file
    CHECK(fileExists(f.tempPath()));
    CHECK(f.tempPath().rfind(dir.path + "/", 0) == 0);  // same directory: rename is atomic
  }  // destroyed without commit: discarded
  CHECK_EQ(readFile(p), "old");
  CHECK_EQ(dir.list().size(), 1u);
  AtomicFile g(p);
  CHECK(g.open() && g.write("abc", 3) && g.commit());
  CHECK_EQ(readFile(p), "abc");
  CHECK_EQ(g.bytesWritten(), 3);
  CHECK_EQ(dir.list().size(), 1u);
}

TEST(clear_errors) {
  TempDir dir;
  auto r = atomicWriteFile(dir.file("missing/x.bin"), std::string("x"));
  CHECK(!r.ok);
  CHECK_MSG(r.error.find("directory " + dir.file("missing") + " does not exist") != std::string::npos, r.error);
  CHECK(atomicWriteFile(dir.file("f"), std::string("x")).ok);
  r = atomicWriteFile(dir.file("f/x.bin"), std::string("x"));
  CHECK_MSG(!r.ok && r.error.find("is not a directory") != std::string::npos, r.error);
  r = atomicWriteFile(dir.path, std::string("x"));
  CHECK_MSG(!r.ok && r.error.find("is a directory") != std::string::npos, r.error);
  r = atomicWriteFile("", std::string("x"));
  CHECK(!r.ok && r.error == "output path is empty");
  AtomicFile never(dir.file("g"));
  CHECK(!never.write("x", 1));
  CHECK(!never.commit());
  CHECK_EQ(dir.list().size(), 1u);
}

TEST(file_lock_excludes_threads) {
  TempDir dir;
  std::string lockPath = dir.file("x.lock");
  std::atomic<int> inside{0};
  std::atomic<int> maxInside{0};
  int counter = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < 6; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        FileLock lock(lockPath);
        CHECK(lock.locked());
        int now = ++inside;
        int prev = maxInside.load();
        while (now > prev && !maxInside.compare_exchange_weak(prev, now)) {
        }
        ++counter;  // unsynchronised except by the lock
        --inside;
      }
    });
  }
  for (auto& t : ts) t.join();
  CHECK_EQ(maxInside.load(), 1);
  CHECK_EQ(counter, 1200);
}

TEST(file_lock_excludes_processes_and_times_out) {
  TempDir dir;
  std::string lockPath = dir.file("p.lock");
  int ready[2];
  CHECK(::pipe(ready) == 0);
  pid_t child = ::fork();
  if (child == 0) {
    FileLock lock(lockPath);
    char c = lock.locked() ? '1' : '0';
    if (::write(ready[1], &c, 1) != 1) _exit(2);
    ::usleep(300 * 1000);
    _exit(0);
  }
  char c = 0;
  CHECK(::read(ready[0], &c, 1) == 1 && c == '1');
  FileLock busy(lockPath, 50);
  CHECK(!busy.locked());
  CHECK_MSG(busy.error().find("timed out after 50 ms") != std::string::npos, busy.error());
  FileLock waits(lockPath, 5000);  // the child releases after ~300 ms
  CHECK(waits.locked());
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(ready[0]);
  ::close(ready[1]);
  FileLock bad(dir.file("no/dir/x.lock"));
  CHECK(!bad.locked() && bad.error().find("cannot open lock file") != std::string::npos);
}

TEST_MAIN()
