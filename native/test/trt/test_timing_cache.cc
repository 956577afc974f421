// TimingCacheSession with the fake ITimingCache / IHostMemory objects of fake_objects.h.
// What this cannot show: how a real libnvinfer reacts to a corrupt or foreign cache blob (we
// handle both "null from createTimingCache" and "false from setTimingCache").
#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <memory>
#include <thread>

#include "check.h"
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
    return tbs_fake::createFakeCache(blob, size, &queryCalls, tag);  // null for a "corrupt" blob
  }
  std::string tag;  // this "device": "<version>/<device>"; empty matches any cache
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

std::set<std::string> keysInFile(std::string const& path) {
  std::string bytes, err;
  std::set<std::string> keys;
  if (readWholeFile(path, bytes, err) == ReadStatus::kOk) tbs_fake::parseCache(bytes, keys);
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
  CHECK(!f.lastIgnoreMismatch);  // a cache of this device is attached strictly
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
  std::string bytes;
  CHECK(readWholeFile(path, bytes, err) == ReadStatus::kOk);
  CHECK_EQ(bytes, std::string("my notes, not a cache"));
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

TEST(cache_of_another_device_is_used_reported_and_never_mixed_on_save) {
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
  CHECK(f.lastIgnoreMismatch);  // strict failed, then attached with ignoreMismatch as trtexec does
  CHECK_CONTAINS(stats.warning, "another GPU or TensorRT version");
  // The build's own cache (this device) would be mixed into the other device's file: refused.
  std::unique_ptr<FakeTimingCache> mine(tbs_fake::createFakeCache(nullptr, 0, nullptr, "101601/dev0"));
  mine->add("new");
  f.attached = mine.get();
  CHECK(!session.save(f, stats));
  CHECK_CONTAINS(stats.warning, "refuses to mix them");
  std::string bytes;
  CHECK(readWholeFile(path, bytes, err) == ReadStatus::kOk);
  CHECK_EQ(bytes, foreign);
  // A cache of another TensorRT version is not combined even when mismatches are ignored.
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

TEST(save_into_a_missing_directory_is_a_warning_not_a_crash) {
  Scratch s;
  FakeFactory f;
  TimingCacheSession session(kLib);
  tbs::CacheStats stats;
  std::string err;
  std::string path = s.file("missing/model.cache");
  CHECK(session.load(f, path, stats, err));
  CHECK(!session.save(f, stats));
  CHECK_CONTAINS(stats.warning, "timing cache not saved");
  CHECK_EQ(stats.bytes, int64_t{-1});
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
  std::string bytes;
  CHECK(readWholeFile(path, bytes, err) == ReadStatus::kOk);
  CHECK_EQ(sb.bytes, static_cast<int64_t>(bytes.size()));
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

TEST_MAIN()
