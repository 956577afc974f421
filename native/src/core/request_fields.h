// The kinds of value a build request field can hold, and what request_fields.def (the list of
// fields) expands into besides BuildRequest itself: the list as data (for the addon to export)
// and the lower bounds every backend checks. No Node-API here: the core and its tests use it.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "trt_facts.h"

namespace tbs {

struct ShapeRange {
  std::vector<int64_t> min, opt, max;
};

// Values (not dimensions) of a shape-tensor input; may be zero or negative (e.g. -1 in a Reshape
// target), one entry per element of the shape tensor.
struct ShapeValueRange {
  std::vector<int64_t> min, opt, max;
};

struct LayerInfo {
  std::string name;
  std::string op;
};

enum class SimFaultKind : uint8_t { kNone = 0, kFail, kCrash, kHang };

// One tag per kind: its C++ type, the JS type the reader takes (what apps/worker/addon.ts checks
// the options table's values against) and the C++ type's name as the list reports it.
namespace request_kind {
#define TBS_REQUEST_KIND(Name, Js, ...)              \
  struct Name {                                      \
    using type = __VA_ARGS__;                        \
    static constexpr char const* js = Js;            \
    static constexpr char const* cxx = #__VA_ARGS__; \
  };
TBS_REQUEST_KIND(Text, "string", std::string)
TBS_REQUEST_KIND(RequiredText, "string", std::string)
TBS_REQUEST_KIND(Int32, "integer", int32_t)
TBS_REQUEST_KIND(Int64, "integer", int64_t)
TBS_REQUEST_KIND(Uint64, "integer", uint64_t)
TBS_REQUEST_KIND(Double, "number", double)
TBS_REQUEST_KIND(DeviceIndex, "integer", int32_t)  // -1, or an integer >= 0 (else a TypeError)
TBS_REQUEST_KIND(Flag, "boolean", bool)
TBS_REQUEST_KIND(Texts, "string[]", std::vector<std::string>)
TBS_REQUEST_KIND(DimRanges, "ranges", std::map<std::string, ShapeRange>)
TBS_REQUEST_KIND(ValueRanges, "ranges", std::map<std::string, ShapeValueRange>)
TBS_REQUEST_KIND(SimFault, "string", SimFaultKind)  // "", "fail", "crash", "hang"
TBS_REQUEST_KIND(Layers, "layers", std::vector<LayerInfo>)
#undef TBS_REQUEST_KIND
}  // namespace request_kind

enum class RequestOrigin : uint8_t { Option, Worker };

inline constexpr int64_t kNoMin = std::numeric_limits<int64_t>::min();
// The TensorRT releases a field's setting exists in (request_fields.def's since/before columns).
inline constexpr facts::Version kEvery{0, 0};         // since: every supported release
inline constexpr facts::Version kNever{0, 0};         // before: never removed
inline constexpr facts::Version kNoTensorRT{-1, -1};  // since: no TensorRT setting (simulated backend, host)

// One field of the list, as data.
struct RequestFieldInfo {
  char const* key;
  char const* jsType;
  char const* cxxType;
  char const* unit;
  RequestOrigin origin;
  facts::Version since;   // kEvery, kNoTensorRT or a release
  facts::Version before;  // kNever or a release
  int64_t min;            // kNoMin: none
};

inline constexpr RequestFieldInfo kRequestFields[] = {
#define TBS_REQUEST_FIELD(member, Kind, unset, unit, origin, since, before, min) \
  {#member, request_kind::Kind::js, request_kind::Kind::cxx, unit, RequestOrigin::origin, since, before, min},
#include "request_fields.def"
#undef TBS_REQUEST_FIELD
};

// The lower bounds of the list's numbers (its `min` column): a value below one, other than the
// field's `unset`, is refused as "<key> must be >= <min> (or unset), got <value>". Backends call
// it before they apply anything (a template so it needs BuildRequest only where it is used).
template <typename Request>
bool checkRequestMinimums(Request const& request, std::string& error) {
  Request const unset{};  // each member starts at its `unset`
#define TBS_REQUEST_FIELD(member, Kind, unsetValue, unit, origin, since, before, min)                              \
  if constexpr ((min) != kNoMin) {                                                                                 \
    if (request.member != unset.member && static_cast<int64_t>(request.member) < (min)) {                          \
      error = #member " must be >= " + std::to_string(min) + " (or unset), got " + std::to_string(request.member); \
      return false;                                                                                                \
    }                                                                                                              \
  }
#include "request_fields.def"
#undef TBS_REQUEST_FIELD
  return true;
}

}  // namespace tbs
