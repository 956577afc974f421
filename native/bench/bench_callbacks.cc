// Callback cost of our ProgressSink pipeline vs the "naive" monitor of tutorials (mutex, update
// a map, render the whole tree as an ANSI string, write it), measured in the same run, with 1
// and 8 producer threads; plus sustained throughput with 8 producers. Prints one JSON object.
// bench/native.js runs this and adds the end-to-end memory run through the addon.
//
// Each callback is timed individually with rdtsc (calibrated against steady_clock); the figures
// include the timer's own overhead (reported as timerOverheadNs). With 8 threads on a 2-core
// machine, p99/max include time a thread was descheduled inside a callback.
#include <fcntl.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/json_writer.h"
#include "core/progress_pipeline.h"
#include "sim/callback_storm.h"

using namespace tbs;

namespace {

double gNsPerTick = 1.0;

void calibrate() {
  auto t0 = std::chrono::steady_clock::now();
  uint64_t c0 = __rdtsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t c1 = __rdtsc();
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  gNsPerTick = ns / static_cast<double>(c1 - c0);
}

// The tutorial monitor: one lock, a map of bars keyed by name, and every callback redraws all
// active bars with ANSI escapes and writes them out.
class NaiveMonitor final : public ProgressSink {
 public:
  NaiveMonitor() : fd_(::open("/dev/null", O_WRONLY | O_CLOEXEC)) {}
  ~NaiveMonitor() override { ::close(fd_); }
  void phaseStart(char const* name, char const*, int32_t nbSteps) noexcept override {
    std::lock_guard<std::mutex> lk(mu_);
    bars_[key(name)] = Bar{0, nbSteps};
    redraw();
  }
  bool stepComplete(char const* name, int32_t step) noexcept override {
    std::lock_guard<std::mutex> lk(mu_);
    bars_[key(name)].step = step + 1;
    redraw();
    return true;
  }
  void phaseFinish(char const* name) noexcept override {
    std::lock_guard<std::mutex> lk(mu_);
    bars_.erase(key(name));
    redraw();
  }
  void log(Severity, char const*) noexcept override {}
  void cacheStats(CacheStats const&) noexcept override {}
  bool cancelRequested() const noexcept override { return false; }

 private:
  struct Bar {
    int32_t step = 0, nb = 1;
  };
  // Per-thread keys keep parallel subtrees apart (the samples assume unique names).
  static std::string key(char const* name) {
    thread_local std::string prefix = std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000) + "/";
    return prefix + name;
  }
  void redraw() {
    out_.clear();
    out_ += "\x1b[" + std::to_string(lines_) + "A";
    for (auto const& [name, bar] : bars_) {
      int filled = bar.nb > 0 ? 30 * bar.step / bar.nb : 0;
      char line[256];
      std::snprintf(line, sizeof line, "\x1b[2K%-40s \x1b[32m[%.*s%*s]\x1b[0m %d/%d\n", name.c_str(), filled,
                    "##############################", 30 - filled, "", bar.step, bar.nb);
      out_ += line;
    }
    lines_ = bars_.size();
    if (::write(fd_, out_.data(), out_.size()) < 0) {
    }
  }
  std::mutex mu_;
  std::map<std::string, Bar> bars_;
  std::string out_;
  size_t lines_ = 0;
  int fd_;
};

// One producer thread's share of the TensorRT-shaped mix (see sim/callback_storm.cc), every
// callback timed; phaseStart/phaseFinish also go to `structural` (the callbacks that write the
// crash record).
void timedProducer(ProgressSink& sink, int64_t callbacks, std::vector<uint32_t>& samples, std::vector<uint32_t>& structural) {
  samples.reserve(static_cast<size_t>(callbacks) + 16);
  structural.reserve(static_cast<size_t>(callbacks) / 3 + 16);
  auto timed = [&](bool isStructural, auto&& fn) {
    uint64_t t0 = __rdtsc();
    fn();
    uint64_t t1 = __rdtsc();
    auto ticks = static_cast<uint32_t>(std::min<uint64_t>(t1 - t0, UINT32_MAX));
    samples.push_back(ticks);
    if (isStructural) structural.push_back(ticks);
  };
  int64_t done = 0;
  while (done < callbacks) {
    timed(true, [&] { sink.phaseStart("Evaluating tactic times", "Timing graph nodes", 153); });
    for (int32_t t = 0; t < 153 && done < callbacks; ++t) {
      timed(true, [&] { sink.phaseStart("Measuring tactic time", "Evaluating tactic times", 4); });
      for (int32_t s = 0; s < 4; ++s) timed(false, [&] { sink.stepComplete("Measuring tactic time", s); });
      timed(true, [&] { sink.phaseFinish("Measuring tactic time"); });
      timed(false, [&] { sink.stepComplete("Evaluating tactic times", t); });
      done += 7;
    }
    timed(true, [&] { sink.phaseFinish("Evaluating tactic times"); });
    done += 2;
  }
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
};

Percentiles percentiles(std::vector<std::vector<uint32_t>>& perThread) {
  std::vector<uint32_t> all;
  for (auto& s : perThread) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  auto at = [&](double q) { return all[std::min(all.size() - 1, static_cast<size_t>(q * static_cast<double>(all.size())))] * gNsPerTick; };
  return Percentiles{at(0.50), at(0.99), all.back() * gNsPerTick};
}

// All callbacks, and phaseStart/phaseFinish alone.
struct Costs {
  Percentiles all, structural;
};

