#include "trt_timing_cache.h"

#include "../core/atomic_file.h"
#include "../core/file_lock.h"
#include "trt_version.h"

namespace tbs::trt {
namespace {

constexpr int kCacheLockTimeoutMs = 120000;  // another build may be mid-save of a large cache

void addWarning(CacheStats& stats, std::string const& text) {
  stats.warning += (stats.warning.empty() ? "" : "; ") + text;
}

}  // namespace

bool TimingCacheSession::load(CacheFactory& config, std::string const& path, CacheStats& stats, std::string& error) {
  path_ = path;
  stats.path = path;
  std::string bytes;
  std::string readError;
  if (readRegularFile(path, bytes, readError) == ReadStatus::kError) {
    error = "timing cache " + readError;
    return false;
  }
  cache_.reset(config.createTimingCache(bytes.data(), bytes.size()));
  if (cache_ == nullptr) {
    if (!bytes.empty()) {
      error = "timing cache file " + path + " is not a timing cache that TensorRT " + formatTrtVersion(libVersion_) +
              " can read (corrupt, or another kind of file); it was left untouched: remove it or choose another "
              "timing cache path";
    } else {
      error = "TensorRT could not create a timing cache";
    }
    return false;
  }
  if (!config.setTimingCache(*cache_, /*ignoreMismatch=*/false)) {
    if (bytes.empty() || !config.setTimingCache(*cache_, /*ignoreMismatch=*/true)) {
      error = "TensorRT refused the timing cache in " + path;
      cache_.reset();
      return false;
    }
    addWarning(stats, "timing cache file " + path +
                          " was made on another GPU or TensorRT version; its entries were used anyway (as trtexec "
                          "does), but this build's entries cannot be merged into it");
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
#if TBS_TRT_HEADERS_AT_LEAST(10, 8)
  nvinfer1::ITimingCache const* cache = builtCache(config);
  if (!runtimeHasTimingCacheQueryKeys(libVersion_) || cache == nullptr) return -1;
  int64_t n = cache->queryKeys(nullptr, 0);  // null buffer: count only; -1 on error
  return n >= 0 ? n : -1;
#else
  (void)config;
  return -1;  // ITimingCache::queryKeys is not in these headers
#endif
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
  if (readRegularFile(path_, bytes, error) == ReadStatus::kError) {
    addWarning(stats, "timing cache not saved: " + error);
    return false;
  }
  std::unique_ptr<nvinfer1::ITimingCache> merged;
  if (!bytes.empty()) {
    merged.reset(config.createTimingCache(bytes.data(), bytes.size()));
    if (merged == nullptr) {
      addWarning(stats, "timing cache not saved: " + path_ +
                            " was replaced by something TensorRT cannot read during the build; it was left untouched");
      return false;
    }
    if (!merged->combine(*built, /*ignoreMismatch=*/false)) {
      addWarning(stats, "timing cache not saved: " + path_ +
                            " holds a cache from another GPU or TensorRT version, and TensorRT refuses to mix them; "
                            "use one cache file per GPU model and TensorRT version");
      return false;
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
