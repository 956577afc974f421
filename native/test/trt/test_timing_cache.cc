// TimingCacheSession with the fake ITimingCache / IHostMemory objects of fake_objects.h.
// What this cannot show: how a real libnvinfer reacts to a corrupt or foreign cache blob (we
// handle both "null from createTimingCache" and "false from setTimingCache").
#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
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
    return tbs_fake::createFakeCache(blob, size, &queryCalls);  // null for a "corrupt" blob
  }
  bool setTimingCache(nvinfer1::ITimingCache const& cache, bool ignoreMismatch) noexcept override {
    lastIgnoreMismatch = ignoreMismatch;
    auto const& c = dynamic_cast<FakeTimingCache const&>(cache);
    if (rejectNonEmpty && !c.keys().empty()) return false;
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

}  // namespace

TEST(missing_file_starts_empty_without_warning) {
  Scratch s;
  FakeFactory f;
  TimingCacheSession session(/*canQueryKeys=*/true);
  tbs::CacheStats stats;
  CHECK(session.load(f, s.file("model.cache"), stats));
  CHECK_EQ(stats.path, s.file("model.cache"));
  CHECK_EQ(stats.entriesBefore, int64_t{0});
  CHECK_EQ(stats.warning, std::string(""));
  CHECK(f.lastIgnoreMismatch);  // always load ignoring device mismatch, as NVIDIA's tools do
}

TEST(existing_file_is_loaded_and_counted) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, std::string(kCacheMagic) + "a\nb\nc\n");
  FakeFactory f;
  TimingCacheSession session(true);
  tbs::CacheStats stats;
  CHECK(session.load(f, path, stats));
  CHECK_EQ(stats.entriesBefore, int64_t{3});
  CHECK_EQ(session.entryCount(f), int64_t{3});
}

TEST(old_runtime_never_calls_query_keys) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, std::string(kCacheMagic) + "a\n");
  FakeFactory f;
  TimingCacheSession session(/*canQueryKeys=*/false);  // libnvinfer < 10.8: no queryKeys in its vtable
  tbs::CacheStats stats;
  CHECK(session.load(f, path, stats));
  fake(session).add("b");
  CHECK(session.save(f, stats));
  CHECK_EQ(stats.entriesBefore, int64_t{-1});
  CHECK_EQ(session.entryCount(f), int64_t{-1});
  CHECK_EQ(f.queryCalls.load(), 0);
  CHECK(keysInFile(path) == std::set<std::string>({"a", "b"}));
}

TEST(corrupt_file_warns_starts_empty_and_is_replaced_on_save) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, "garbage, not a cache");
  FakeFactory f;
  TimingCacheSession session(true);
  tbs::CacheStats stats;
  CHECK(session.load(f, path, stats));
  CHECK_CONTAINS(stats.warning, "corrupt");
  CHECK_CONTAINS(stats.warning, path);
  CHECK_EQ(stats.entriesBefore, int64_t{0});
  fake(session).add("fresh");
  CHECK(session.save(f, stats));
  CHECK_CONTAINS(stats.warning, "could not be merged");
  CHECK(keysInFile(path) == std::set<std::string>({"fresh"}));
}

TEST(cache_rejected_by_tensorrt_falls_back_to_empty) {
  Scratch s;
  std::string path = s.file("model.cache");
  writeFile(path, std::string(kCacheMagic) + "from-another-version\n");
  FakeFactory f;
  f.rejectNonEmpty = true;
  TimingCacheSession session(true);
  tbs::CacheStats stats;
  CHECK(session.load(f, path, stats));
  CHECK_CONTAINS(stats.warning, "another TensorRT version");
  CHECK_EQ(stats.entriesBefore, int64_t{0});
}

TEST(unreadable_path_warns_and_builds_with_an_empty_cache) {
  Scratch s;
  FakeFactory f;
  TimingCacheSession session(true);
  tbs::CacheStats stats;
  CHECK(session.load(f, s.path, stats));  // a directory, not a file
  CHECK_CONTAINS(stats.warning, "not a regular file");
  CHECK_EQ(stats.entriesBefore, int64_t{0});
}

TEST(save_into_a_missing_directory_is_a_warning_not_a_crash) {
  Scratch s;
  FakeFactory f;
  TimingCacheSession session(true);
  tbs::CacheStats stats;
  std::string path = s.file("missing/model.cache");
  CHECK(session.load(f, path, stats));
  CHECK(!session.save(f, stats));
  CHECK_CONTAINS(stats.warning, "timing cache not saved");
  CHECK_EQ(stats.bytes, int64_t{-1});
}

TEST(save_merges_entries_another_build_saved_meanwhile) {
  Scratch s;
  std::string path = s.file("shared.cache");
  writeFile(path, std::string(kCacheMagic) + "old\n");
  FakeFactory fa, fb;  // one builder config per build
  TimingCacheSession a(true), b(true);
  tbs::CacheStats sa, sb;
  CHECK(a.load(fa, path, sa));
  CHECK(b.load(fb, path, sb));
  fake(a).add("from-a");
  fake(b).add("from-b");
  CHECK(a.save(fa, sa));
  CHECK(b.save(fb, sb));
  CHECK(keysInFile(path) == std::set<std::string>({"old", "from-a", "from-b"}));
  std::string bytes, err;
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
      TimingCacheSession session(true);
      tbs::CacheStats stats;
      if (!session.load(f, path, stats)) ++failures;
      for (int k = 0; k < 50; ++k) fake(session).add("b" + std::to_string(i) + "-" + std::to_string(k));
      if (!session.save(f, stats) || !stats.warning.empty()) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  CHECK_EQ(failures.load(), 0);
  CHECK_EQ(keysInFile(path).size(), size_t{kBuilds * 50});
}

TEST_MAIN()
