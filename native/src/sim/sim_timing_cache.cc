#include "sim_timing_cache.h"

#include <cstring>

namespace tbs::sim {
namespace {

constexpr char kMagic[8] = {'T', 'B', 'S', 'S', 'I', 'M', 'T', 'C'};
constexpr uint32_t kVersion = 1;
constexpr size_t kEntryBytes = 16 + 8 + 8;
constexpr size_t kHeaderBytes = 8 + 4 + 4;

uint64_t fnv1a(void const* data, size_t n, uint64_t h = 1469598103934665603ull) {
  auto const* p = static_cast<unsigned char const*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<char const*>(&v), sizeof v);
}

template <typename T>
T get(std::string const& in, size_t off) {
  T v;
  std::memcpy(&v, in.data() + off, sizeof v);
  return v;
}

// Parses a whole file (no exceptions: input is untrusted). Only the magic decides whether the
// file is ours; once it is, any other defect makes it damaged rather than foreign.
CacheParse parse(std::string const& bytes) {
  CacheParse r;
  if (bytes.empty()) return r;
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    r.status = CacheParse::Status::kNotACache;
    r.why = "it does not start with the simulated timing cache's header \"TBSSIMTC\"";
    return r;
  }
  r.status = CacheParse::Status::kCorrupt;
  if (bytes.size() < kHeaderBytes + 8) {
    r.why = "file is too short (" + std::to_string(bytes.size()) + " bytes)";
    return r;
  }
  auto version = get<uint32_t>(bytes, 8);
  if (version != kVersion) {
    r.why = "unsupported version " + std::to_string(version) + " (expected " + std::to_string(kVersion) + ")";
    return r;
  }
  auto count = get<uint32_t>(bytes, 12);
  size_t expected = kHeaderBytes + size_t{count} * kEntryBytes + 8;
  if (bytes.size() != expected) {
    r.why = "size " + std::to_string(bytes.size()) + " does not match " + std::to_string(count) + " entries";
    return r;
  }
  if (fnv1a(bytes.data(), bytes.size() - 8) != get<uint64_t>(bytes, bytes.size() - 8)) {
    r.why = "checksum mismatch";
    return r;
  }
  for (uint32_t i = 0; i < count; ++i) {
    size_t off = kHeaderBytes + size_t{i} * kEntryBytes;
    CacheKey key;
    std::memcpy(key.data(), bytes.data() + off, 16);
    r.entries[key] = CacheValue{get<uint64_t>(bytes, off + 16), get<double>(bytes, off + 24)};
  }
  r.status = CacheParse::Status::kOk;
  return r;
}

}  // namespace

CacheKey makeCacheKey(std::string const& material) {
  uint64_t a = fnv1a(material.data(), material.size());
  uint64_t b = fnv1a(material.data(), material.size(), 0x9e3779b97f4a7c15ull);
  CacheKey key;
  std::memcpy(key.data(), &a, 8);
  std::memcpy(key.data() + 8, &b, 8);
  return key;
}

std::string serializeTimingCache(CacheEntries const& entries) {
  std::string out;
  out.reserve(kHeaderBytes + entries.size() * kEntryBytes + 8);
  out.append(kMagic, 8);
  put<uint32_t>(out, kVersion);
  put<uint32_t>(out, static_cast<uint32_t>(entries.size()));
  for (auto const& [key, value] : entries) {
    out.append(reinterpret_cast<char const*>(key.data()), 16);
    put<uint64_t>(out, value.tactic);
    put<double>(out, value.timeMs);
  }
  put<uint64_t>(out, fnv1a(out.data(), out.size()));
  return out;
}

CacheParse parseTimingCache(std::string const& bytes) { return parse(bytes); }

CacheLoad loadTimingCache(std::string const& path) {
  CacheLoad r;
  CacheFileRead file = readCacheFile(path);
  if (file.state == CacheFileRead::State::kError) {
    r.error = "cannot use the timing cache: " + file.error + "; the file is left untouched";
    return r;
  }
  if (file.state == CacheFileRead::State::kRead) {
    r.fileBytes = static_cast<int64_t>(file.bytes.size());
    CacheParse p = parse(file.bytes);
    if (p.status == CacheParse::Status::kNotACache) {
      r.error = "timing cache " + path + " is not a simulated timing cache (" + p.why +
                "); refusing to use or replace it. Give a new path, or remove the file if it is disposable";
      return r;
    }
    if (p.status == CacheParse::Status::kCorrupt) {
      r.warning = "timing cache file " + path + " is corrupt (" + p.why + "); started with an empty cache (the damaged file is kept as " +
                  path + ".corrupt when this build saves)";
    } else {
      r.entries = std::move(p.entries);
    }
  }
  // Entries a build could not save under the lock: start from them too (they are merged into
  // the file by the next save that gets the lock). A damaged sidecar is the save's business.
  for (auto const& side : listPendingCacheFiles(path)) {
    CacheFileRead s = readCacheFile(side);
    if (s.state != CacheFileRead::State::kRead) continue;
    CacheParse p = parse(s.bytes);
    if (p.status != CacheParse::Status::kOk) continue;
    for (auto const& [key, value] : p.entries) r.entries.emplace(key, value);
    ++r.pendingFiles;
  }
  return r;
}

CacheMergeResult mergeSimCaches(CacheMergeInput const& in) {
  CacheMergeResult m;
  CacheEntries merged;
  if (in.currentExists) {
    CacheParse p = parse(*in.current);
    if (p.status == CacheParse::Status::kNotACache) {
      m.refuse = true;
      m.error = "it is not a simulated timing cache (" + p.why + ")";
      return m;
    }
    // Damaged: the store keeps a copy and says where; the load already said why.
    if (p.status == CacheParse::Status::kCorrupt) {
      m.keepCurrentCopy = true;
    } else {
      merged = std::move(p.entries);
    }
  }
  for (auto const& side : *in.pending) {
    CacheParse p = parse(side);
    m.pendingMerged.push_back(p.status == CacheParse::Status::kOk);
    for (auto const& [key, value] : p.entries) merged.emplace(key, value);
  }
  CacheParse mine = parse(*in.mine);
  for (auto const& [key, value] : mine.entries) merged.emplace(key, value);
  m.bytes = serializeTimingCache(merged);
  m.entries = static_cast<int64_t>(merged.size());
  return m;
}

CacheSaveResult mergeAndSaveTimingCache(std::string const& path, CacheEntries const& ours, CacheSaveOptions options) {
  options.mineHasEntries = options.mineHasEntries && !ours.empty();
  return saveCache(path, serializeTimingCache(ours), mergeSimCaches, options);
}

}  // namespace tbs::sim
