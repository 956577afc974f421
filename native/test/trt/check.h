// A tiny test harness (no downloads): TEST(name) registers a case, CHECK* record failures with
// file:line and keep going, main() runs every case and exits non-zero if any check failed.
#pragma once

#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tbs_test {

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

template <class A, class B>
void checkEq(A const& a, B const& b, char const* ea, char const* eb, char const* file, int line) {
  if (a == b) return;
  std::ostringstream os;
  os << ea << " == " << eb << " (got " << a << " vs " << b << ")";
  fail(file, line, os.str());
}

inline void checkContains(std::string const& hay, std::string const& needle, char const* eh, char const* file,
                          int line) {
  if (hay.find(needle) != std::string::npos) return;
  fail(file, line, std::string(eh) + " contains \"" + needle + "\" (got \"" + hay + "\")");
}

inline int runAll() {
  for (auto const& c : cases()) {
    int before = failures();
    c.fn();
    std::printf("%s %s\n", failures() == before ? "ok  " : "FAIL", c.name);
  }
  std::printf("%zu cases, %d failed checks\n", cases().size(), failures());
  return failures() == 0 ? 0 : 1;
}

}  // namespace tbs_test

#define TBS_CAT2(a, b) a##b
#define TBS_CAT(a, b) TBS_CAT2(a, b)
#define TEST(name)                                                                          \
  static void name();                                                                       \
  static tbs_test::Register TBS_CAT(register_, name)(#name, name);                          \
  static void name()
#define CHECK(cond) \
  do { if (!(cond)) tbs_test::fail(__FILE__, __LINE__, #cond); } while (0)
#define CHECK_EQ(a, b) tbs_test::checkEq((a), (b), #a, #b, __FILE__, __LINE__)
#define CHECK_CONTAINS(hay, needle) tbs_test::checkContains((hay), (needle), #hay, __FILE__, __LINE__)
#define TEST_MAIN() \
  int main() { return tbs_test::runAll(); }
