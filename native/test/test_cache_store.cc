// The backend-agnostic timing-cache store: reading never blocks or reads without bound, a save
// never replaces a file that is not a cache, and measured entries survive a held lock (sidecar,
// folded in by the next save), also when many savers in several processes compete.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "check.h"
#include "core/atomic_file.h"
#include "core/cache_store.h"
#include "lock_holder.h"
#include "temp_dir.h"

using namespace tbs;
using namespace tbs_test;

namespace {

// A toy cache format: "CACHE\n" then one entry per line. "CACHE\nBAD" marks a damaged cache.
constexpr char kHead[] = "CACHE\n";

std::set<std::string> entriesOf(std::string const& bytes) {
  std::set<std::string> out;
  std::istringstream in(bytes.substr(bytes.rfind(kHead, 0) == 0 ? 6 : 0));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

std::string cacheOf(std::set<std::string> const& entries) {
  std::string out = kHead;
  for (auto const& e : entries) out += e + "\n";
  return out;
}

bool isOurs(std::string const& bytes) { return bytes.rfind(kHead, 0) == 0; }

CacheMergeResult toyMerge(CacheMergeInput const& in) {
  CacheMergeResult m;
  std::set<std::string> all;
  if (in.currentExists && !in.current->empty()) {
    if (!isOurs(*in.current)) {
      m.refuse = true;
      m.error = "not a toy cache";
      return m;
    }
    if (in.current->rfind("CACHE\nBAD", 0) == 0) {
      m.keepCurrentCopy = true;
    } else {
      all = entriesOf(*in.current);
    }
  }
  for (auto const& p : *in.pending) {
    m.pendingMerged.push_back(isOurs(p));
    if (isOurs(p)) {
      auto e = entriesOf(p);
      all.insert(e.begin(), e.end());
    }
  }
  auto mine = entriesOf(*in.mine);
  all.insert(mine.begin(), mine.end());
  m.bytes = cacheOf(all);
  m.entries = static_cast<int64_t>(all.size());
  return m;
}

std::string baseName(std::string const& p) { return p.substr(p.find_last_of('/') + 1); }

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(read_refuses_what_is_not_a_regular_file_without_blocking) {
  TempDir dir("tbs-cache-store");
  CHECK(readCacheFile(dir.file("absent")).state == CacheFileRead::State::kAbsent);

  CHECK(atomicWriteFile(dir.file("ok"), std::string("CACHE\na\n")).ok);
  auto ok = readCacheFile(dir.file("ok"));
  CHECK(ok.state == CacheFileRead::State::kRead);
  CHECK_EQ(ok.bytes, std::string("CACHE\na\n"));

  // A FIFO with no writer: a plain open(2) would wait forever for one.
  CHECK(::mkfifo(dir.file("fifo").c_str(), 0644) == 0);
  auto t0 = std::chrono::steady_clock::now();
  auto fifo = readCacheFile(dir.file("fifo"));
  CHECK(fifo.state == CacheFileRead::State::kError);
  CHECK_CONTAINS(fifo.error, dir.file("fifo") + " is a FIFO (named pipe), not a regular file");
  CHECK_MSG(msSince(t0) < 1000, msSince(t0) << " ms");

  CHECK(::symlink(dir.file("fifo").c_str(), dir.file("to-fifo").c_str()) == 0);
  CHECK_CONTAINS(readCacheFile(dir.file("to-fifo")).error, "is a symbolic link to a FIFO (named pipe)");
  CHECK(readCacheFile(dir.file("to-fifo")).symlink);

  CHECK(::symlink(dir.file("nowhere").c_str(), dir.file("dangling").c_str()) == 0);
  CHECK_CONTAINS(readCacheFile(dir.file("dangling")).error, "is a symbolic link to a missing file");

  CHECK(::mkdir(dir.file("d").c_str(), 0755) == 0);
  CHECK_CONTAINS(readCacheFile(dir.file("d")).error, "is a directory");
  CHECK_CONTAINS(readCacheFile("/dev/null").error, "is a character device");

  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sockPath = dir.file("sock");
  if (s >= 0 && sockPath.size() < sizeof addr.sun_path) {
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sockPath.c_str());
    CHECK(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    CHECK_CONTAINS(readCacheFile(sockPath).error, "is a socket");
  }
  if (s >= 0) ::close(s);
}

TEST(read_caps_the_size) {
  TempDir dir("tbs-cache-store");
  CHECK(atomicWriteFile(dir.file("big"), std::string(11, 'x')).ok);
  auto r = readCacheFile(dir.file("big"), 10);
  CHECK(r.state == CacheFileRead::State::kError);
  CHECK_CONTAINS(r.error, "is 11 bytes, above the 10-byte limit for a timing cache");
  CHECK(r.bytes.empty());
  CHECK(readCacheFile(dir.file("big"), 11).state == CacheFileRead::State::kRead);
}

TEST(save_merges_with_what_is_on_disk) {
  TempDir dir("tbs-cache-store");
  std::string cache = dir.file("c.cache");
  auto a = saveCache(cache, cacheOf({"a", "b"}), toyMerge);
  CHECK(a.outcome == CacheSaveResult::Outcome::kSaved);
  CHECK_EQ(a.entriesAfter, 2);
  auto b = saveCache(cache, cacheOf({"b", "c"}), toyMerge);
  CHECK(b.outcome == CacheSaveResult::Outcome::kSaved);
  CHECK_EQ(b.entriesAfter, 3);
  CHECK_EQ(readFile(cache), cacheOf({"a", "b", "c"}));
  CHECK_EQ(b.fileBytes, static_cast<int64_t>(readFile(cache).size()));
  CHECK(b.warning.empty());
}

TEST(held_lock_keeps_entries_in_a_sidecar_and_the_next_save_folds_them_in) {
  TempDir dir("tbs-cache-store");
  std::string cache = dir.file("c.cache");
  CHECK(saveCache(cache, cacheOf({"old"}), toyMerge).outcome == CacheSaveResult::Outcome::kSaved);
  std::string before = readFile(cache);
  CacheSaveOptions quick;
  quick.lockTimeoutMs = 200;
  std::string first, second;
  {
    LockHolder other(cache + ".lock");
    CHECK(other.held());
    auto t0 = std::chrono::steady_clock::now();
    auto r1 = saveCache(cache, cacheOf({"x1", "x2"}), toyMerge, quick);
    CHECK_MSG(msSince(t0) < 5000, msSince(t0) << " ms");
    CHECK(r1.outcome == CacheSaveResult::Outcome::kDeferred);
    CHECK_CONTAINS(r1.warning, "timed out after 200 ms");
    CHECK_CONTAINS(r1.warning, "kept in " + r1.deferredPath);
    CHECK_EQ(readFile(r1.deferredPath), cacheOf({"x1", "x2"}));
    auto r2 = saveCache(cache, cacheOf({"y"}), toyMerge, quick);
    CHECK(r2.outcome == CacheSaveResult::Outcome::kDeferred);
    CHECK(r1.deferredPath != r2.deferredPath);
    first = r1.deferredPath;
    second = r2.deferredPath;
    CHECK_EQ(readFile(cache), before);  // the cache itself was not touched without the lock
    auto pending = listPendingCacheFiles(cache);
    CHECK_EQ(pending.size(), 2u);
    CHECK_CONTAINS(baseName(first), "c.cache.pending-" + std::to_string(::getpid()) + "-");
  }
  auto r3 = saveCache(cache, cacheOf({"z"}), toyMerge, quick);
  CHECK(r3.outcome == CacheSaveResult::Outcome::kSaved);
  CHECK_EQ(r3.pendingMerged, 2);
  CHECK_EQ(readFile(cache), cacheOf({"old", "x1", "x2", "y", "z"}));
  CHECK(!fileExists(first));
  CHECK(!fileExists(second));
  CHECK(listPendingCacheFiles(cache).empty());
}

TEST(a_save_with_nothing_to_add_never_waits_and_never_warns) {
  TempDir dir("tbs-cache-store");
  std::string cache = dir.file("c.cache");
  CHECK(saveCache(cache, cacheOf({"a"}), toyMerge).outcome == CacheSaveResult::Outcome::kSaved);
  LockHolder other(cache + ".lock");
  CHECK(other.held());
  CacheSaveOptions nothing;
  nothing.lockTimeoutMs = 0;
  nothing.mineHasEntries = false;
  auto r = saveCache(cache, cacheOf({}), toyMerge, nothing);
  CHECK(r.outcome == CacheSaveResult::Outcome::kDeferred);
  CHECK(r.deferredPath.empty());
  CHECK(r.warning.empty());
  CHECK(listPendingCacheFiles(cache).empty());
  CHECK_EQ(readFile(cache), cacheOf({"a"}));
}

TEST(a_file_that_is_not_a_cache_is_never_replaced) {
  TempDir dir("tbs-cache-store");
  std::string cache = dir.file("model.onnx");
  std::string model = std::string("\x08\x07\x12\x07pytorch", 11) + std::string(100, '\0');
  CHECK(atomicWriteFile(cache, model).ok);
  auto r = saveCache(cache, cacheOf({"m"}), toyMerge);
  CHECK(r.outcome == CacheSaveResult::Outcome::kRefused);
  CHECK_EQ(r.error, std::string("not a toy cache"));
  CHECK_EQ(readFile(cache), model);
  CHECK_EQ(readFile(r.deferredPath), cacheOf({"m"}));  // what was measured is still kept

  // A FIFO put at the path mid-build: refused at once, left a FIFO.
  std::string fifo = dir.file("fifo.cache");
  CHECK(::mkfifo(fifo.c_str(), 0644) == 0);
  auto t0 = std::chrono::steady_clock::now();
  auto f = saveCache(fifo, cacheOf({"f"}), toyMerge);
  CHECK(f.outcome == CacheSaveResult::Outcome::kRefused);
  CHECK_CONTAINS(f.error, "is a FIFO");
  CHECK_MSG(msSince(t0) < 2000, msSince(t0) << " ms");
  struct stat st{};
  CHECK(::lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
}

TEST(a_damaged_cache_is_kept_aside_before_it_is_replaced) {
  TempDir dir("tbs-cache-store");
  std::string cache = dir.file("c.cache");
  std::string damaged = "CACHE\nBAD\x01\x02";
  CHECK(atomicWriteFile(cache, damaged).ok);
  auto r = saveCache(cache, cacheOf({"a"}), toyMerge);
  CHECK(r.outcome == CacheSaveResult::Outcome::kSaved);
  CHECK_EQ(r.corruptCopyPath, cache + ".corrupt");
  CHECK_EQ(readFile(cache + ".corrupt"), damaged);
  CHECK_CONTAINS(r.warning, "kept as " + cache + ".corrupt");
  CHECK_EQ(readFile(cache), cacheOf({"a"}));
  // A second damaged file does not overwrite the first copy.
  CHECK(atomicWriteFile(cache, damaged + "2").ok);
  auto r2 = saveCache(cache, cacheOf({"b"}), toyMerge);
  CHECK_EQ(r2.corruptCopyPath, cache + ".corrupt-1");
  CHECK_EQ(readFile(cache + ".corrupt"), damaged);
  CHECK_EQ(readFile(cache + ".corrupt-1"), damaged + "2");
}

TEST(an_unusable_sidecar_is_kept_not_retried) {
  TempDir dir("tbs-cache-store");
  std::string cache = dir.file("c.cache");
  std::string bad = cache + ".pending-1-1";
  CHECK(atomicWriteFile(bad, std::string("garbage")).ok);
  // Names that only look like sidecars are never read or deleted.
  for (auto const& n : {".pending-1-2.tmp-3-4", ".pending-x-1", ".pending-1-", ".pending-1-2.rejected"}) {
    CHECK(atomicWriteFile(cache + n, std::string("CACHE\nnot-me\n")).ok);
  }
  CHECK_EQ(listPendingCacheFiles(cache).size(), 1u);
  auto r = saveCache(cache, cacheOf({"a"}), toyMerge);
  CHECK(r.outcome == CacheSaveResult::Outcome::kSaved);
  CHECK_EQ(r.pendingMerged, 0);
  CHECK(!fileExists(bad));
  CHECK_EQ(readFile(bad + ".rejected"), std::string("garbage"));
  CHECK_CONTAINS(r.warning, "could not be merged; kept as " + bad + ".rejected");
  CHECK_EQ(readFile(cache), cacheOf({"a"}));
  CHECK(fileExists(cache + ".pending-1-2.tmp-3-4"));
  CHECK(saveCache(cache, cacheOf({"b"}), toyMerge).warning.empty());  // not retried
}

TEST(a_symlinked_cache_keeps_its_link) {
  TempDir dir("tbs-cache-store");
  std::string real = dir.file("real.cache");
  std::string link = dir.file("link.cache");
  CHECK(atomicWriteFile(real, cacheOf({"a"})).ok);
  CHECK(::symlink(real.c_str(), link.c_str()) == 0);
  CHECK(saveCache(link, cacheOf({"b"}), toyMerge).outcome == CacheSaveResult::Outcome::kSaved);
  struct stat st{};
  CHECK(::lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode));
  CHECK_EQ(readFile(real), cacheOf({"a", "b"}));
}

TEST(many_savers_with_a_contended_lock_lose_nothing) {
  TempDir dir("tbs-cache-store");
  std::string cache = dir.file("c.cache");
  CacheSaveOptions impatient;
  impatient.lockTimeoutMs = 0;  // one try: many saves defer to sidecars
  std::atomic<int> deferred{0};
  // Another process holds the lock while the savers start, so deferrals certainly happen.
  LockHolder other(cache + ".lock");
  CHECK(other.held());
  std::vector<std::thread> savers;
  for (int t = 0; t < 6; ++t) {
    savers.emplace_back([&, t] {
      for (int round = 0; round < 15; ++round) {
        std::set<std::string> mine;
        for (int k = 0; k < 3; ++k) mine.insert(std::to_string(t) + "/" + std::to_string(round) + "/" + std::to_string(k));
        auto r = saveCache(cache, cacheOf(mine), toyMerge, impatient);
        CHECK(r.outcome == CacheSaveResult::Outcome::kSaved || r.outcome == CacheSaveResult::Outcome::kDeferred);
        if (r.outcome == CacheSaveResult::Outcome::kDeferred) deferred.fetch_add(1);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  other.release();
  for (auto& t : savers) t.join();
  CHECK(deferred.load() > 0);
  auto last = saveCache(cache, cacheOf({}), toyMerge);
  CHECK(last.outcome == CacheSaveResult::Outcome::kSaved);
  CHECK_EQ(last.entriesAfter, 6 * 15 * 3);
  CHECK_EQ(entriesOf(readFile(cache)).size(), 6u * 15 * 3);
  CHECK(listPendingCacheFiles(cache).empty());
}

TEST(lock_timeout_comes_from_the_environment) {
  ::unsetenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS");
  CHECK_EQ(cacheLockTimeoutMs(30000), 30000);
  ::setenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS", "250", 1);
  CHECK_EQ(cacheLockTimeoutMs(30000), 250);
  ::setenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS", "soon", 1);
  CHECK_EQ(cacheLockTimeoutMs(30000), 30000);
  ::unsetenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS");
}

TEST_MAIN()
