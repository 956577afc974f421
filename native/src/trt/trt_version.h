// TensorRT run-time version arithmetic and the library-version gates of every option, kept free
// of TensorRT headers so that the addon (which never includes them) and the tests can use them.
// getInferLibVersion() of 10.x and 11.x returns major*10000 + minor*100 + patch
// (NV_TENSORRT_VERSION_INT); 8.x/9.x used major*1000 + minor*100 + patch, which we only decode
// to word an error message.
//
// Two gates apply to every feature: the adapter's headers must declare it (checked at compile
// time on NV_TENSORRT_MAJOR/MINOR in the adapter) and the loaded library must implement it
// (checked here at run time). NVIDIA supports a library at least as new as the headers, not
// older, so a 10.16-built adapter driving a 10.3 library must not pass anything 10.3 lacks: an
// unknown enum value is rejected by TensorRT, and a virtual method the library's vtable lacks
// is a call past its end.
#pragma once

#include <cstdint>
#include <string>

#include "../core/trt_facts.h"

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

inline constexpr int32_t encodeTrtVersion(int32_t major, int32_t minor, int32_t patch = 0) { return major * 10000 + minor * 100 + patch; }

inline std::string formatTrtVersion(TrtVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

inline std::string formatTrtVersion(int32_t encoded) { return formatTrtVersion(decodeTrtVersion(encoded)); }

// "10.8.0" or "10.8" -> {10, 8, 0}; false for anything else ("10", "", "0.1.0" is accepted as
// text but has major 0).
inline bool parseTrtVersionText(std::string const& text, TrtVersion& out) {
  int32_t parts[3] = {0, 0, 0};
  int n = 0;
  size_t at = 0;
  while (n < 3 && at < text.size()) {
    size_t end = text.find('.', at);
    std::string part = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    parts[n++] = std::stoi(part);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  if (n < 2) return false;
  out = {parts[0], parts[1], parts[2]};
  return true;
}

// The version an adapter passes to TensorRT's factory functions (createInferBuilder_INTERNAL,
// createInferRuntime_INTERNAL): the older of its headers and the loaded library. A library is
// entitled to refuse a version newer than itself (the fakes do; whether a real one does is not
// observed here), and every call the adapter makes is kept inside the older release's virtual
// tables by the run-time gates (libHas), so the older version is the honest one to declare.
inline int32_t factoryVersion(int32_t headerVersion, int32_t libVersion) {
  return libVersion > 0 && libVersion < headerVersion ? libVersion : headerVersion;
}

// True when the library version `encoded` is at least major.minor (any later major counts).
inline bool libAtLeast(int32_t encoded, int32_t major, int32_t minor) {
  TrtVersion v = decodeTrtVersion(encoded);
  return v.major > major || (v.major == major && v.minor >= minor);
}

// First library version of each gated feature: native/trt-facts.json, the one list of them
// (core/trt_facts.h is generated from it), under the names the adapters use.
using Since = facts::Version;

// The precision flag `name` of the facts (a name the list lacks fails to compile where constant).
inline constexpr facts::PrecisionFlag precisionFact(char const* name) {
  for (auto const& f : facts::kPrecisionFlags) {
    char const* a = f.name;
    char const* b = name;
    while (*a != '\0' && *a == *b) ++a, ++b;
    if (*a == *b) return f;
  }
  throw "precisionFact: no such precision flag in native/trt-facts.json";
}
inline constexpr Since hardwareCompatibilitySince(char const* name) {
  for (auto const& l : facts::kHardwareCompatibility) {
    char const* a = l.name;
    char const* b = name;
    while (*a != '\0' && *a == *b) ++a, ++b;
    if (*a == *b) return l.since;
  }
  throw "hardwareCompatibilitySince: no such level in native/trt-facts.json";
}

inline constexpr Since kSinceInt4Flag = precisionFact("int4").since;               // BuilderFlag::kINT4 (10.x only)
inline constexpr Since kSinceFp4Flag = precisionFact("fp4").since;                 // BuilderFlag::kFP4 (10.x only)
inline constexpr Since kSinceEditableTimingCache = facts::kEditableTimingCache;    // BuilderFlag::kEDITABLE_TIMING_CACHE
inline constexpr Since kSinceTimingCacheQueryKeys = facts::kTimingCacheQueryKeys;  // ITimingCache::queryKeys
inline constexpr Since kSinceSameComputeCapability = hardwareCompatibilitySince("same_compute_capability");  // HardwareCompatibilityLevel
inline constexpr Since kSinceShapeValuesV2 = facts::kShapeValuesV2;                 // IOptimizationProfile::setShapeValuesV2
inline constexpr Since kSinceStreamBuild = facts::kStreamBuild;                     // IBuilder::buildSerializedNetworkToStream
inline constexpr Since kSinceBuildRoutes = facts::kBuildRoutes;                     // IBuilderConfig::setBuildRoute
inline constexpr Since kSinceDeprecatedInt4Fp4 = precisionFact("int4").deprecated;  // kINT4/kFP4 deprecated
inline constexpr Since kSinceWeakTypingDeprecated = facts::kWeakTypingDeprecated;   // every precision flag deprecated

inline bool libHas(int32_t encoded, Since s) { return libAtLeast(encoded, s.major, s.minor); }

inline std::string sinceText(Since s) { return std::to_string(s.major) + "." + std::to_string(s.minor); }

// Kept for the timing-cache session: ITimingCache::queryKeys exists in the vtable of 10.8+ only.
inline bool runtimeHasTimingCacheQueryKeys(int32_t encoded) { return libHas(encoded, kSinceTimingCacheQueryKeys); }

}  // namespace tbs::trt
