// The simulated backend's timing cache: a file of (16-byte key -> best tactic, time) entries in
// our own format (magic "TBSSIMTC", version, count, entries, FNV-1a checksum). Files, locks and
// sidecars are the shared cache store's job (core/cache_store.h); this file knows the format.
//
// What a file at the cache path may be, and what happens to it:
// - absent or empty: an empty cache; the build creates the file.
// - a valid cache: loaded; the build adds its entries to it.
// - damaged (right magic, wrong size/version/checksum): the build starts with an empty cache and
//   says so; when it saves, the damaged file is kept as "<cache>.corrupt" (see cache_store.h), so
//   a cache someone may still want to inspect or repair is never silently destroyed.
// - anything else (no magic: a model, an engine, a config; a FIFO, a directory; a file above the
//   size cap): an error before the build starts, and the file is never replaced.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "../core/cache_store.h"

namespace tbs::sim {

using CacheKey = std::array<uint8_t, 16>;

struct CacheValue {
  uint64_t tactic = 0;
  double timeMs = 0;
};

using CacheEntries = std::map<CacheKey, CacheValue>;

struct CacheParse {
  enum class Status : uint8_t { kOk = 0, kNotACache, kCorrupt };
  Status status = Status::kOk;
  CacheEntries entries;
  std::string why;  // kNotACache / kCorrupt
};

struct CacheLoad {
  CacheEntries entries;      // the file's entries plus those of pending sidecars
  int64_t fileBytes = 0;     // 0 when the file does not exist
  int32_t pendingFiles = 0;  // sidecars whose entries were added (merged into the file on save)
  std::string warning;       // the file is damaged: started with an empty cache
  std::string error;         // the path cannot be used as this backend's cache: do not build
};

CacheKey makeCacheKey(std::string const& material);

// An empty string is an empty cache (kOk).
CacheParse parseTimingCache(std::string const& bytes);

// Serialises `entries` (exposed for tests that write corrupt variants).
std::string serializeTimingCache(CacheEntries const& entries);

// Reads the cache without blocking (see readCacheFile) and adds the entries of pending sidecars,
// so that a build starts from everything measured before, saved or deferred.
CacheLoad loadTimingCache(std::string const& path);

// The store's merge for this format: current file, then pending sidecars, then `mine`; on a key
// present in several, the first wins (what is on disk stays). Refuses a file without our magic.
CacheMergeResult mergeSimCaches(CacheMergeInput const& in);

// Saves `ours` by the store's protocol (lock, re-read, merge, atomic write; a sidecar when the
// lock is not had in time).
CacheSaveResult mergeAndSaveTimingCache(std::string const& path, CacheEntries const& ours, CacheSaveOptions options = {});

}  // namespace tbs::sim
