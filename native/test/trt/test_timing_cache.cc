// TimingCacheSession with the fake ITimingCache / IHostMemory objects of fake_objects.h.
// Files, locks and sidecars are the shared cache store's (core/cache_store.h, tested in
// native/test/test_cache_store.cc); these tests check the TensorRT side of it: combine() rules,
// what is refused, and that the store's protocol holds with TensorRT caches.
// What this cannot show: how a real libnvinfer reacts to a corrupt or foreign cache blob (we
// handle "null from createTimingCache", "an EMPTY cache from createTimingCache" and "false from
// setTimingCache").
#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <memory>
#include <thread>

#include <stdlib.h>
#include <sys/stat.h>

#include "check.h"
#include "core/cache_store.h"
#include "lock_holder.h"
#include "fake_objects.h"
#include "temp_dir.h"
#include "trt/trt_timing_cache.h"

using namespace tbs::trt;

namespace {

using tbs_fake::FakeTimingCache;
using tbs_fake::kCacheMagic;

// Stands in for IBuilderConfig's createTimingCache / setTimingCache.
class FakeFactory final : public CacheFactory {
 public:
  nvinfer1::ITimingCache* createTimingCache(void const* blob, std::size_t size) noexcept override {
    return tbs_fake::createFakeCache(blob, size, &queryCalls, tag, badBytes);  // null or empty for a corrupt blob
  }
  std::string tag;  // this "device": "<version>/<device>"; empty matches any cache
  // What a "corrupt" blob gives: null, or an empty cache as real TensorRT is known to return.
  tbs_fake::BadCacheBytes badBytes = tbs_fake::BadCacheBytes::kNull;
  bool setTimingCache(nvinfer1::ITimingCache const& cache, bool ignoreMismatch) noexcept override {
    lastIgnoreMismatch = ignoreMismatch;
    auto const& c = dynamic_cast<FakeTimingCache const&>(cache);
    if (rejectNonEmpty && !c.keys().empty()) return false;
    // The device check TensorRT does unless told to ignore a mismatch.
    if (!ignoreMismatch && !c.tag().empty() && c.tag() != tag) return false;
    attached = &cache;
    return true;
  }
  nvinfer1::ITimingCache const* getTimingCache() const noexcept override { return attached; }
  nvinfer1::ITimingCache const* attached = nullptr;
  std::atomic<int> queryCalls{0};
  bool rejectNonEmpty = false;
  bool lastIgnoreMismatch = false;
};

struct Scratch : tbs_test::TempDir {
  Scratch() : TempDir("tbs-trt-cache") {}
};

void writeFile(std::string const& path, std::string const& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string readFile(std::string const& path) {
  tbs::CacheFileRead r = tbs::readCacheFile(path);
  return r.state == tbs::CacheFileRead::State::kRead ? r.bytes : "<" + r.error + ">";
}

std::set<std::string> keysInFile(std::string const& path) {
  std::set<std::string> keys;
  tbs_fake::parseCache(readFile(path), keys);
  return keys;
}

FakeTimingCache& fake(TimingCacheSession const& s) { return dynamic_cast<FakeTimingCache&>(*s.cache()); }

// A library as new as the headers (of this major); entry counts need queryKeys in both.
constexpr int32_t kLib = NV_TENSORRT_MAJOR == 10 ? 101601 : 110100;
constexpr bool kCanCount = NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 8;
int64_t counted(int64_t n) { return kCanCount ? n : -1; }

}  // namespace

TEST(missing_file_starts_empty_without_warning) {
  Scratch s;
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK(session.load(f, s.file("model.cache"), stats, err));
  CHECK_EQ(stats.path, s.file("model.cache"));
  CHECK_EQ(stats.entriesBefore, counted(0));
  CHECK_EQ(stats.warning, std::string(""));
  CHECK(f.lastIgnoreMismatch);  // attached as trtexec attaches: ignoreMismatch = true
}

TEST(existing_file_is_loaded_and_counted) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, std::string(kCacheMagic) + "a\nb\nc\n");
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK(session.load(f, path, stats, err));
  CHECK_EQ(stats.entriesBefore, counted(3));
  CHECK_EQ(session.entryCount(f), counted(3));
}

