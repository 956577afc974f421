// What a TensorRT release can do, from the one list of TensorRT facts (native/trt-facts.json, as
// core/trt_facts.h). The addon reports it for each backend in listBackends() (`capabilities`):
// for tensorrt, of the release it drives (the older of the found library and the adapter's
// headers: an option the library has but the headers lack cannot be passed, and one the headers
// have but an older library lacks would be refused); for the simulator, of the release it
// imitates. TypeScript reads these (apps/shared/trt-capabilities.ts) instead of keeping its own
// version gates. Free of TensorRT headers, like trt_version.h.
#pragma once

#include <string>
#include <vector>

#include "../core/trt_facts.h"
#include "trt_version.h"

namespace tbs::trt {

struct TrtCapabilities {
  std::string version;                            // the release text they were computed for, e.g. "10.3.0"
  std::vector<std::string> precisions;            // weakly typed precision flags it has (none on 11)
  std::vector<std::string> deprecatedPrecisions;  // flags that exist but are deprecated themselves
  bool weakTypingDeprecated = false;              // every weakly typed flag deprecated (builds warn)
  bool stronglyTypedImplied = false;              // weak typing removed: every network strongly typed
  std::vector<std::string> hardwareCompatibility;
  bool buildRoutes = false;
  bool timingCacheKeyCount = false;     // ITimingCache::queryKeys
  bool serializeToStream = false;       // buildSerializedNetworkToStream
  bool bestWithoutInt8OnCc103 = false;  // trtexec --best enables no INT8 on compute capability 10.3
};

// True when `v` is `since` or later; {0, 0} is every release.
inline bool releaseHas(TrtVersion v, facts::Version since) {
  return v.major > since.major || (v.major == since.major && v.minor >= since.minor);
}

inline TrtCapabilities capabilitiesOf(TrtVersion v, std::string const& text) {
  TrtCapabilities c;
  c.version = text;
  bool removed = releaseHas(v, facts::kWeakTypingRemoved);
  for (auto const& f : facts::kPrecisionFlags) {
    if (removed || !releaseHas(v, f.since)) continue;
    c.precisions.push_back(f.name);
    if (f.deprecated.major != 0 && releaseHas(v, f.deprecated)) c.deprecatedPrecisions.push_back(f.name);
  }
  c.weakTypingDeprecated = !removed && releaseHas(v, facts::kWeakTypingDeprecated);
  c.stronglyTypedImplied = removed;
  for (auto const& l : facts::kHardwareCompatibility) {
    if (releaseHas(v, l.since)) c.hardwareCompatibility.push_back(l.name);
  }
  c.buildRoutes = releaseHas(v, facts::kBuildRoutes);
  c.timingCacheKeyCount = releaseHas(v, facts::kTimingCacheQueryKeys);
  c.serializeToStream = releaseHas(v, facts::kStreamBuild);
  c.bestWithoutInt8OnCc103 = releaseHas(v, facts::kBestWithoutInt8OnCc103);
  return c;
}

// A release as text, as apps/shared/trt-capabilities.ts parseTrtVersion reads it: "10.3.0",
// "10.16.1.11" (parts after the patch ignored), "11.1", with surrounding spaces; false otherwise.
inline bool parseRelease(std::string const& text, TrtVersion& out) {
  size_t b = text.find_first_not_of(" \t\r\n");
  size_t e = text.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return false;
  std::string t = text.substr(b, e - b + 1);
  int32_t parts[3] = {0, 0, 0};
  size_t n = 0, at = 0;
  while (true) {
    size_t end = t.find('.', at);
    std::string part = t.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    if (n < 3) parts[n] = std::stoi(part);
    ++n;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  if (n < 2) return false;
  out = {parts[0], parts[1], parts[2]};
  return true;
}

// Capabilities of a release given as text; false when it is not one.
inline bool capabilitiesOfText(std::string const& text, TrtCapabilities& out) {
  TrtVersion v;
  if (!parseRelease(text, v)) return false;
  out = capabilitiesOf(v, text);
  return true;
}

// The release a tensorrt backend drives: the older of the library's and the adapter headers'
// (apps/shared/trt-capabilities.ts trtVersionOf says the same); the library's when either is
// not a version.
inline std::string drivenRelease(std::string const& library, std::string const& headers) {
  TrtVersion l, h;
  if (!parseRelease(library, l) || !parseRelease(headers, h)) return library;
  bool headersOlder = h.major != l.major ? h.major < l.major : h.minor != l.minor ? h.minor < l.minor : h.patch < l.patch;
  return headersOlder ? headers : library;
}

}  // namespace tbs::trt
