// One monotonic clock for every native timestamp, so builder threads, the flusher and the
// cancel bookkeeping can be compared directly. It is CLOCK_MONOTONIC's timeline (system-wide).
//
// Why not simply steady_clock: a callback reads the clock once, and on the machines we measure
// (x86-64 VMs) reading CLOCK_MONOTONIC through the vDSO was the largest single part of a callback
// (perf, bench:native; the figures are in docs/benchmarks.md). Where the kernel itself keeps time
// with the TSC (its clocksource is "tsc", which the kernel picks only for an invariant TSC
// synchronized across CPUs), the clock here reads the TSC and maps it onto CLOCK_MONOTONIC with one
// linear map, measured once per process over 20 ms at first use (clock.cc). One fixed map keeps the
// clock monotonic and the same for every thread. Its rate is exact to a few parts per million, so
// over a one-hour build event times may drift some milliseconds from CLOCK_MONOTONIC and the wall
// clock (nothing compares them at that precision: durations and the event order are exact).
// Elsewhere (another clocksource, not x86-64, the map failed its checks) it is steady_clock itself.
//
// Two readings of the same clock, differing only in how the CPU may reorder them:
//   monoNowNs()      waits for every earlier instruction (and, after a locked write such as a
//                    seq_cst store, for that write to be visible) and holds back later ones: a
//                    timestamp taken after setting a flag is later than the flag.
//   callbackNowNs()  holds back later instructions only (rdtsc; lfence), so it is cheaper: what a
//                    builder callback needs ("the timestamp is taken before the cancel flag is
//                    read", progress_pipeline.cc). It may be taken before an earlier load has
//                    completed, so it can be below a time another thread published just before
//                    (test_clock.cc saw that): never compare it with one read before it; a
//                    callback takes it first and reads shared state after.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace tbs {

// CLOCK_MONOTONIC itself: for deadlines handed to the OS (sem_clockwait in flush_pacer.h).
inline int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace clock_detail {

struct TscMap {
  bool useTsc = false;
  uint64_t tsc0 = 0;
  int64_t ns0 = 0;
  double nsPerTick = 0;
};

TscMap measureTscMap();  // clock.cc

inline TscMap const& tscMap() {
  static TscMap const map = measureTscMap();
  return map;
}

#if defined(__x86_64__)
inline int64_t fromTsc(TscMap const& m, uint64_t tsc) {
  return m.ns0 + static_cast<int64_t>(static_cast<double>(static_cast<int64_t>(tsc - m.tsc0)) * m.nsPerTick);
}
#endif

}  // namespace clock_detail

inline int64_t monoNowNs() {
#if defined(__x86_64__)
  clock_detail::TscMap const& m = clock_detail::tscMap();
  if (m.useTsc) {
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return clock_detail::fromTsc(m, t);
  }
#endif
  return steadyNowNs();
}

inline int64_t callbackNowNs() {
#if defined(__x86_64__)
  clock_detail::TscMap const& m = clock_detail::tscMap();
  if (m.useTsc) {
    uint64_t t = __rdtsc();
    _mm_lfence();
    return clock_detail::fromTsc(m, t);
  }
#endif
  return steadyNowNs();
}

// Whether monoNowNs() reads the TSC (bench:native reports it).
inline bool clockUsesTsc() { return clock_detail::tscMap().useTsc; }

inline double nsToMs(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace tbs