TEST(old_runtime_never_calls_query_keys) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, std::string(kCacheMagic) + "a\n");
  FakeFactory f;
  TimingCacheSession session(100700);  // libnvinfer < 10.8: no queryKeys in its vtable
  tbs::CacheStats stats;
  std::string err;
  CHECK(session.load(f, path, stats, err));
  fake(session).add("b");
  CHECK(session.save(f, stats));
  CHECK_EQ(stats.entriesBefore, int64_t{-1});
  CHECK_EQ(session.entryCount(f), int64_t{-1});
  CHECK_EQ(f.queryCalls.load(), 0);
  CHECK(keysInFile(path) == std::set<std::string>({"a", "b"}));
}

TEST(a_file_tensorrt_cannot_read_is_an_error_and_is_never_overwritten) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, "my notes, not a cache");
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK(!session.load(f, path, stats, err));
  CHECK_CONTAINS(err, "is not a timing cache");
  CHECK_CONTAINS(err, path);
  CHECK_CONTAINS(err, "left untouched");
  CHECK(session.cache() == nullptr);
  CHECK_EQ(readFile(path), std::string("my notes, not a cache"));
}

TEST(cache_refused_by_tensorrt_is_an_error) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, std::string(kCacheMagic) + "x\n");
  FakeFactory f;
  f.rejectNonEmpty = true;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK(!session.load(f, path, stats, err));
  CHECK_CONTAINS(err, "refused the timing cache");
}

// As it happens in a build: the builder adds this GPU's measurements to the very cache it was
// given, whose header still names the other device, so at save time the file's cache and the
// built one agree and would combine. The file must be found out at load and never written.
TEST(cache_of_another_device_is_used_reported_and_never_written) {
  Scratch s;
  std::string path = s.file("model.cache");
  std::string const foreign = std::string(kCacheMagic) + "tag 101601/dev9\nold\n";
  writeFile(path, foreign);
  FakeFactory f;
  f.tag = "101601/dev0";
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK_MSG(session.load(f, path, stats, err), err);
  CHECK(f.lastIgnoreMismatch);  // attached with ignoreMismatch as trtexec does: no TensorRT ERROR
  CHECK_CONTAINS(stats.warning, "made on another GPU or by another TensorRT version");
  CHECK_CONTAINS(stats.warning, "left byte for byte");
  // The build measures into the attached cache (still tagged dev9).
  auto* attached = dynamic_cast<FakeTimingCache*>(session.cache());
  CHECK(attached != nullptr);
  attached->add("new");
  CHECK(!session.save(f, stats));
  CHECK_EQ(readFile(path), foreign);
  CHECK_EQ(stats.deferredPath, std::string());
  CHECK(tbs::listPendingCacheFiles(path).empty());
  // A cache of another TensorRT version is not combined even when mismatches are ignored.
  std::unique_ptr<FakeTimingCache> mine(tbs_fake::createFakeCache(nullptr, 0, nullptr, "101601/dev0"));
  FakeTimingCache other({}, nullptr, "100300/dev0");
  CHECK(!mine->combine(other, true));
}

TEST(non_regular_path_is_an_error_before_the_build) {
  Scratch s;
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK(!session.load(f, s.path, stats, err));  // a directory, not a file
  CHECK_CONTAINS(err, "not a regular file");
}

TEST(a_fifo_at_the_cache_path_is_refused_without_blocking) {
  Scratch s;
  std::string fifo = s.file("cache.fifo");
  CHECK_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  // A plain open() would block here forever: no writer ever opens the FIFO.
  CHECK(!session.load(f, fifo, stats, err));
  CHECK_CONTAINS(err, "FIFO");
  CHECK_CONTAINS(err, "left untouched");
}

TEST(a_file_replaced_by_a_non_cache_during_the_build_is_not_overwritten) {
  Scratch s;
  std::string path = s.file("model.cache");
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK(session.load(f, path, stats, err));
  fake(session).add("measured");
  writeFile(path, "someone's notes");  // the user reused the name meanwhile
  CHECK(session.save(f, stats));       // kept, but aside
  CHECK_EQ(readFile(path), std::string("someone's notes"));
  CHECK_CONTAINS(stats.warning, "left untouched");
  CHECK_CONTAINS(stats.warning, "is not a timing cache that TensorRT");
  CHECK(keysInFile(stats.deferredPath) == std::set<std::string>({"measured"}));
  CHECK_EQ(stats.bytes, int64_t{-1});
}

