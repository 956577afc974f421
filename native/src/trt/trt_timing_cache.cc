#include "trt_timing_cache.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "../core/atomic_file.h"
#include "../core/file_lock.h"

namespace tbs::trt {
namespace {

constexpr int kCacheLockTimeoutMs = 120000;  // another build may be mid-save of a large cache

void addWarning(CacheStats& stats, std::string const& text) {
  stats.warning += (stats.warning.empty() ? "" : "; ") + text;
}

}  // namespace

ReadStatus readWholeFile(std::string const& path, std::string& bytes, std::string& error) {
  bytes.clear();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return ReadStatus::kMissing;
    error = "cannot read " + path + " (" + std::strerror(errno) + ")";
    return ReadStatus::kError;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "cannot read " + path + ": not a regular file";
    return ReadStatus::kError;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path + " (" + std::strerror(errno) + ")";
    return ReadStatus::kError;
  }
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = "error while reading " + path;
    return ReadStatus::kError;
  }
  return ReadStatus::kOk;
}

bool TimingCacheSession::load(CacheFactory& config, std::string const& path, CacheStats& stats) {
  path_ = path;
  stats.path = path;
  std::string bytes;
  std::string error;
  ReadStatus rs = readWholeFile(path, bytes, error);
  if (rs == ReadStatus::kError) addWarning(stats, error + "; started with an empty timing cache");

  if (!bytes.empty()) {
    cache_.reset(config.createTimingCache(bytes.data(), bytes.size()));
    if (cache_ != nullptr && !config.setTimingCache(*cache_, /*ignoreMismatch=*/true)) cache_.reset();
    if (cache_ == nullptr) {
      addWarning(stats, "timing cache file " + path +
                            " is corrupt or from another TensorRT version; started with an empty cache "
                            "(the file is replaced when the build succeeds)");
    }
  }
  if (cache_ == nullptr) {
    cache_.reset(config.createTimingCache(nullptr, 0));
    if (cache_ == nullptr || !config.setTimingCache(*cache_, /*ignoreMismatch=*/true)) {
      cache_.reset();
      addWarning(stats, "TensorRT could not create a timing cache; building without one");
      return false;
    }
  }
  stats.entriesBefore = entryCount(config);
  return true;
}

nvinfer1::ITimingCache const* TimingCacheSession::builtCache(CacheFactory const& config) const {
  if (cache_ == nullptr) return nullptr;
  nvinfer1::ITimingCache const* attached = config.getTimingCache();
  return attached != nullptr ? attached : cache_.get();
}

int64_t TimingCacheSession::entryCount(CacheFactory const& config) const {
  nvinfer1::ITimingCache const* cache = builtCache(config);
  if (!canQueryKeys_ || cache == nullptr) return -1;
  int64_t n = cache->queryKeys(nullptr, 0);  // null buffer: count only; -1 on error
  return n >= 0 ? n : -1;
}

bool TimingCacheSession::save(CacheFactory& config, CacheStats& stats) {
  nvinfer1::ITimingCache const* built = builtCache(config);
  if (built == nullptr || path_.empty()) return false;
  FileLock lock(FileLock::lockPathFor(path_), kCacheLockTimeoutMs);
  if (!lock.locked()) {
    addWarning(stats, "timing cache not saved: " + lock.error());
    return false;
  }
  // Another build may have saved since we loaded: add our entries to what is on disk now, so
  // none of theirs are lost (on a conflict the entry on disk is kept, as combine() documents).
  std::string bytes;
  std::string error;
  if (readWholeFile(path_, bytes, error) == ReadStatus::kError) {
    addWarning(stats, "timing cache not saved: " + error);
    return false;
  }
  std::unique_ptr<nvinfer1::ITimingCache> merged;
  if (!bytes.empty()) {
    merged.reset(config.createTimingCache(bytes.data(), bytes.size()));
    if (merged != nullptr && !merged->combine(*built, /*ignoreMismatch=*/true)) merged.reset();
    if (merged == nullptr) {
      addWarning(stats, "entries in " + path_ +
                            " could not be merged (corrupt or another TensorRT version) and were replaced");
    }
  }
  std::unique_ptr<nvinfer1::IHostMemory> blob(merged != nullptr ? merged->serialize() : built->serialize());
  if (blob == nullptr || blob->data() == nullptr) {
    addWarning(stats, "timing cache not saved: TensorRT could not serialize it");
    return false;
  }
  AtomicWriteResult w = atomicWriteFile(path_, blob->data(), blob->size());
  if (!w.ok) {
    addWarning(stats, "timing cache not saved: " + w.error);
    return false;
  }
  stats.bytes = static_cast<int64_t>(blob->size());
  return true;
}

}  // namespace tbs::trt
