// The native clock (clock.h): wherever it reads the TSC, it must stay on CLOCK_MONOTONIC's
// timeline, never run backwards, and order a callback reading before a later full reading. The
// bounds are correctness bounds with wide slack (a busy machine), not performance figures.
#include <cstdio>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "core/clock.h"

using namespace tbs;

namespace {

// Same timeline as steady_clock: the offset stays far below a millisecond right after the map is
// measured, and durations agree to well under 1%.
TEST(clock_stays_on_clock_monotonic) {
  std::printf("  clock reads the TSC: %s\n", clockUsesTsc() ? "yes" : "no (steady_clock)");
  int64_t s0 = steadyNowNs();
  int64_t m0 = monoNowNs();
  int64_t s0b = steadyNowNs();
  // m0 lies between s0 and s0b, up to the map's error.
  CHECK_MSG(m0 >= s0 - 1000000 && m0 <= s0b + 1000000, "offset from steady_clock " + std::to_string(m0 - s0) + " ns");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int64_t s1 = steadyNowNs();
  int64_t m1 = monoNowNs();
  double steady = static_cast<double>(s1 - s0), mono = static_cast<double>(m1 - m0);
  CHECK_MSG(std::abs(mono - steady) < 0.01 * steady + 200000, "100 ms by steady_clock = " + std::to_string(mono / 1e6) + " ms here");
}

// Never backwards on one thread, whichever reading; and across threads through a release/acquire
// hand-off for the full reading, which waits for the earlier load (the callback reading may be
// taken before an earlier load completes: clock.h, and this test saw it happen).
TEST(clock_is_monotonic_within_and_across_threads) {
  int64_t prev = callbackNowNs();
  bool backwards = false;
  for (int i = 0; i < 1000000; ++i) {
    int64_t now = (i & 1) ? callbackNowNs() : monoNowNs();
    if (now < prev) backwards = true;
    prev = now;
  }
  CHECK(!backwards);
  std::atomic<int64_t> handed{0};
  std::atomic<bool> backwardsAcross{false};
  std::thread reader([&] {
    for (int i = 0; i < 200000; ++i) {
      int64_t seen = handed.load(std::memory_order_acquire);
      int64_t now = monoNowNs();
      if (seen != 0 && now < seen) backwardsAcross.store(true);
    }
  });
  for (int i = 0; i < 200000; ++i) handed.store(monoNowNs(), std::memory_order_release);
  reader.join();
  CHECK(!backwardsAcross.load());
}

}  // namespace

TEST_MAIN()
