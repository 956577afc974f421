#include "sim_backend.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../core/atomic_file.h"
#include "../core/clock.h"
#include "../core/json_writer.h"
#include "sim_memory.h"
#include "sim_build_routes.h"
#include "sim_plan.h"
#include "sim_plugins.h"
#include "sim_precision.h"
#include "sim_timing_cache.h"

namespace tbs::sim {
namespace {

// Work is measured in units so a build can be paced to the requested wall time: one unit is one
// "Measuring tactic time" step of a cold build; the rest is scaled relative to it.
constexpr double kMeasureUnit = 1.0;
constexpr double kEvaluateUnit = 0.1;
constexpr double kEvaluateHitUnit = 0.05;
constexpr double kLightUnit = 0.2;
// Real builds spend long stretches without any callback; 20% of the target goes to three gaps.
constexpr double kGapShare[3] = {0.07, 0.08, 0.05};
// Waiting for the cache lock: a finished build can afford the store's usual wait; a cancelled
// one must end promptly (the service kills a worker that has not ended some seconds after a
// Stop), and loses nothing by waiting less: without the lock its entries go to a sidecar.
constexpr int kCacheLockTimeoutMs = 30000;
constexpr int kCancelledCacheLockTimeoutMs = 2000;
// Verbose lines one simulated build may log. A real verbose TensorRT build logs millions; the
// simulator logs one per tactic, layer clone and reformat cost, stopping here so that a huge model
// cannot make a test or a demo log without end. Big enough to exercise the surfaces' caps.
constexpr int64_t kMaxVerboseLines = 200000;

// Share of simMemoryBytes held through the build, after the shape of a real build's host memory:
// the network is copied and optimised, tactic selection peaks, serialization holds less.
constexpr double kMemCloneEnd = 0.15;
constexpr double kMemPreparing = 0.25;
constexpr double kMemOptimizing = 0.35;
constexpr double kMemTacticsStart = 0.4;
constexpr double kMemRefit = 0.6;
constexpr double kMemSerializing = 0.5;

char const* const kBuilding = "Building engine";
char const* const kCloning = "Cloning network graph";
char const* const kPreparing = "Preparing graph for optimization";
char const* const kSubgraph = "Building engine from subgraph";
char const* const kOptimizing = "Optimizing graph";
char const* const kProfile = "Computing profile costs";
char const* const kTactics = "Timing tactics";
char const* const kGraphNodes = "Timing graph nodes";
char const* const kEvaluating = "Evaluating tactic times";
char const* const kMeasuring = "Measuring tactic time";
char const* const kReformats = "Timing tensor reformats";
char const* const kReformatCosts = "Computing reformatting costs";
char const* const kRefit = "Determining refit engines";

class SimRun {
 public:
  SimRun(BuildRequest const& request, ProgressSink& sink)
      : req_(request), sink_(sink), plan_(makeSimPlan(request)), memory_(request.simMemoryBytes) {}

  BuildOutcome run();

 private:
  // Sleeps so that the work done so far by this thread takes the share of the target time it
  // should; sleeping through the sink means Stop still wakes it at once.
  struct Pacer {
    explicit Pacer(SimRun& r) : run(r) {}
    void spend(double units) {
      owedMs += units * run.msPerUnit_;
      double ahead = owedMs - nsToMs(monoNowNs() - startNs);
      if (ahead >= 1.0) run.sink_.waitForCancel(ahead);
    }
    // After a silent gap or a parallel section this thread did not pace, start afresh instead of
    // racing to "catch up" the time spent elsewhere.
    void rebase() {
      startNs = monoNowNs();
      owedMs = 0;
    }
    SimRun& run;
    int64_t startNs = monoNowNs();
    double owedMs = 0;
  };

  class Phase {
   public:
    Phase(SimRun& run, char const* name, char const* parent, int32_t nbSteps) : run_(run), name_(name) {
      run_.sink_.phaseStart(name, parent, nbSteps);
      run_.onPhaseStart(name);
    }
    ~Phase() { run_.sink_.phaseFinish(name_); }
    Phase(Phase const&) = delete;
    Phase& operator=(Phase const&) = delete;

   private:
    SimRun& run_;
    char const* name_;
  };

