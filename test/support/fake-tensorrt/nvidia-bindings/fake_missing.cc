// What NVIDIA's bindings link against that the project's fake libnvinfer does not provide (the
// refitter; the watch tests never refit): a null refitter, as TensorRT returns on failure.
#include <cstdint>

extern "C" __attribute__((weak)) void* createInferRefitter_INTERNAL(void* /*engine*/, void* /*logger*/, int32_t /*version*/) noexcept { return nullptr; }
