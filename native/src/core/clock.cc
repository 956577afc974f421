#include "clock.h"

#include <fstream>
#include <string>
#include <thread>

namespace tbs::clock_detail {

#if defined(__x86_64__) && defined(__linux__)
namespace {

struct Pair {
  uint64_t tsc = 0;
  int64_t ns = 0;
};

// A TSC reading and the CLOCK_MONOTONIC time it corresponds to: of 32 tries, the one whose
// CLOCK_MONOTONIC readings around it lie closest together (a try that was interrupted or
// descheduled between them is discarded that way).
Pair samplePair() {
  Pair best;
  int64_t bestSpan = INT64_MAX;
  for (int i = 0; i < 32; ++i) {
    int64_t a = steadyNowNs();
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    int64_t b = steadyNowNs();
    if (b - a < bestSpan) {
      bestSpan = b - a;
      best = Pair{t, a + (b - a) / 2};
    }
  }
  return best;
}

}  // namespace

TscMap measureTscMap() {
  TscMap m;
  // The kernel uses the TSC for CLOCK_MONOTONIC only after checking that it is invariant and
  // synchronized across CPUs; anything else (hpet, kvm-clock, a TSC it marked unstable) keeps
  // steady_clock.
  std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  if (!(f >> source) || source != "tsc") return m;
  Pair p0 = samplePair();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Pair p1 = samplePair();
  if (p1.tsc <= p0.tsc || p1.ns <= p0.ns) return m;
  double nsPerTick = static_cast<double>(p1.ns - p0.ns) / static_cast<double>(p1.tsc - p0.tsc);
  if (!(nsPerTick > 0.02 && nsPerTick < 10.0)) return m;  // not a 0.1-50 GHz counter: distrust it
  m.tsc0 = p1.tsc;
  m.ns0 = p1.ns;
  m.nsPerTick = nsPerTick;
  m.useTsc = true;
  return m;
}
#else
TscMap measureTscMap() { return TscMap{}; }
#endif

}  // namespace tbs::clock_detail
