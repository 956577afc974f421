// The build-route list of a TensorRT library (IBuilderConfig::getAllBuildRoutes, 11.1+), kept on
// disk. Reading it needs a builder: CUDA start-up and TensorRT's builder kernel library, about
// 2 GB of host memory, 300 MB of GPU memory and seconds (public figures, not measured here). So
// it is read only when asked (TrtBackend::buildRoutes) and then kept here, keyed by what would
// change it: the library file (path, size, modification time) and the GPU it was read on.
// Listing backends then reports routes only when this file already has them.
//
// Where: <state dir>/build-routes/<hash>.json, the state dir being TBS_STATE_DIR, else
// $XDG_STATE_HOME/trt-build-studio, else ~/.local/state/trt-build-studio (as the app's other
// per-user state, apps/service/build-profiles.ts). The file's first line is the whole key, so a
// hash collision reads as a miss. Written atomically (temp file + rename).
//
// No TensorRT header: the raw JSON is stored as TensorRT returned it; the knobs in it are parsed
// elsewhere.
#pragma once

#include <cstdint>
#include <string>

namespace tbs::trt {

struct RoutesCacheKey {
  std::string library;  // real path of libnvinfer
  int64_t size = -1;
  int64_t mtimeNs = -1;
  std::string gpu;  // name of the GPU the routes were read on ("" when unknown)
  std::string line() const;
};

// False with `error` when the library file cannot be examined.
bool routesCacheKey(std::string const& libraryPath, std::string const& gpu, RoutesCacheKey& out, std::string& error);

// "" when no state folder can be named (no HOME and no TBS_STATE_DIR).
std::string routesCacheFile(RoutesCacheKey const& key);

// True with `json` when the cache holds routes for exactly this key; `json` is "" when the
// library listed none (an empty database is remembered like any other).
bool readCachedRoutes(RoutesCacheKey const& key, std::string& json);

// Keeps `json` for `key`; false with `error` (the caller goes on: the cache only saves time).
bool writeCachedRoutes(RoutesCacheKey const& key, std::string const& json, std::string& error);

}  // namespace tbs::trt
