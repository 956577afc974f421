// A stand-in for libnvinfer.so, built only for tests (our own code, no NVIDIA binary): it exports
// the factory symbols the loader resolves, with the exact signatures of the 10.16 headers (they
// are declared there, so a mismatch fails to compile). createInferBuilder_INTERNAL logs an error
// through the given ILogger and returns null, as a real library does without a usable GPU.
// Compile-time knobs: FAKE_TRT_VERSION (encoded, e.g. 101601), FAKE_OMIT_VERSION, FAKE_OMIT_BUILDER.
#include <NvInfer.h>

namespace {
// What the last createInferBuilder_INTERNAL call received. Kept internal and read through
// functions: several fakes are loaded RTLD_GLOBAL into one test process, and exported variables
// of the same name would be (correctly) reported as ODR violations by AddressSanitizer.
void* lastLogger = nullptr;
int32_t lastVersion = -1;
int32_t builderCalls = 0;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* fakeLastLogger() { return lastLogger; }
__attribute__((visibility("default"))) int32_t fakeLastVersion() { return lastVersion; }
__attribute__((visibility("default"))) int32_t fakeBuilderCalls() { return builderCalls; }

#ifndef FAKE_OMIT_VERSION
int32_t getInferLibVersion() noexcept { return FAKE_TRT_VERSION; }
#endif

#ifndef FAKE_OMIT_BUILDER
void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
  lastLogger = logger;
  lastVersion = version;
  ++builderCalls;
  if (logger != nullptr) {
    static_cast<nvinfer1::ILogger*>(logger)->log(nvinfer1::ILogger::Severity::kERROR,
                                                 "fake libnvinfer: no CUDA-capable device is detected");
  }
  return nullptr;
}
#endif

void* createInferRuntime_INTERNAL(void* /*logger*/, int32_t /*version*/) noexcept { return nullptr; }

}  // extern "C"
