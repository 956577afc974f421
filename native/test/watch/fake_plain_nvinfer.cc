// A header-free stand-in for libnvinfer (test-only, our own code) for the dispatcher's tests: the
// builder it returns is a marker object, never used as a builder; the version is FAKE_VERSION
// from the environment (default 9.0.0: a major the shim has no part for).
#include <cstdint>
#include <cstdlib>

extern "C" {
int tbs_fake_plain_builder = 0;
int32_t getInferLibVersion() noexcept {
  char const* v = std::getenv("FAKE_VERSION");
  return v != nullptr ? std::atoi(v) : 90000;
}
void* createInferBuilder_INTERNAL(void*, int32_t) noexcept { return &tbs_fake_plain_builder; }
}
