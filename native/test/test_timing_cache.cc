// The simulated timing cache: warm builds hit and run faster; a corrupt file means a warning and
// a fresh cache; concurrent builds sharing one file lose no entries.
#include <thread>

#include "check.h"
#include "sim/sim_timing_cache.h"
#include "sim_harness.h"

using namespace tbs;
using namespace tbs_test;

namespace {
std::string cacheJson(EventLog& log) {
  auto const* c = log.last(EvType::kCacheStats);
  return c ? c->text : "";
}
int64_t field(std::string const& json, std::string const& key) {
  auto p = json.find("\"" + key + "\":");
  return p == std::string::npos ? -999 : std::stoll(json.substr(p + key.size() + 3));
}
}  // namespace

TEST(second_build_hits_and_is_faster) {
  TempDir dir;
  auto req = simRequest(dir, "m", 16, 21, 400, 4);
  req.timingCachePath = dir.file("cache.bin");
  auto cold = runSim(req);
  auto warm = runSim(req);
  CHECK(cold.outcome.status == BuildOutcome::Status::kSucceeded);
  CHECK(warm.outcome.status == BuildOutcome::Status::kSucceeded);
  std::string c = cacheJson(*cold.log), w = cacheJson(*warm.log);
  CHECK_EQ(field(c, "entriesBefore"), 0);
  CHECK(field(c, "entriesAfter") > 0);
  CHECK_EQ(field(c, "hits"), 0);
  CHECK_EQ(field(c, "misses"), field(c, "entriesAfter"));
  CHECK_EQ(field(c, "added"), field(c, "entriesAfter"));
  CHECK_EQ(field(w, "entriesBefore"), field(c, "entriesAfter"));
  CHECK_EQ(field(w, "hits"), field(c, "misses"));
  CHECK_EQ(field(w, "misses"), 0);
  CHECK_EQ(field(w, "added"), 0);
  CHECK(field(w, "bytes") > 16);
  // The cache stats also travel in build.finished.
  CHECK(warm.log->last(EvType::kFinished)->text.find("\"cache\":{") != std::string::npos);
  CHECK_MSG(warm.wallMs < cold.wallMs * 0.6, "cold " << cold.wallMs << " ms, warm " << warm.wallMs << " ms");
  // Warm builds skip measuring: far fewer phases.
  CHECK(warm.log->count(EvType::kPhaseStart) * 3 < cold.log->count(EvType::kPhaseStart));
  // Different precision: different keys, so misses again.
  req.precision = {"fp16"};
  auto fp16 = runSim(req);
  CHECK_EQ(field(cacheJson(*fp16.log), "hits"), 0);
}

TEST(corrupt_cache_warns_and_starts_fresh) {
  TempDir dir;
  auto req = simRequest(dir, "c", 8, 3, 20, 2);
  req.timingCachePath = dir.file("cache.bin");
  for (std::string garbage : {std::string("not a cache at all"), std::string("TBSSIMTC\x01\0\0\0\xff\xff\0\0", 16) + std::string(40, 'x'), std::string()}) {
    CHECK(atomicWriteFile(req.timingCachePath, garbage).ok);
    auto r = runSim(req);
    CHECK(r.outcome.status == BuildOutcome::Status::kSucceeded);
    std::string c = cacheJson(*r.log);
    CHECK_MSG(c.find("\"warning\":\"timing cache file " + req.timingCachePath + " is corrupt") != std::string::npos, c);
    CHECK_EQ(field(c, "entriesBefore"), 0);
    CHECK(field(c, "entriesAfter") > 0);
    bool warned = false;
    for (auto const& e : r.log->events) warned |= e.type == EvType::kLog && e.a == int64_t(Severity::kWarning) && e.text.find("is corrupt") != std::string::npos;
    CHECK(warned);
    CHECK(sim::loadTimingCache(req.timingCachePath).warning.empty());  // rewritten valid
  }
  // A flipped byte is caught by the checksum.
  std::string bytes = readFile(req.timingCachePath);
  bytes[20] ^= 0x40;
  CHECK(atomicWriteFile(req.timingCachePath, bytes).ok);
  CHECK(sim::loadTimingCache(req.timingCachePath).warning.find("checksum") != std::string::npos);
  // Wrong version.
  bytes = readFile(req.timingCachePath);
  bytes[20] ^= 0x40;
  bytes[8] = 9;
  CHECK(atomicWriteFile(req.timingCachePath, bytes).ok);
  CHECK(sim::loadTimingCache(req.timingCachePath).warning.find("unsupported version 9") != std::string::npos);
}

TEST(concurrent_builds_sharing_one_file_lose_no_entries) {
  TempDir dir;
  std::string cache = dir.file("shared.bin");
  // Four different models (different seeds/layers) build at the same time against one file.
  std::vector<BuildRequest> reqs;
  for (int i = 0; i < 4; ++i) {
    auto r = simRequest(dir, "model" + std::to_string(i), 6 + i, 100 + i, 30, 2);
    r.layers = layersOf(6 + i, 100 + i);
    for (auto& l : r.layers) l.name = "m" + std::to_string(i) + "_" + l.name;
    r.timingCachePath = cache;
    reqs.push_back(r);
  }
  std::vector<SimRunResult> results(reqs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < reqs.size(); ++i) threads.emplace_back([&, i] { results[i] = runSim(reqs[i]); });
  for (auto& t : threads) t.join();
  int64_t totalMisses = 0;
  for (auto& r : results) {
    CHECK(r.outcome.status == BuildOutcome::Status::kSucceeded);
    totalMisses += field(cacheJson(*r.log), "misses");
  }
  auto loaded = sim::loadTimingCache(cache);
  CHECK(loaded.warning.empty());
  CHECK_EQ(static_cast<int64_t>(loaded.entries.size()), totalMisses);
  // And a direct hammer of merge-and-save from 8 threads with disjoint entries.
  std::string hammer = dir.file("hammer.bin");
  std::vector<std::thread> savers;
  for (int t = 0; t < 8; ++t) {
    savers.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        sim::CacheEntries mine;
        for (int k = 0; k < 5; ++k) mine[sim::makeCacheKey(std::to_string(t) + "/" + std::to_string(round) + "/" + std::to_string(k))] = {1, 2.0};
        CHECK(sim::mergeAndSaveTimingCache(hammer, mine).ok);
      }
    });
  }
  for (auto& t : savers) t.join();
  CHECK_EQ(sim::loadTimingCache(hammer).entries.size(), 8u * 10 * 5);
}

TEST(missing_cache_file_is_not_a_warning) {
  TempDir dir;
  auto req = simRequest(dir, "n", 5, 3, 5, 2);
  req.timingCachePath = dir.file("new.bin");
  auto r = runSim(req);
  std::string c = cacheJson(*r.log);
  CHECK(c.find("warning") == std::string::npos);
  CHECK_EQ(field(c, "entriesBefore"), 0);
  CHECK(fileExists(req.timingCachePath));
}

TEST(cancelled_build_does_not_save_the_cache) {
  TempDir dir;
  auto req = simRequest(dir, "x", 10, 3, 300, 2);
  req.timingCachePath = dir.file("c.bin");
  auto r = runSim(req, 40);
  CHECK(r.outcome.status == BuildOutcome::Status::kCancelled);
  CHECK(!fileExists(req.timingCachePath));
  CHECK_EQ(field(cacheJson(*r.log), "added"), 0);
}

TEST_MAIN()
