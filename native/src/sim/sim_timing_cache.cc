#include "sim_timing_cache.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "../core/atomic_file.h"
#include "../core/file_lock.h"

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

// Parses a whole file; on failure returns false with `why` (no exceptions: input is untrusted).
bool parse(std::string const& bytes, CacheEntries& out, std::string& why) {
  if (bytes.size() < kHeaderBytes + 8) {
    why = "file is too short (" + std::to_string(bytes.size()) + " bytes)";
    return false;
  }
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) {
    why = "not a simulated timing cache (bad magic)";
    return false;
  }
  auto version = get<uint32_t>(bytes, 8);
  if (version != kVersion) {
    why = "unsupported version " + std::to_string(version) + " (expected " + std::to_string(kVersion) + ")";
    return false;
  }
  auto count = get<uint32_t>(bytes, 12);
  size_t expected = kHeaderBytes + size_t{count} * kEntryBytes + 8;
  if (bytes.size() != expected) {
    why = "size " + std::to_string(bytes.size()) + " does not match " + std::to_string(count) + " entries";
    return false;
  }
  if (fnv1a(bytes.data(), bytes.size() - 8) != get<uint64_t>(bytes, bytes.size() - 8)) {
    why = "checksum mismatch";
    return false;
  }
  for (uint32_t i = 0; i < count; ++i) {
    size_t off = kHeaderBytes + size_t{i} * kEntryBytes;
    CacheKey key;
    std::memcpy(key.data(), bytes.data() + off, 16);
    out[key] = CacheValue{get<uint64_t>(bytes, off + 16), get<double>(bytes, off + 24)};
  }
  return true;
}

// 0 = read, 1 = does not exist, -1 = error (why set).
int readAll(std::string const& path, std::string& out, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return 1;
    why = std::strerror(errno);
    return -1;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    why = "read error";
    return -1;
  }
  out = ss.str();
  return 0;
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

CacheLoad loadTimingCache(std::string const& path) {
  CacheLoad r;
  std::string bytes, why;
  int rc = readAll(path, bytes, why);
  if (rc == 1) return r;
  if (rc < 0) {
    r.warning = "timing cache file " + path + " could not be read (" + why + "); started with an empty cache";
    return r;
  }
  r.fileBytes = static_cast<int64_t>(bytes.size());
  if (!parse(bytes, r.entries, why)) {
    r.entries.clear();
    r.warning = "timing cache file " + path + " is corrupt (" + why + "); started with an empty cache";
  }
  return r;
}

CacheSave mergeAndSaveTimingCache(std::string const& path, CacheEntries const& ours) {
  CacheSave r;
  FileLock lock(FileLock::lockPathFor(path), 30000);
  if (!lock.locked()) {
    r.error = "timing cache not saved: " + lock.error();
    return r;
  }
  // Entries other builds saved since we loaded are kept; a file that became corrupt is replaced.
  CacheLoad current = loadTimingCache(path);
  CacheEntries merged = std::move(current.entries);
  for (auto const& [key, value] : ours) merged.emplace(key, value);
  std::string bytes = serializeTimingCache(merged);
  AtomicWriteResult w = atomicWriteFile(path, bytes);
  if (!w.ok) {
    r.error = "timing cache not saved: " + w.error;
    return r;
  }
  r.ok = true;
  r.entriesAfter = static_cast<int64_t>(merged.size());
  r.fileBytes = static_cast<int64_t>(bytes.size());
  return r;
}

}  // namespace tbs::sim