TEST(held_lock_puts_entries_in_a_sidecar_that_the_next_save_folds_in) {
  Scratch s;
  std::string path = s.file("shared.cache");
  writeFile(path, std::string(kCacheMagic) + "old\n");
  setenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS", "100", 1);
  tbs::CacheStats sa;
  {
    FakeFactory f;
    TimingCacheSession a(kLib);
    std::string err;
    CHECK(a.load(f, path, sa, err));
    fake(a).add("from-a");
    tbs_test::LockHolder other(path + ".lock");  // another process, stuck mid-save
    CHECK(other.held());
    CHECK(a.save(f, sa));
  }
  CHECK_CONTAINS(sa.deferredPath, "shared.cache.pending-");
  CHECK_CONTAINS(sa.warning, sa.deferredPath);
  CHECK_EQ(sa.bytes, int64_t{-1});
  CHECK(keysInFile(path) == std::set<std::string>({"old"}));  // untouched while locked
  CHECK(keysInFile(sa.deferredPath).count("from-a") == 1);

  // The next build starts from the sidecar's entries too, and its save merges and removes it.
  FakeFactory f;
  TimingCacheSession b(kLib);
  tbs::CacheStats sb;
  std::string err;
  CHECK(b.load(f, path, sb, err));
  CHECK_EQ(sb.entriesBefore, counted(2));
  fake(b).add("from-b");
  CHECK(b.save(f, sb));
  unsetenv("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS");
  CHECK_EQ(sb.deferredPath, std::string(""));
  CHECK(!tbs_test::fileExists(sa.deferredPath));
  CHECK(keysInFile(path) == std::set<std::string>({"old", "from-a", "from-b"}));
  CHECK_EQ(sb.warning, std::string(""));
}

TEST(a_sidecar_of_another_tensorrt_version_is_kept_aside_not_mixed) {
  Scratch s;
  std::string path = s.file("shared.cache");
  writeFile(path, std::string(kCacheMagic) + "tag 101601/dev0\nold\n");
  std::string side = path + ".pending-1-0";
  writeFile(side, std::string(kCacheMagic) + "tag 100300/dev0\nfrom-10.3\n");
  FakeFactory f;
  f.tag = "101601/dev0";
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  CHECK(session.load(f, path, stats, err));
  fake(session).add("mine");
  CHECK(session.save(f, stats));
  CHECK(keysInFile(path) == std::set<std::string>({"old", "mine"}));
  CHECK(!tbs_test::fileExists(side));
  CHECK(keysInFile(side + ".rejected") == std::set<std::string>({"from-10.3"}));
  CHECK_CONTAINS(stats.warning, "could not be merged");
}

TEST(save_into_a_missing_directory_is_a_warning_not_a_crash) {
  Scratch s;
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  std::string path = s.file("missing/model.cache");
  CHECK(session.load(f, path, stats, err));
  fake(session).add("measured");
  CHECK(!session.save(f, stats));  // neither the file nor a sidecar can be written there
  CHECK_CONTAINS(stats.warning, "could not be kept either");
  CHECK_EQ(stats.bytes, int64_t{-1});
  CHECK_EQ(stats.deferredPath, std::string(""));
}

TEST(save_merges_entries_another_build_saved_meanwhile) {
  Scratch s;
  std::string path = s.file("shared.cache");
  writeFile(path, std::string(kCacheMagic) + "old\n");
  FakeFactory fa, fb;  // one builder config per build
  TimingCacheSession a(kLib), b(kLib);
  tbs::CacheStats sa, sb;
  std::string err;
  CHECK(a.load(fa, path, sa, err));
  CHECK(b.load(fb, path, sb, err));
  fake(a).add("from-a");
  fake(b).add("from-b");
  CHECK(a.save(fa, sa));
  CHECK(b.save(fb, sb));
  CHECK(keysInFile(path) == std::set<std::string>({"old", "from-a", "from-b"}));
  CHECK_EQ(sb.bytes, static_cast<int64_t>(readFile(path).size()));
  CHECK_EQ(sa.warning + sb.warning, std::string(""));
  for (auto const& e : s.list()) CHECK(e == "shared.cache" || e == "shared.cache.lock");  // no temp files
}