  bool stopped() const { return stop_.load(std::memory_order_acquire); }
  bool step(char const* phase, int32_t i, Pacer& pacer, double units) {
    if (stopped()) return false;
    pacer.spend(units);
    if (stopped()) return false;
    if (!sink_.stepComplete(phase, i)) {
      stop_.store(true, std::memory_order_release);
      return false;
    }
    return true;
  }
  void gap(double share, Pacer& pacer) {
    if (!stopped()) sink_.waitForCancel(targetMs_ * share);
    pacer.rebase();
  }

  // Logs a VERBOSE line when the request forwards them (verboseLog, or inferCacheMisses, which
  // needs them on TensorRT), as the TensorRT logger does; at most kMaxVerboseLines per build.
  void verbose(std::string const& msg);
  // Holds `fraction` of simMemoryBytes from here on (SimMemory); a refused allocation fails the
  // build with an "out of memory" error, as a TensorRT allocation failure would.
  void holdMemory(double fraction);
  void onPhaseStart(char const* name);
  void pinnedMiss(std::string const& what);
  void computePacing();
  void loadCache();
  void saveCache(CacheStats& stats, bool cancelled);
  void timeGraphNodes();
  void timeGroup(size_t index, Pacer& pacer);
  void timeReformats(Pacer& pacer);
  std::string engineBytes() const;

  BuildRequest const& req_;
  ProgressSink& sink_;
  SimPlan plan_;
  SimMemory memory_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> faultFired_{false};
  std::string faultPhase_;
  std::mutex failMu_;
  std::string failure_;

  double targetMs_ = 0;
  double msPerUnit_ = 0;
  int threads_ = 1;

