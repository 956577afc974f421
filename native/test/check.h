// A tiny test harness (no downloads), shared by the core tests and the TensorRT backend tests
// (native/test/trt): TEST(name) registers a case; CHECK* record a failure with file:line and the
// expression and keep going; main() runs every case (or those whose name contains argv[1]) and
// exits non-zero if any check failed.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace check {

struct Case {
  char const* name;
  std::function<void()> fn;
};
inline std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}
inline int& failures() {
  static int n = 0;
  return n;
}
struct Register {
  Register(char const* name, std::function<void()> fn) { cases().push_back({name, std::move(fn)}); }
};
inline void fail(char const* file, int line, std::string const& what) {
  ++failures();
  std::fprintf(stderr, "  FAIL %s:%d: %s\n", file, line, what.c_str());
}

// Each operand is evaluated once, so CHECK_EQ(counter++, 0) counts once, pass or fail.
template <class A, class B>
void checkEq(A const& a, B const& b, char const* expr, char const* file, int line) {
  if (a == b) return;
  std::ostringstream os;
  os << expr << " -- left=" << a << " right=" << b;
  fail(file, line, os.str());
}

inline void checkContains(std::string const& hay, std::string const& needle, char const* expr, char const* file, int line) {
  if (hay.find(needle) != std::string::npos) return;
  fail(file, line, std::string(expr) + " contains \"" + needle + "\" (got \"" + hay + "\")");
}

// What a test program ran against, printed first and in the summary (the TensorRT tests: the
// adapter's and the fakes' header versions, e.g. "adapter 10.16.0 × fake 10.3.0").
#ifdef TBS_TEST_BANNER
inline char const* banner() { return TBS_TEST_BANNER; }
#else
inline char const* banner() { return nullptr; }
#endif

}  // namespace check

#define TBS_CAT2(a, b) a##b
#define TBS_CAT(a, b) TBS_CAT2(a, b)
#define TEST(name)                                                           \
  static void TBS_CAT(test_, name)();                                        \
  static ::check::Register TBS_CAT(reg_, name)(#name, TBS_CAT(test_, name)); \
  static void TBS_CAT(test_, name)()

#define CHECK(cond)                                        \
  do {                                                     \
    if (!(cond)) ::check::fail(__FILE__, __LINE__, #cond); \
  } while (0)

// CHECK_MSG(cond, stream-expression): the message says what was seen.
#define CHECK_MSG(cond, msg)                            \
  do {                                                  \
    if (!(cond)) {                                      \
      std::ostringstream tbs_os_;                       \
      tbs_os_ << #cond << " -- " << msg;                \
      ::check::fail(__FILE__, __LINE__, tbs_os_.str()); \
    }                                                   \
  } while (0)

#define CHECK_EQ(a, b) ::check::checkEq((a), (b), "(" #a ") == (" #b ")", __FILE__, __LINE__)
#define CHECK_CONTAINS(hay, needle) ::check::checkContains((hay), (needle), #hay, __FILE__, __LINE__)

#define TEST_MAIN()                                                                                                       \
  int main(int argc, char** argv) {                                                                                       \
    if (::check::banner() != nullptr) std::printf("[%s]\n", ::check::banner());                                           \
    int ran = 0;                                                                                                          \
    for (auto& c : ::check::cases()) {                                                                                    \
      if (argc > 1 && std::string(c.name).find(argv[1]) == std::string::npos) continue;                                   \
      int before = ::check::failures();                                                                                   \
      auto t0 = std::chrono::steady_clock::now();                                                                         \
      c.fn();                                                                                                             \
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();               \
      std::printf("%s %s (%.0f ms)\n", ::check::failures() == before ? "ok  " : "FAIL", c.name, ms);                      \
      ++ran;                                                                                                              \
    }                                                                                                                     \
    std::printf("%d cases, %d failed checks%s%s%s\n", ran, ::check::failures(), ::check::banner() != nullptr ? " [" : "", \
                ::check::banner() != nullptr ? ::check::banner() : "", ::check::banner() != nullptr ? "]" : "");          \
    return ::check::failures() == 0 && ran > 0 ? 0 : 1;                                                                   \
  }