Costs measure(ProgressSink& sink, int threads, int64_t callbacksPerThread) {
  std::vector<std::vector<uint32_t>> samples(static_cast<size_t>(threads)), structural(static_cast<size_t>(threads));
  sink.phaseStart("Timing graph nodes", nullptr, 1);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back(
        [&, i] { timedProducer(sink, callbacksPerThread, samples[static_cast<size_t>(i)], structural[static_cast<size_t>(i)]); });
  }
  for (auto& t : pool) t.join();
  sink.phaseFinish("Timing graph nodes");
  return Costs{percentiles(samples), percentiles(structural)};
}

// crashRecord: a file path to keep the crash record in (as the addon does when the host asks).
Costs measureOurs(int threads, int64_t perThread, std::string const& crashRecord = {}) {
  std::atomic<int64_t> delivered{0};
  PipelineOptions o;
  o.crashRecordPath = crashRecord;
  ProgressPipeline p(o, [&](EventBatch&& b) { delivered += static_cast<int64_t>(b.events.size()); });
  p.startFlusher();
  Costs r = measure(p, threads, perThread);
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  return r;
}

Costs measureNaive(int threads, int64_t perThread) {
  NaiveMonitor m;
  return measure(m, threads, perThread);
}

double timerOverheadNs() {
  std::vector<uint32_t> s;
  for (int i = 0; i < 100000; ++i) {
    uint64_t t0 = __rdtsc();
    uint64_t t1 = __rdtsc();
    s.push_back(static_cast<uint32_t>(t1 - t0));
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2] * gNsPerTick;
}

std::string pct(Percentiles const& p) {
  JsonObject o;
  o.num("p50", p.p50).num("p99", p.p99).num("max", p.max);
  return o.done();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t sustained = argc > 1 ? std::atoll(argv[1]) : 20000000;
  calibrate();
  double overhead = timerOverheadNs();

  Costs ours1 = measureOurs(1, 1000000), naive1 = measureNaive(1, 100000);
  Costs ours8 = measureOurs(8, 200000), naive8 = measureNaive(8, 20000);
  // The same runs with the crash record kept (written on every phaseStart/phaseFinish).
  char crashDir[] = "/tmp/tbs-bench-crash-XXXXXX";
  std::string crashFile = mkdtemp(crashDir) != nullptr ? std::string(crashDir) + "/record" : std::string();
  Costs crash1 = measureOurs(1, 1000000, crashFile);
  Costs crash8 = measureOurs(8, 200000, crashFile);
  if (!crashFile.empty()) {
    ::unlink(crashFile.c_str());
    ::rmdir(crashDir);
  }

  // Sustained: 8 producers flat out through the pipeline (flusher running, batches consumed).
  std::atomic<int64_t> delivered{0};
  ProgressPipeline p(PipelineOptions{}, [&](EventBatch&& b) { delivered += static_cast<int64_t>(b.events.size()); });
  p.startFlusher();
  sim::StormResult storm = sim::runCallbackStorm(p, sustained, 8);
  // What the flusher had not caught up with when the producers stopped is emitted in finish():
  // a pipeline that lets its queues grow without bound (no back-pressure) shows a high
  // producer-side rate and a long finish. The drained rate counts that time too.
  int64_t finishFrom = monoNowNs();
  p.finish(BuildOutcome{BuildOutcome::Status::kSucceeded, "", 0, ""});
  int64_t finishNs = monoNowNs() - finishFrom;

  auto cost = [](Costs const& o, Costs const& n, Costs const& c) {
    JsonObject j;
    j.raw("ours", pct(o.all)).raw("naive", pct(n.all)).num("p50Ratio", n.all.p50 / std::max(o.all.p50, 1e-9));
    j.raw("oursStartFinish", pct(o.structural)).raw("withCrashRecord", pct(c.all)).raw("withCrashRecordStartFinish", pct(c.structural));
    return j.done();
  };
  JsonObject threads;
  threads.raw("threads1", cost(ours1, naive1, crash1)).raw("threads8", cost(ours8, naive8, crash8));
  JsonObject out;
  out.raw("callbackCostNs", threads.done());
  out.num("timerOverheadNs", overhead);
  out.num("sustainedCallbacksPerSec", static_cast<double>(storm.callbacks) / (static_cast<double>(storm.producerNs) / 1e9));
  out.num("sustainedDrainedCallbacksPerSec",
          static_cast<double>(storm.callbacks) / (static_cast<double>(storm.producerNs + finishNs) / 1e9));
  out.num("sustainedFinishMs", static_cast<double>(finishNs) / 1e6);
  // The flusher fell maxQueuedRecords behind: flushes builder threads ran in its place, the time
  // they took, looks that found a flush running, and the queues' high-water mark.
  out.integer("sustainedHelpedFlushes", static_cast<int64_t>(p.helpedFlushes()));
  out.num("sustainedHelpedFlushMs", static_cast<double>(p.helpedFlushNs()) / 1e6);
  out.integer("sustainedFlushLockWaits", static_cast<int64_t>(p.flushLockWaits()));
  out.num("sustainedFlushLockWaitedMs", static_cast<double>(p.flushLockWaitedNs()) / 1e6);
  out.integer("sustainedPeakQueuedRecords", static_cast<int64_t>(p.peakQueuedRecords()));
  out.integer("sustainedCallbacks", storm.callbacks);
  out.integer("sustainedEventsDelivered", delivered.load());
  out.num("maxProducerWaitUs", ours8.all.max / 1000.0);
  out.integer("cpus", static_cast<int64_t>(std::thread::hardware_concurrency()));
  out.boolean("clockReadsTsc", clockUsesTsc());
  std::printf("%s\n", out.done().c_str());
  return 0;
}
