// The simulated timing cache: warm builds hit and run faster; a corrupt file means a warning, a
// fresh cache and a kept copy; a file that is not a cache fails the build before it starts and
// is never replaced; concurrent builds sharing one file lose no entries, not even when another
// process holds the lock; a cancelled build keeps what it measured.
#include <sys/stat.h>

#include <cstdlib>
#include <thread>

#include "check.h"
#include "lock_holder.h"
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
std::string strField(std::string const& json, std::string const& key) {
  auto p = json.find("\"" + key + "\":\"");
  if (p == std::string::npos) return "";
  p += key.size() + 4;
  return json.substr(p, json.find('"', p) - p);
}
size_t indexOf(EventLog& log, EvType type) {
  for (size_t i = 0; i < log.events.size(); ++i) {
    if (log.events[i].type == type) return i;
  }
  return SIZE_MAX;
}
int64_t phaseStarts(EventLog& log, std::string const& name) {
  int64_t n = 0;
  for (auto const& e : log.events) n += e.type == EvType::kPhaseStart && log.nameOf(e.c) == name;
  return n;
}
// Sets an environment variable for one scope (the store reads the lock timeout from it).
struct ScopedEnv {
  ScopedEnv(char const* name, char const* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  char const* name_;
};
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

TEST(corrupt_cache_warns_starts_fresh_and_is_kept_aside) {
  TempDir dir;
  auto req = simRequest(dir, "c", 8, 3, 20, 2);
  req.timingCachePath = dir.file("cache.bin");
  std::string valid = sim::serializeTimingCache({{sim::makeCacheKey("k"), {1, 2.0}}});
  std::string flipped = valid;
  flipped[20] ^= 0x40;
  std::string version = valid;
  version[8] = 9;
  struct Case {
    std::string bytes, why;
  };
  for (auto const& c :
       {Case{std::string("TBSSIMTC\x01\0\0\0\xff\xff\0\0", 16) + std::string(40, 'x'), "size 56 does not match 65535 entries"},
        Case{"TBSSIMTC", "file is too short"}, Case{flipped, "checksum mismatch"}, Case{version, "unsupported version 9"}}) {
    ::unlink((req.timingCachePath + ".corrupt").c_str());
    CHECK(atomicWriteFile(req.timingCachePath, c.bytes).ok);
    auto r = runSim(req);
    CHECK(r.outcome.status == BuildOutcome::Status::kSucceeded);
    std::string j = cacheJson(*r.log);
    CHECK_CONTAINS(j, "\"warning\":\"timing cache file " + req.timingCachePath + " is corrupt (" + c.why);
    CHECK_CONTAINS(j, "kept as " + req.timingCachePath + ".corrupt");
    CHECK_EQ(field(j, "entriesBefore"), 0);
    CHECK(field(j, "entriesAfter") > 0);
    bool warned = false;
    for (auto const& e : r.log->events)
      warned |= e.type == EvType::kLog && e.a == int64_t(Severity::kWarning) && e.text.find("is corrupt") != std::string::npos;
    CHECK(warned);
    // Not silently destroyed: the damaged bytes are still there, beside the new cache.
    CHECK_EQ(readFile(req.timingCachePath + ".corrupt"), c.bytes);
    auto now = sim::loadTimingCache(req.timingCachePath);
    CHECK(now.warning.empty() && now.error.empty());
    CHECK_EQ(static_cast<int64_t>(now.entries.size()), field(j, "entriesAfter"));
  }
}

TEST(empty_cache_file_is_an_empty_cache) {
  TempDir dir;
  auto req = simRequest(dir, "e", 6, 3, 20, 2);
  req.timingCachePath = dir.file("cache.bin");
  CHECK(atomicWriteFile(req.timingCachePath, std::string()).ok);
  auto r = runSim(req);
  CHECK(r.outcome.status == BuildOutcome::Status::kSucceeded);
  std::string j = cacheJson(*r.log);
  CHECK(j.find("warning") == std::string::npos);
  CHECK(field(j, "entriesAfter") > 0);
  CHECK(!fileExists(req.timingCachePath + ".corrupt"));
}

TEST(a_path_that_is_not_a_cache_fails_before_the_build_and_is_never_replaced) {
  TempDir dir;
  auto req = simRequest(dir, "f", 6, 3, 200, 2);
  struct Case {
    std::string name, bytes, message;
  };
  std::string model = std::string(
                          "\x08\x08\x12\x07pytorch\x1a\x03"
                          "2.1",
                          14) +
                      std::string(64, '\0');
  for (auto const& c :
       {Case{"model.onnx", model, "is not a simulated timing cache"},
        Case{"config.json", "{\"timingCache\": true}\n", "is not a simulated timing cache"},
        Case{"old.engine", "TRT-BUILD-STUDIO SIMULATED ENGINE - NOT A TENSORRT ENGINE\n{}", "is not a simulated timing cache"}}) {
    req.timingCachePath = dir.file(c.name);
    CHECK(atomicWriteFile(req.timingCachePath, c.bytes).ok);
    auto r = runSim(req);
    CHECK(r.outcome.status == BuildOutcome::Status::kFailed);
    CHECK_CONTAINS(r.outcome.error, "timing cache " + req.timingCachePath + " " + c.message);
    CHECK_CONTAINS(r.outcome.error, "refusing to use or replace it");
    CHECK_EQ(r.log->count(EvType::kPhaseStart), 0u);  // before any work
    CHECK_EQ(readFile(req.timingCachePath), c.bytes);
    CHECK(!fileExists(req.timingCachePath + ".lock"));
    CHECK(!fileExists(req.outputPath));
  }
  // Not regular files: refused at once (a FIFO used to hang the build forever).
  CHECK(::mkfifo(dir.file("fifo").c_str(), 0644) == 0);
  CHECK(::symlink(dir.file("fifo").c_str(), dir.file("link-to-fifo").c_str()) == 0);
  CHECK(::mkdir(dir.file("adir").c_str(), 0755) == 0);
  for (auto const& [name, message] : {std::pair<std::string, std::string>{"fifo", "is a FIFO (named pipe), not a regular file"},
                                      {"link-to-fifo", "is a symbolic link to a FIFO (named pipe)"},
                                      {"adir", "is a directory"}}) {
    req.timingCachePath = dir.file(name);
    auto r = runSim(req);
    CHECK(r.outcome.status == BuildOutcome::Status::kFailed);
    CHECK_CONTAINS(r.outcome.error, "cannot use the timing cache: " + req.timingCachePath + " " + message);
    CHECK_MSG(r.wallMs < 2000, r.wallMs << " ms");
    CHECK_EQ(r.log->count(EvType::kPhaseStart), 0u);
  }
  struct stat st{};
  CHECK(::lstat(dir.file("fifo").c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
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
        for (int k = 0; k < 5; ++k)
          mine[sim::makeCacheKey(std::to_string(t) + "/" + std::to_string(round) + "/" + std::to_string(k))] = {1, 2.0};
        CHECK(sim::mergeAndSaveTimingCache(hammer, mine).outcome == CacheSaveResult::Outcome::kSaved);
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

// Issue: a build cancelled after measuring hundreds of tactics saved none of them.
TEST(cancelled_build_keeps_what_it_measured_and_the_next_build_starts_from_it) {
  TempDir dir;
  auto req = simRequest(dir, "x", 24, 3, 1500, 2);
  req.timingCachePath = dir.file("c.bin");
  auto cold = runSim([&] {  // no cache: the whole plan, measured
    auto r = req;
    r.timingCachePath.clear();
    r.outputPath = dir.file("cold.engine");
    return r;
  }());
  auto stopped = runSim(req, 700);
  CHECK(stopped.outcome.status == BuildOutcome::Status::kCancelled);
  std::string j = cacheJson(*stopped.log);
  CHECK_CONTAINS(j, "\"savedAfterCancel\":true");
  int64_t kept = field(j, "added");
  CHECK_MSG(kept > 0, j);
  CHECK_EQ(field(j, "entriesBefore"), 0);
  CHECK_EQ(field(j, "entriesAfter"), kept);
  // Entries are whole measurements only: fewer than the full build's.
  auto full = runSim([&] {
    auto r = req;
    r.timingCachePath = dir.file("full.bin");
    r.outputPath = dir.file("full.engine");
    return r;
  }());
  CHECK_MSG(kept < field(cacheJson(*full.log), "entriesAfter"), j);
  CHECK_EQ(static_cast<int64_t>(sim::loadTimingCache(req.timingCachePath).entries.size()), kept);
  bool said = false;
  for (auto const& e : stopped.log->events) {
    said |= e.type == EvType::kLog &&
            e.text.find("Build stopped: kept " + std::to_string(kept) + " measured timing-cache entries") != std::string::npos;
  }
  CHECK(said);
  // The pipeline's guarantee holds: cache.stats comes before build.finished.
  CHECK(indexOf(*stopped.log, EvType::kCacheStats) < indexOf(*stopped.log, EvType::kFinished));
  CHECK_CONTAINS(stopped.log->last(EvType::kFinished)->text, "\"savedAfterCancel\":true");
  CHECK(stopped.outcome.outputPath.empty() && !fileExists(req.outputPath));

  auto next = runSim(req);
  CHECK(next.outcome.status == BuildOutcome::Status::kSucceeded);
  std::string n = cacheJson(*next.log);
  CHECK_EQ(field(n, "entriesBefore"), kept);
  CHECK_EQ(field(n, "hits"), kept);
  CHECK(n.find("savedAfterCancel") == std::string::npos);
  // The warm part is skipped: fewer tactic measurements than a cold build of the same plan.
  int64_t measuredCold = phaseStarts(*cold.log, "Measuring tactic time");
  int64_t measuredNext = phaseStarts(*next.log, "Measuring tactic time");
  CHECK_MSG(measuredCold > 0 && measuredNext < measuredCold, measuredNext << " vs " << measuredCold);
}

TEST(a_time_budget_keeps_progress_too) {
  TempDir dir;
  auto req = simRequest(dir, "t", 24, 4, 1500, 2);
  req.timingCachePath = dir.file("t.bin");
  SimRunResult r;
  PipelineOptions po;
  po.flushIntervalMs = 5;
  ProgressPipeline pipeline(po, r.log->consumer());
  pipeline.startFlusher();
  sim::SimBackend backend;
  announceBuild(backend, req, pipeline);
  std::thread budget([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    pipeline.requestCancel(CancelReason::kTimeout);
  });
  r.outcome = runBuild(backend, req, pipeline);
  budget.join();
  CHECK(r.outcome.status == BuildOutcome::Status::kCancelled);
  std::string j = cacheJson(*r.log);
  CHECK_CONTAINS(j, "\"savedAfterCancel\":true");
  CHECK(field(j, "added") > 0);
  CHECK_EQ(static_cast<int64_t>(sim::loadTimingCache(req.timingCachePath).entries.size()), field(j, "added"));
}

TEST(a_build_stopped_before_measuring_anything_leaves_the_cache_alone) {
  TempDir dir;
  auto req = simRequest(dir, "z", 10, 3, 300, 2);
  req.timingCachePath = dir.file("c.bin");
  auto r = runSim(req, 0);
  CHECK(r.outcome.status == BuildOutcome::Status::kCancelled);
  CHECK(!fileExists(req.timingCachePath));
  std::string j = cacheJson(*r.log);
  CHECK_EQ(field(j, "added"), 0);
  CHECK(j.find("savedAfterCancel") == std::string::npos);
}

TEST(a_warm_build_does_not_wait_for_a_held_lock) {
  TempDir dir;
  auto req = simRequest(dir, "w", 8, 5, 40, 2);
  req.timingCachePath = dir.file("warm.bin");
  CHECK(runSim(req).outcome.status == BuildOutcome::Status::kSucceeded);
  LockHolder other(req.timingCachePath + ".lock");
  CHECK(other.held());
  auto t0 = std::chrono::steady_clock::now();
  auto warm = runSim(req);  // the 30 s default lock timeout applies to builds with new entries
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(warm.outcome.status == BuildOutcome::Status::kSucceeded);
  CHECK_MSG(ms < 5000, ms << " ms");
  std::string j = cacheJson(*warm.log);
  CHECK_EQ(field(j, "misses"), 0);
  CHECK_EQ(field(j, "added"), 0);
  CHECK(j.find("warning") == std::string::npos);
  CHECK(j.find("deferredPath") == std::string::npos);
}

// Issue: a held lock made the build give up saving after 30 s; hundreds of entries were dropped.
TEST(held_lock_defers_to_a_sidecar_and_the_next_build_merges_it) {
  TempDir dir;
  std::string cache = dir.file("shared.bin");
  ScopedEnv quick("TBS_TIMING_CACHE_LOCK_TIMEOUT_MS", "300");
  auto a = simRequest(dir, "a", 10, 11, 40, 2);
  a.timingCachePath = cache;
  auto b = simRequest(dir, "b", 9, 12, 40, 2);
  b.layers = layersOf(9, 12);
  for (auto& l : b.layers) l.name = "b_" + l.name;
  b.timingCachePath = cache;

  std::string ja;
  {
    LockHolder other(cache + ".lock");
    CHECK(other.held());
    auto ra = runSim(a);
    CHECK(ra.outcome.status == BuildOutcome::Status::kSucceeded);  // the engine is still written
    ja = cacheJson(*ra.log);
  }
  std::string sidecar = strField(ja, "deferredPath");
  CHECK_MSG(sidecar.rfind(cache + ".pending-", 0) == 0, ja);
  CHECK_CONTAINS(ja, "timed out after 300 ms");
  CHECK(!fileExists(cache));  // nothing was written to the cache without the lock
  int64_t measuredA = field(ja, "misses");
  CHECK(measuredA > 0);
  CHECK_EQ(field(ja, "entriesAfter"), measuredA);  // what the next build will start from
  CHECK_EQ(static_cast<int64_t>(sim::loadTimingCache(cache).entries.size()), measuredA);

  auto rb = runSim(b);
  CHECK(rb.outcome.status == BuildOutcome::Status::kSucceeded);
  std::string jb = cacheJson(*rb.log);
  CHECK_EQ(field(jb, "entriesBefore"), measuredA);  // started from the sidecar's entries
  int64_t measuredB = field(jb, "misses");
  CHECK(measuredB > 0);
  CHECK_EQ(field(jb, "entriesAfter"), measuredA + measuredB);
  CHECK(jb.find("deferredPath") == std::string::npos);
  CHECK(!fileExists(sidecar));  // folded in, then removed
  auto onDisk = readCacheFile(cache);
  auto parsed = sim::parseTimingCache(onDisk.bytes);
  CHECK_EQ(static_cast<int64_t>(parsed.entries.size()), measuredA + measuredB);
  // And A's build now hits everything it measured.
  auto again = runSim(a);
  CHECK_EQ(field(cacheJson(*again.log), "misses"), 0);
}

TEST_MAIN()
