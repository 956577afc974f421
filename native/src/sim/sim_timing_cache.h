// The simulated backend's timing cache: a file of (16-byte key -> best tactic, time) entries in
// our own format (magic "TBSSIMTC", version, count, entries, FNV-1a checksum). It follows the
// TensorRT practice from shared/TENSORRT.md: load tolerantly (a bad file means a warning and an
// empty cache, never a crash), and save by re-reading under a file lock, merging, and writing
// atomically, so several builds sharing one file lose no entries.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace tbs::sim {

using CacheKey = std::array<uint8_t, 16>;

struct CacheValue {
  uint64_t tactic = 0;
  double timeMs = 0;
};

using CacheEntries = std::map<CacheKey, CacheValue>;

struct CacheLoad {
  CacheEntries entries;
  int64_t fileBytes = 0;  // 0 when the file does not exist
  std::string warning;    // set when the file existed but could not be used
};

struct CacheSave {
  bool ok = false;
  int64_t entriesAfter = 0;  // entries in the file after the merge
  int64_t fileBytes = 0;
  std::string error;
};

CacheKey makeCacheKey(std::string const& material);

// Missing file -> empty, no warning. Unreadable/corrupt/wrong version -> empty + warning.
CacheLoad loadTimingCache(std::string const& path);

// Serialises `entries` (exposed for tests that write corrupt variants).
std::string serializeTimingCache(CacheEntries const& entries);

// Locks "<path>.lock", re-reads the file (entries written meanwhile by other builds are kept),
// adds `ours`, writes the union atomically.
CacheSave mergeAndSaveTimingCache(std::string const& path, CacheEntries const& ours);

}  // namespace tbs::sim
