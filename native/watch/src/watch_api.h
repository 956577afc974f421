// The one C entry point of a per-major watch part (libtbs_watch10.so / libtbs_watch11.so), called
// by the dispatcher (dispatcher.cc), which includes no TensorRT header.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
// Makes every build of `builder` (an nvinfer1::IBuilder* of the part's major, fresh from the
// factory) a watched build. libVersion: the library's getInferLibVersion(). 0 on success; else
// the reason in `why` and the builder is left as it was.
typedef int (*tbs_watch_attach_fn)(void* builder, int32_t libVersion, char* why, size_t whyLen);
int tbs_watch_attach(void* builder, int32_t libVersion, char* why, size_t whyLen);
}
