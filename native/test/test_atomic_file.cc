// AtomicFile and FileLock: never a half-written file at the target, clear errors, and a lock
// that really excludes (threads of one process and other processes).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

// stat(2) fields that say a file was not touched: same node, same size, same times.
static bool sameNode(struct stat const& a, struct stat const& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_mode == b.st_mode && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
         a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

static struct stat lstatOf(std::string const& p) {
  struct stat st{};
  CHECK_MSG(::lstat(p.c_str(), &st) == 0, p);
  return st;
}

TEST(refuses_fifo_socket_and_device_targets_and_leaves_them_untouched) {
  TempDir dir;
  std::string fifo = dir.file("pipe");
  CHECK(::mkfifo(fifo.c_str(), 0600) == 0);
  struct stat before = lstatOf(fifo);
  // A FIFO nobody reads: opening it for writing would block forever; the refusal comes first.
  AtomicWriteResult r = atomicWriteFile(fifo, std::string("engine"));
  CHECK(!r.ok);
  CHECK_CONTAINS(r.error, "it is a FIFO (named pipe), not a regular file, and is left untouched");
  CHECK(sameNode(before, lstatOf(fifo)));
  CHECK_EQ(dir.list().size(), 1u);  // no temp file either

  std::string sock = dir.file("sock");
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  CHECK(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  r = checkWritableTarget(sock);
  CHECK(!r.ok);
  CHECK_CONTAINS(r.error, "it is a socket");
  ::close(s);

  // /dev/null is never at risk here: the refusal is made before anything is created or opened
  // for writing (and /dev is no folder of ours), as the before/after stat shows.
  struct stat devBefore = lstatOf("/dev/null");
  r = atomicWriteFile("/dev/null", std::string("engine"));
  CHECK(!r.ok);
  CHECK_CONTAINS(r.error, "it is a character device");
  CHECK(sameNode(devBefore, lstatOf("/dev/null")));
  CHECK(S_ISCHR(lstatOf("/dev/null").st_mode));
}

TEST(writes_through_a_symlink_and_leaves_the_link_a_link) {
  TempDir dir;
  TempDir other;
  std::string target = other.file("real.engine");
  CHECK(atomicWriteFile(target, std::string("old")).ok);
  std::string link = dir.file("link.engine");
  CHECK(::symlink(target.c_str(), link.c_str()) == 0);
  AtomicWriteResult r = atomicWriteFile(link, std::string("new engine"));
  CHECK_MSG(r.ok, r.error);
  CHECK_EQ(r.target, target);
  CHECK(S_ISLNK(lstatOf(link).st_mode));
  CHECK_EQ(readFile(target), "new engine");
  CHECK_EQ(dir.list().size(), 1u);  // only the link: the temp file went beside the target
  CHECK_EQ(other.list().size(), 1u);

  // A link to a missing file, to a FIFO or to a directory is refused; the link stays.
  std::string dangling = dir.file("dangling.engine");
  CHECK(::symlink(other.file("missing").c_str(), dangling.c_str()) == 0);
  r = atomicWriteFile(dangling, std::string("x"));
  CHECK(!r.ok);
  CHECK_CONTAINS(r.error, "is a symbolic link to a missing file");
  CHECK(S_ISLNK(lstatOf(dangling).st_mode));
  CHECK(!fileExists(other.file("missing")));
  std::string fifo = other.file("pipe");
  CHECK(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string toFifo = dir.file("to-fifo.engine");
  CHECK(::symlink(fifo.c_str(), toFifo.c_str()) == 0);
  r = atomicWriteFile(toFifo, std::string("x"));
  CHECK(!r.ok);
  CHECK_CONTAINS(r.error, "(the target of the symbolic link " + toFifo + "): it is a FIFO");
  CHECK(S_ISLNK(lstatOf(toFifo).st_mode));
  CHECK(S_ISFIFO(lstatOf(fifo).st_mode));
}

TEST(rechecks_the_target_at_the_moment_of_the_rename) {
  TempDir dir;
  std::string p = dir.file("out.engine");
  {
    // Absent at open, a FIFO by the time of the rename: refused, the FIFO stays.
    AtomicFile f(p);
    CHECK(f.open() && f.write("abc", 3));
    CHECK(::mkfifo(p.c_str(), 0600) == 0);
    struct stat before = lstatOf(p);
    CHECK(!f.commit());
    CHECK_CONTAINS(f.error(), "it became a FIFO (named pipe) while the file was written, and is left untouched");
    CHECK(sameNode(before, lstatOf(p)));
    CHECK_EQ(dir.list().size(), 1u);  // the temp file is gone
    CHECK(::unlink(p.c_str()) == 0);
  }
  {
    // A regular file at open, swapped for a symbolic link before the rename: the link is not
    // replaced by a regular file, and its target is not written.
    TempDir other;
    std::string victim = other.file("victim");
    CHECK(atomicWriteFile(victim, std::string("keep")).ok);
    CHECK(atomicWriteFile(p, std::string("old")).ok);
    AtomicFile f(p);
    CHECK(f.open() && f.write("abc", 3));
    CHECK(::unlink(p.c_str()) == 0 && ::symlink(victim.c_str(), p.c_str()) == 0);
    CHECK(!f.commit());
    CHECK_CONTAINS(f.error(), "it became a symbolic link");
    CHECK(S_ISLNK(lstatOf(p).st_mode));
    CHECK_EQ(readFile(victim), "keep");
  }
}

TEST(refuses_folders_others_could_replace_the_file_in) {
  TempDir dir;
  std::string open = dir.file("open");
  CHECK(::mkdir(open.c_str(), 0700) == 0 && ::chmod(open.c_str(), 0777) == 0);
  AtomicWriteResult r = atomicWriteFile(open + "/x.engine", std::string("x"));
  CHECK(!r.ok);
  CHECK_CONTAINS(r.error, "is writable by every user (mode 0777) without the sticky bit");
  CHECK_CONTAINS(r.error, "chmod o-w " + open);
  CHECK(!fileExists(open + "/x.engine"));
  // The sticky bit (as on /tmp) keeps others from replacing what they do not own.
  CHECK(::chmod(open.c_str(), 01777) == 0);
  r = atomicWriteFile(open + "/x.engine", std::string("x"));
  CHECK_MSG(r.ok, r.error);
  if (::geteuid() == 0) {
    // Only root can hand a folder to another user; elsewhere this part cannot run.
    std::string theirs = dir.file("theirs");
    CHECK(::mkdir(theirs.c_str(), 0755) == 0 && ::chown(theirs.c_str(), 65534, 65534) == 0);
    r = atomicWriteFile(theirs + "/x.engine", std::string("x"));
    CHECK(!r.ok);
    CHECK_CONTAINS(r.error, "belongs to another user (uid 65534)");
    CHECK(!fileExists(theirs + "/x.engine"));
  } else {
    std::fprintf(stderr, "  (skipped the other-owner case: it needs root to chown)\n");
  }
}

TEST_MAIN()
