// TensorRT run-time version arithmetic, kept free of TensorRT headers so it is unit-testable
// anywhere. getInferLibVersion() of 10.x returns NV_TENSORRT_VERSION_INT(major, minor, patch) =
// major*10000 + minor*100 + patch (NvInferRuntimeBase.h, 10.16 headers); 8.x/9.x used
// major*1000 + minor*100 + patch, which we only decode to word an error message.
#pragma once

#include <cstdint>
#include <string>

namespace tbs::trt {

struct TrtVersion {
  int32_t major = 0;
  int32_t minor = 0;
  int32_t patch = 0;
};

inline TrtVersion decodeTrtVersion(int32_t v) {
  if (v >= 10000) return {v / 10000, (v / 100) % 100, v % 100};
  return {v / 1000, (v / 100) % 10, v % 100};  // pre-10 scheme (8.6.1 = 8601)
}

inline std::string formatTrtVersion(TrtVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

inline std::string formatTrtVersion(int32_t encoded) { return formatTrtVersion(decodeTrtVersion(encoded)); }

// ITimingCache::queryKeys exists in the vtable of libnvinfer 10.8 and later only. Calling it
// through 10.16 headers on an older library would call past the end of its vtable (undefined
// behaviour), so every call site checks the loaded library's version with this first.
inline bool runtimeHasTimingCacheQueryKeys(int32_t encoded) {
  TrtVersion v = decodeTrtVersion(encoded);
  return v.major > 10 || (v.major == 10 && v.minor >= 8);
}

}  // namespace tbs::trt