TEST(concurrent_savers_lose_no_entries) {
  Scratch s;
  std::string path = s.file("shared.cache");
  constexpr int kBuilds = 8;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kBuilds; ++i) {
    threads.emplace_back([&, i] {
      FakeFactory f;
      TimingCacheSession session(kLib);
      tbs::CacheStats stats;
      std::string err;
      if (!session.load(f, path, stats, err)) ++failures;
      for (int k = 0; k < 50; ++k) fake(session).add("b" + std::to_string(i) + "-" + std::to_string(k));
      if (!session.save(f, stats) || !stats.warning.empty()) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  CHECK_EQ(failures.load(), 0);
  CHECK_EQ(keysInFile(path).size(), size_t{kBuilds * 50});
}

// The not-negotiable rule, in both behaviours of createTimingCache for bad bytes: the file is
// byte-for-byte unchanged after the build, whatever the build measured.
TEST(an_unreadable_file_is_unchanged_whether_tensorrt_returns_null_or_an_empty_cache) {
  std::string const notes = "my notes, not a cache\n\x01\x02 binary tail";
  for (auto bad : {tbs_fake::BadCacheBytes::kNull, tbs_fake::BadCacheBytes::kEmptyCache}) {
    for (int32_t lib : {kLib, int32_t{100700}}) {  // with and without queryKeys
      Scratch s;
      std::string path = s.file("model.cache");
      writeFile(path, notes);
      FakeFactory f;
      f.badBytes = bad;
      TimingCacheSession session(lib);
      tbs::CacheStats stats;
      std::string err;
      bool loaded = session.load(f, path, stats, err);
      if (bad == tbs_fake::BadCacheBytes::kNull) {
        CHECK(!loaded);  // null: the build stops before it starts
        CHECK_CONTAINS(err, "left untouched");
      } else {
        CHECK_MSG(loaded, err);  // empty: the build goes on, but says the file is kept
        CHECK_CONTAINS(stats.warning, "is kept as it is");
        CHECK_CONTAINS(stats.warning, "cannot be proven that TensorRT read it");
        fake(session).add("measured-1");
        fake(session).add("measured-2");
        CHECK(session.save(f, stats));  // kept, in a sidecar
        CHECK_CONTAINS(stats.deferredPath, "model.cache.pending-");
        CHECK(keysInFile(stats.deferredPath) == std::set<std::string>({"measured-1", "measured-2"}));
        CHECK_EQ(stats.bytes, int64_t{-1});
        // A second build with the same file: still never replaced.
        FakeFactory f2;
        f2.badBytes = bad;
        TimingCacheSession again(lib);
        tbs::CacheStats stats2;
        CHECK(again.load(f2, path, stats2, err));
        fake(again).add("measured-3");
        CHECK(again.save(f2, stats2));
      }
      CHECK_EQ(readFile(path), notes);
    }
  }
}

// The proof accepts what TensorRT really read: a file with entries (10.8+: queryKeys; older:
// the same serialized size), and a genuine cache without entries (its size).
TEST(a_file_tensorrt_read_is_proven_and_replaced_by_the_merged_cache) {
  for (int32_t lib : {kLib, int32_t{100700}}) {
    for (std::string const& content : {std::string(kCacheMagic) + "a\nb\n", std::string(kCacheMagic)}) {
      Scratch s;
      std::string path = s.file("model.cache");
      writeFile(path, content);
      FakeFactory f;
      f.badBytes = tbs_fake::BadCacheBytes::kEmptyCache;
      TimingCacheSession session(lib);
      tbs::CacheStats stats;
      std::string err;
      CHECK_MSG(session.load(f, path, stats, err), err);
      CHECK_EQ(stats.warning, std::string(""));
      fake(session).add("new");
      CHECK(session.save(f, stats));
      CHECK_EQ(stats.deferredPath, std::string(""));
      CHECK(keysInFile(path).count("new") == 1);
    }
  }
}

// A cache whose re-serialization differs from the file (here: the file lists a key twice, which
// the cache keeps once) cannot be proven on a library without queryKeys: kept, never replaced.
TEST(without_query_keys_a_size_difference_keeps_the_file) {
  Scratch s;
  std::string path = s.file("model.cache");
  std::string const content = std::string(kCacheMagic) + "a\na\n";
  writeFile(path, content);
  FakeFactory f;
  TimingCacheSession old(100700);
  tbs::CacheStats stats;
  std::string err;
  CHECK_MSG(old.load(f, path, stats, err), err);
  CHECK_CONTAINS(stats.warning, "is kept as it is");
  fake(old).add("new");
  CHECK(old.save(f, stats));
  CHECK_EQ(readFile(path), content);
  if (kCanCount) {
    // 10.8+: the loaded cache has an entry, which proves the read.
    FakeFactory g;
    TimingCacheSession current(kLib);
    tbs::CacheStats st;
    CHECK_MSG(current.load(g, path, st, err), err);
    CHECK_EQ(st.warning, std::string(""));
  }
}

TEST_MAIN()