  bool useCache_ = false;
  CacheLoad loaded_;
  std::mutex freshMu_;
  CacheEntries fresh_;
  std::atomic<int64_t> hits_{0}, misses_{0};
  bool forwardVerbose_ = false;
  std::atomic<int64_t> verboseLines_{0};
};

void SimRun::verbose(std::string const& msg) {
  if (!forwardVerbose_) return;
  int64_t n = verboseLines_.fetch_add(1, std::memory_order_relaxed);
  if (n < kMaxVerboseLines) {
    sink_.log(Severity::kVerbose, msg.c_str());
  } else if (n == kMaxVerboseLines) {
    std::string note = "Simulated verbose log stops after " + std::to_string(kMaxVerboseLines) + " lines; the build goes on";
    sink_.log(Severity::kInfo, note.c_str());
  }
}

void SimRun::holdMemory(double fraction) {
  if (memory_.targetBytes() == 0 || stopped()) return;
  std::string error;
  if (memory_.rise(fraction, error)) return;
  sink_.log(Severity::kError, error.c_str());
  {
    std::lock_guard<std::mutex> lk(failMu_);
    if (failure_.empty()) failure_ = error;
  }
  stop_.store(true, std::memory_order_release);
}

// A pinned build met a tactic its cache does not hold: it fails here, as TensorRT does with
// kERROR_ON_TIMING_CACHE_MISS, naming what missed.
void SimRun::pinnedMiss(std::string const& what) {
  std::string msg = "timing cache miss in a pinned build: " + what + " is not in " + req_.timingCachePath +
                    " (--pinned-cache fails on any miss; build once without it to fill the cache)";
  sink_.log(Severity::kError, msg.c_str());
  {
    std::lock_guard<std::mutex> lk(failMu_);
    if (failure_.empty()) failure_ = msg;
  }
  stop_.store(true, std::memory_order_release);
}

void SimRun::onPhaseStart(char const* name) {
  if (req_.simFault == SimFaultKind::kNone || faultPhase_ != name) return;
  if (faultFired_.exchange(true)) return;  // a fault fires once, at the first instance
  switch (req_.simFault) {
    case SimFaultKind::kFail: {
      std::string msg = "simulated failure in phase \"" + faultPhase_ + "\" (fault injected with simFault=fail@" + faultPhase_ + ")";
      sink_.log(Severity::kError, msg.c_str());
      {
        std::lock_guard<std::mutex> lk(failMu_);
        failure_ = msg;
      }
      stop_.store(true, std::memory_order_release);
      break;
    }
    case SimFaultKind::kCrash:
      // Deliberate: isolation tests need a worker process that really dies mid-build.
      std::fprintf(stderr, "trt-build-studio: simulated crash in phase \"%s\" (simFault=crash)\n", faultPhase_.c_str());
      std::fflush(stderr);
      std::abort();
    case SimFaultKind::kHang: {
      std::string msg = "simulated hang in phase \"" + faultPhase_ + "\" for up to " +
                        std::to_string(static_cast<int64_t>(req_.simHangMs)) + " ms (fault injection)";
      sink_.log(Severity::kWarning, msg.c_str());
      sink_.waitForCancel(req_.simHangMs);  // the next stepComplete reports the cancel, if any
      break;
    }
    case SimFaultKind::kNone:
      break;
  }
}

void SimRun::computePacing() {
  double seq = plan_.cloneSteps * kLightUnit + 4 * kLightUnit + plan_.optimizeEarlyAt * kLightUnit + 16 * kLightUnit;
  for (auto const& r : plan_.reformats) seq += r.costs * 3 * (4 * kMeasureUnit + kEvaluateUnit);
  double par = 0;
  for (auto const& g : plan_.groups) {
    for (auto s : g.measureSteps) par += s * kMeasureUnit + kEvaluateUnit;
  }
  threads_ = std::clamp(req_.simThreads, 1, 64);
  int effective = std::min<int>(threads_, static_cast<int>(plan_.groups.size()));
  targetMs_ = std::max(0.0, req_.simDurationMs);
  double gaps = kGapShare[0] + kGapShare[1] + kGapShare[2];
  // Paced for a cold cache; a warm cache skips the measuring and finishes early, as TensorRT does.
  msPerUnit_ = targetMs_ * (1.0 - gaps) / std::max(1.0, seq + par / std::max(1, effective));
}

// The file was read (and vetted) before the build started; this reports what was found.
void SimRun::loadCache() {
  if (req_.timingCachePath.empty()) {
    sink_.log(Severity::kInfo, "No timing cache file given: every tactic will be measured");
    return;
  }
  if (!loaded_.warning.empty()) sink_.log(Severity::kWarning, loaded_.warning.c_str());
  if (req_.optLevel == 0) {
    sink_.log(Severity::kInfo, "Optimization level 0 ignores the timing cache");
    return;
  }
  useCache_ = true;
  std::string msg = "Loaded timing cache " + req_.timingCachePath + ": " + std::to_string(loaded_.entries.size()) + " entries (" +
                    std::to_string(loaded_.fileBytes) + " bytes";
  if (loaded_.pendingFiles > 0) {
    msg += ", including " + std::to_string(loaded_.pendingFiles) + " pending file(s) an earlier build could not merge";
  }
  msg += ")";
  sink_.log(Severity::kInfo, msg.c_str());
}

// Saves what this build measured, also when it was cancelled: each entry is a finished
// measurement of one whole layer group or reformat, as valid after a Stop as after a success.
void SimRun::saveCache(CacheStats& stats, bool cancelled) {
  CacheEntries fresh;
  {
    std::lock_guard<std::mutex> lk(freshMu_);
    fresh = fresh_;
  }
  if (cancelled && fresh.empty()) return;  // nothing measured: leave the file alone
  CacheSaveOptions opts;
  opts.lockTimeoutMs = cacheLockTimeoutMs(kCacheLockTimeoutMs);
  if (cancelled) opts.lockTimeoutMs = std::min(opts.lockTimeoutMs, kCancelledCacheLockTimeoutMs);
  // Nothing new (a warm build): fold in others' sidecars if the lock is free, never wait for it.
  if (fresh.empty()) opts.lockTimeoutMs = 0;
  CacheSaveResult saved = mergeAndSaveTimingCache(req_.timingCachePath, fresh, opts);
  if (!saved.warning.empty()) {
    sink_.log(Severity::kWarning, saved.warning.c_str());
    stats.warning += (stats.warning.empty() ? "" : "; ") + saved.warning;
  }
  switch (saved.outcome) {
    case CacheSaveResult::Outcome::kSaved:
      stats.entriesAfter = saved.entriesAfter;
      stats.bytes = saved.fileBytes;
      break;
    case CacheSaveResult::Outcome::kDeferred:
    case CacheSaveResult::Outcome::kRefused: {
      // The file is unchanged; the entries the next build starts from are those it had plus the
      // sidecar's (loadTimingCache reads both).
      CacheEntries after = loaded_.entries;
      if (!saved.deferredPath.empty()) after.insert(fresh.begin(), fresh.end());
      stats.entriesAfter = static_cast<int64_t>(after.size());
      stats.deferredPath = saved.deferredPath;
      break;
    }
    case CacheSaveResult::Outcome::kFailed:
      break;
  }
  bool kept = saved.outcome == CacheSaveResult::Outcome::kSaved || !saved.deferredPath.empty();
  if (cancelled && kept) {
    stats.savedAfterCancel = true;
    std::string msg = "Build stopped: kept " + std::to_string(fresh.size()) + " measured timing-cache entries in " +
                      (saved.deferredPath.empty() ? req_.timingCachePath : saved.deferredPath) + "; the next build starts from them";
    sink_.log(Severity::kInfo, msg.c_str());
  }
}

void SimRun::timeGroup(size_t index, Pacer& pacer) {
  TacticGroup const& g = plan_.groups[index];
  bool hit = useCache_ && loaded_.entries.count(g.key) > 0;
  (hit ? hits_ : misses_).fetch_add(1);
  if (!hit && req_.errorOnCacheMiss) {
    pinnedMiss(g.name + " (" + g.op + ")");
    return;
  }
  if (forwardVerbose_) {
    verbose(hit ? "[simulated] " + g.name + " (" + g.op + "): tactic taken from the timing cache"
                : "Autotuning op " + g.name + " (" + g.op + "): " + std::to_string(g.measureSteps.size()) + " tactics");
  }
  Phase evaluating(*this, kEvaluating, kGraphNodes, static_cast<int32_t>(g.measureSteps.size()));
  // Only a group whose every tactic was timed has a best tactic worth caching.
  bool complete = true;
  for (size_t t = 0; t < g.measureSteps.size(); ++t) {
    if (stopped()) {
      complete = false;
      break;
    }
    if (!hit) {
      Phase measuring(*this, kMeasuring, kEvaluating, g.measureSteps[t]);
      for (int32_t s = 0; s < g.measureSteps[t]; ++s) {
        if (!step(kMeasuring, s, pacer, kMeasureUnit)) break;
      }
    }
    if (!step(kEvaluating, static_cast<int32_t>(t), pacer, hit ? kEvaluateHitUnit : kEvaluateUnit)) {
      complete = false;
      break;
    }
    if (!hit && forwardVerbose_) {
      // A made-up but stable tactic id and time, so the line reads like TensorRT's own.
      uint64_t id = std::hash<std::string>{}(g.name) ^ (0x9e3779b97f4a7c15ULL * (t + 1));
      char line[96];
      std::snprintf(line, sizeof line, ": tactic 0x%016llx timed at %.4f ms", static_cast<unsigned long long>(id),
                    0.001 * static_cast<double>(id % 5000 + 20));
      verbose("[simulated] " + g.name + line);
    }
  }
  if (!hit && complete) {
    std::lock_guard<std::mutex> lk(freshMu_);
    fresh_[g.key] = CacheValue{std::hash<std::string>{}(g.name) % 997, 0.01 * static_cast<double>(g.measureSteps.size())};
  }
}

void SimRun::timeGraphNodes() {
  Phase graphNodes(*this, kGraphNodes, kTactics, static_cast<int32_t>(plan_.groups.size()));
  std::atomic<size_t> next{0};
  std::mutex stepMu;
  int32_t done = 0;
  // Layer groups are timed in parallel; each worker owns its "Evaluating tactic times" subtree,
  // and the shared parent's steps are reported under a lock so they rise.
  auto worker = [&] {
    Pacer pacer(*this);
    while (!stopped()) {
      size_t i = next.fetch_add(1);
      if (i >= plan_.groups.size()) break;
      timeGroup(i, pacer);
      if (stopped()) break;
      std::lock_guard<std::mutex> lk(stepMu);
      // Tactic selection is where a real build's host memory peaks: it rises group by group.
      holdMemory(kMemTacticsStart + (1.0 - kMemTacticsStart) * static_cast<double>(done + 1) / static_cast<double>(plan_.groups.size()));
      step(kGraphNodes, done++, pacer, 0);
    }
  };
  int n = std::min<int>(threads_, static_cast<int>(plan_.groups.size()));
  std::vector<std::thread> pool;
  for (int i = 1; i < n; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

void SimRun::timeReformats(Pacer& pacer) {
  Phase reformats(*this, kReformats, kTactics, static_cast<int32_t>(plan_.reformats.size()));
  for (size_t r = 0; r < plan_.reformats.size() && !stopped(); ++r) {
    ReformatGroup const& rg = plan_.reformats[r];
    bool hit = useCache_ && loaded_.entries.count(rg.key) > 0;
    (hit ? hits_ : misses_).fetch_add(1);
    if (!hit && req_.errorOnCacheMiss) {
      pinnedMiss("reformat " + std::to_string(r));
      break;
    }
    bool complete = rg.costs == 0;
    {
      Phase costs(*this, kReformatCosts, kReformats, rg.costs);
      for (int32_t c = 0; c < rg.costs && !stopped(); ++c) {
        {
          Phase evaluating(*this, kEvaluating, kReformatCosts, 3);
          for (int32_t k = 0; k < 3 && !stopped(); ++k) {
            if (!hit) {
              Phase measuring(*this, kMeasuring, kEvaluating, 4);
              for (int32_t s = 0; s < 4; ++s) {
                if (!step(kMeasuring, s, pacer, kMeasureUnit)) break;
              }
            }
            if (!step(kEvaluating, k, pacer, hit ? kEvaluateHitUnit : kEvaluateUnit)) break;
          }
        }
        if (forwardVerbose_) {
          verbose("[simulated] Reformat " + std::to_string(r) + ", cost " + std::to_string(c + 1) + " of " + std::to_string(rg.costs) +
                  (hit ? ": from the timing cache" : ": 3 tactics timed"));
        }
        if (!step(kReformatCosts, c, pacer, 0)) break;
        complete = c + 1 == rg.costs;
      }
    }
    if (!hit && complete) {
      std::lock_guard<std::mutex> lk(freshMu_);
      fresh_[rg.key] = CacheValue{static_cast<uint64_t>(r), 0.002 * rg.costs};
    }
    step(kReformats, static_cast<int32_t>(r), pacer, 0);
  }
}

std::string SimRun::engineBytes() const {
  JsonObject meta;
  meta.str("format", "trt-build-studio-simulated-engine").integer("formatVersion", 1);
  meta.str("warning", "This file was produced by the simulated backend. It is not a TensorRT engine and cannot be deserialized.");
  meta.str("simVersion", kSimVersion).str("buildId", req_.buildId).str("model", req_.modelPath);
  meta.integer("layers", plan_.layerCount).integer("layerGroups", static_cast<int64_t>(plan_.groups.size()));
  meta.integer("seed", static_cast<int64_t>(req_.simSeed)).integer("optLevel", req_.optLevel);
  std::string precision;
  for (auto const& p : req_.precision) precision += (precision.empty() ? "" : ",") + p;
  meta.str("precision", precision);
  std::string out = std::string(kEngineHeader) + "\n" + meta.done() + "\n";
  std::mt19937_64 rng(req_.simSeed ^ 0x5eed);
  while (static_cast<int64_t>(out.size()) < plan_.engineBytes) out += static_cast<char>('a' + rng() % 26);
  return out;
}

BuildOutcome SimRun::run() {
  BuildOutcome outcome;
  outcome.status = BuildOutcome::Status::kFailed;
  if (req_.outputPath.empty()) {
    outcome.error = "no output path given for the engine file";
    return outcome;
  }
  // Fail before the build, not after minutes of work.
  AtomicWriteResult writable = checkWritableTarget(req_.outputPath);
  if (!writable.ok) {
    outcome.error = writable.error;
    return outcome;
  }
  if (req_.simFault != SimFaultKind::kNone) {
    auto const& names = simPhaseNames();
    faultPhase_ = req_.simFaultPhase;
    if (faultPhase_.empty()) {
      faultPhase_ = names[1 + req_.simSeed % (names.size() - 1)];
    } else if (std::find(names.begin(), names.end(), faultPhase_) == names.end()) {
      std::string known;
      for (auto const& n : names) known += (known.empty() ? "" : ", ") + n;
      outcome.error = "simFault phase \"" + faultPhase_ + "\" is not a phase of the simulated build (phases: " + known + ")";
      return outcome;
    }
  }
  // A cache path that is not this backend's cache (a FIFO, a model, a config...) fails the build
  // here, before any work, and is never replaced.
  if (!req_.timingCachePath.empty()) {
    loaded_ = loadTimingCache(req_.timingCachePath);
    if (!loaded_.error.empty()) {
      outcome.error = loaded_.error;
      return outcome;
    }
  }
  // As TensorRT: plugins are set up before the model is parsed, and the route is set on the
  // builder config (setBuildRoute returns false for a route it does not know).
  SimPluginSetup plugins = simSetUpPlugins(req_);
  for (auto const& line : plugins.log) sink_.log(Severity::kInfo, line.c_str());
  if (!plugins.error.empty()) {
    outcome.error = "ONNX parse failed: " + plugins.error;
    return outcome;
  }
  for (auto const& w : simPrecisionWarnings(req_, simEmulatedTrtVersion())) sink_.log(Severity::kWarning, w.c_str());
  if (!req_.buildRoute.empty()) {
    std::string routeError = simRouteError(req_.buildRoute);
    if (!routeError.empty()) {
      outcome.error = "TensorRT rejected build route \"" + req_.buildRoute + "\" (simulated): " + routeError;
      return outcome;
    }
    sink_.log(Severity::kInfo, ("Build route (simulated): " + req_.buildRoute).c_str());
  }
  computePacing();
  forwardVerbose_ = req_.verboseLog || req_.inferCacheMisses;
  {
    std::string msg = "Simulated build: " + std::to_string(plan_.layerCount) + " layers in " + std::to_string(plan_.groups.size()) +
                      " layer groups, " + std::to_string(threads_) + " builder threads, seed " + std::to_string(req_.simSeed);
    sink_.log(Severity::kInfo, msg.c_str());
    sink_.log(Severity::kWarning, "Simulated backend: no GPU is used and no TensorRT engine is produced; timings are synthetic");
    verbose(
        "[simulated] Verbose log: these VERBOSE lines are made up by the simulator (one per layer cloned, tactic "
        "timed and reformat cost), at most " +
        std::to_string(kMaxVerboseLines));
    if (memory_.targetBytes() > 0) {
      std::string mem = "Simulated build holds up to " + std::to_string(memory_.targetBytes()) +
                        " bytes of host memory (simMemory), peaking in tactic selection";
      sink_.log(Severity::kInfo, mem.c_str());
    }
    if (req_.workspaceBytes > 0 && req_.workspaceBytes < (int64_t{64} << 20)) {
      sink_.log(Severity::kWarning, "Workspace limit below 64 MiB: some tactics would be skipped (simulated)");
    }
  }

  Pacer pacer(*this);
  {
    Phase building(*this, kBuilding, nullptr, 6);
    // The cache is read on its own thread while the graph is cloned, as a real builder's helper
    // threads would log concurrently.
    std::thread cacheThread([this] { loadCache(); });
    {
      Phase cloning(*this, kCloning, kBuilding, plan_.cloneSteps);
      for (int32_t i = 0; i < plan_.cloneSteps; ++i) {
        holdMemory(kMemCloneEnd * static_cast<double>(i + 1) / static_cast<double>(plan_.cloneSteps));
        if (!step(kCloning, i, pacer, kLightUnit)) break;
        if (forwardVerbose_) verbose("[simulated] Cloned graph node " + std::to_string(i + 1) + " of " + std::to_string(plan_.cloneSteps));
      }
    }
    cacheThread.join();
    step(kBuilding, 0, pacer, 0);
    if (!stopped()) {
      Phase preparing(*this, kPreparing, kBuilding, 4);
      holdMemory(kMemPreparing);
      for (int32_t i = 0; i < 4; ++i) {
        if (!step(kPreparing, i, pacer, kLightUnit)) break;
      }
    }
    step(kBuilding, 1, pacer, 0);
    if (!stopped()) {
      Phase subgraph(*this, kSubgraph, kBuilding, 1);
      if (!stopped()) {
        Phase optimizing(*this, kOptimizing, kSubgraph, plan_.optimizeSteps);
        holdMemory(kMemOptimizing);
        for (int32_t i = 0; i < plan_.optimizeEarlyAt; ++i) {
          if (!step(kOptimizing, i, pacer, kLightUnit)) break;
        }
      }
      gap(kGapShare[0], pacer);
      if (!stopped()) {
        Phase profile(*this, kProfile, kSubgraph, 10);
        if (!stopped()) {
          Phase tactics(*this, kTactics, kProfile, 3);
          holdMemory(kMemTacticsStart);
          timeGraphNodes();
          pacer.rebase();
          step(kTactics, 0, pacer, kLightUnit);
          if (!stopped()) timeReformats(pacer);
        }  // "Timing tactics" finishes early, at 1 of 3
        step(kProfile, 0, pacer, kLightUnit);
        step(kProfile, 1, pacer, kLightUnit);
        gap(kGapShare[1], pacer);
        if (!stopped()) {
          Phase refit(*this, kRefit, kProfile, 5);
          memory_.fall(kMemRefit);
          step(kRefit, 0, pacer, kLightUnit);
          step(kRefit, 1, pacer, kLightUnit);
          step(kProfile, 2, pacer, kLightUnit);  // the parent advances while its child is open
          step(kProfile, 3, pacer, kLightUnit);
          for (int32_t i = 2; i < 5; ++i) step(kRefit, i, pacer, kLightUnit);
        }
      }  // "Computing profile costs" finishes early, at 4 of 10
      step(kSubgraph, 0, pacer, kLightUnit);
    }
    step(kBuilding, 2, pacer, kLightUnit);
    memory_.fall(kMemSerializing);
    gap(kGapShare[2], pacer);  // serialization: silent
    step(kBuilding, 3, pacer, kLightUnit);
  }  // "Building engine" finishes early, at 4 of 6

  CacheStats stats;
  if (!req_.timingCachePath.empty()) {
    stats.path = req_.timingCachePath;
    stats.entriesBefore = useCache_ ? static_cast<int64_t>(loaded_.entries.size()) : 0;
    stats.entriesAfter = stats.entriesBefore;
    stats.bytes = loaded_.fileBytes;
    stats.hits = hits_.load();
    stats.misses = misses_.load();
    stats.warning = loaded_.warning;
  }

  std::string failure;
  {
    std::lock_guard<std::mutex> lk(failMu_);
    failure = failure_;
  }
  if (!failure.empty()) {
    outcome.error = failure;
  } else if (stopped()) {
    outcome.status = BuildOutcome::Status::kCancelled;
    if (!req_.timingCachePath.empty() && req_.optLevel != 0 && !req_.errorOnCacheMiss) saveCache(stats, /*cancelled=*/true);
  } else {
    // A pinned build reads its cache and never writes it.
    if (!req_.timingCachePath.empty() && req_.optLevel != 0 && !req_.errorOnCacheMiss) saveCache(stats, /*cancelled=*/false);
    std::string bytes = engineBytes();
    AtomicWriteResult written = atomicWriteFile(req_.outputPath, bytes);
    if (written.ok) {
      outcome.status = BuildOutcome::Status::kSucceeded;
      outcome.engineBytes = static_cast<int64_t>(bytes.size());
      outcome.outputPath = req_.outputPath;
      std::string msg = "Simulated engine written: " + std::to_string(bytes.size()) + " bytes to " + req_.outputPath;
      sink_.log(Severity::kInfo, msg.c_str());
    } else {
      outcome.error = written.error;
    }
  }
  if (!req_.timingCachePath.empty()) sink_.cacheStats(stats);
  return outcome;
}

}  // namespace

BackendProbe SimBackend::probe() {
  BackendProbe p;
  p.name = "simulated";
  p.available = true;
  p.version = kSimVersion;
  p.detail["note"] = "synthetic TensorRT-10-shaped build; no GPU; output is not an engine";
  return p;
}

BuildOutcome SimBackend::build(BuildRequest const& request, ProgressSink& sink) {
  SimRun run(request, sink);
  return run.run();
}

std::unique_ptr<Backend> makeSimBackend() { return std::make_unique<SimBackend>(); }

}  // namespace tbs::sim
