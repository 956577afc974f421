// Generated from native/trt-facts.json by scripts/gen-trt-facts.js: edit the JSON and rerun it
// (test/trt-facts.test.ts fails while the two differ). The TensorRT facts every native part reads:
// the loader (supported majors), the adapters and the simulator (option gates), and the addon,
// which reports each backend's capabilities from them (trt/trt_capabilities.h).
#pragma once

#include <cstdint>

namespace tbs::facts {

// clang-format off: one fact a line, as the JSON lists them
// A library release, major.minor; {0, 0} means "every supported release" for a since and "never"
// for a deprecation.
struct Version {
  int32_t major, minor;
};

inline constexpr int32_t kSupportedMajors[] = {10, 11};
// The newest release this code was checked against (a later minor of the same major is tried).
inline constexpr Version kLastChecked{11, 1};
// The release the simulated backend imitates unless TBS_SIM_TRT_VERSION names another.
inline constexpr char const* kSimulatedDefault = "10.16.0";

struct PrecisionFlag {
  char const* name;
  Version since;
  Version deprecated;
};
// The weakly typed precision flags, in the order they are listed everywhere; all end at
// kWeakTypingRemoved.
inline constexpr PrecisionFlag kPrecisionFlags[] = {
    {"fp16", {0, 0}, {0, 0}},
    {"bf16", {0, 0}, {0, 0}},
    {"int8", {0, 0}, {0, 0}},
    {"fp8", {0, 0}, {0, 0}},
    {"int4", {10, 1}, {10, 12}},
    {"fp4", {10, 8}, {10, 12}},
};

struct Level {
  char const* name;
  Version since;
};
// HardwareCompatibilityLevel values, as the options name them.
inline constexpr Level kHardwareCompatibility[] = {
    {"none", {0, 0}},
    {"ampere_plus", {0, 0}},
    {"same_compute_capability", {10, 9}},
};

// The first release of each gated feature.
// BuilderFlag::kEDITABLE_TIMING_CACHE
inline constexpr Version kEditableTimingCache{10, 8};
// ITimingCache::queryKeys (cache entry counts)
inline constexpr Version kTimingCacheQueryKeys{10, 8};
// IOptimizationProfile::setShapeValuesV2
inline constexpr Version kShapeValuesV2{10, 11};
// every weakly typed precision BuilderFlag deprecated
inline constexpr Version kWeakTypingDeprecated{10, 12};
// IBuilder::buildSerializedNetworkToStream
inline constexpr Version kStreamBuild{10, 13};
// trtexec --best enables no INT8 on compute capability 10.3
inline constexpr Version kBestWithoutInt8OnCc103{10, 13};
// precision BuilderFlags and trtexec --best removed: every network strongly typed
inline constexpr Version kWeakTypingRemoved{11, 0};
// IBuilderConfig::setBuildRoute
inline constexpr Version kBuildRoutes{11, 1};
// clang-format on

}  // namespace tbs::facts
