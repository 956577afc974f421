// A stand-in for libnvinfer.so, built only for tests (our own code, no NVIDIA binary): it exports
// the factory symbols the loader resolves, with the exact signatures of the 10.16 headers (they
// are declared there, so a mismatch fails to compile). createInferBuilder_INTERNAL logs an error
// through the given ILogger and returns null, as a real library does without a usable GPU.
// Compile-time knobs: FAKE_TRT_VERSION (encoded, e.g. 101601), FAKE_OMIT_VERSION, FAKE_OMIT_BUILDER.
#include <NvInfer.h>

extern "C" {

// What the last createInferBuilder_INTERNAL call received, for the tests to inspect via dlsym.
__attribute__((visibility("default"))) void* fakeLastLogger = nullptr;
__attribute__((visibility("default"))) int32_t fakeLastVersion = -1;
__attribute__((visibility("default"))) int32_t fakeBuilderCalls = 0;

#ifndef FAKE_OMIT_VERSION
int32_t getInferLibVersion() noexcept { return FAKE_TRT_VERSION; }
#endif

#ifndef FAKE_OMIT_BUILDER
void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
  fakeLastLogger = logger;
  fakeLastVersion = version;
  ++fakeBuilderCalls;
  if (logger != nullptr) {
    static_cast<nvinfer1::ILogger*>(logger)->log(nvinfer1::ILogger::Severity::kERROR,
                                                 "fake libnvinfer: no CUDA-capable device is detected");
  }
  return nullptr;
}
#endif

void* createInferRuntime_INTERNAL(void* /*logger*/, int32_t /*version*/) noexcept { return nullptr; }

}  // extern "C"
