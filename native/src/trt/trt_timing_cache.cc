#include "trt_timing_cache.h"

#include <vector>

#include "trt_version.h"

namespace tbs::trt {
namespace {

constexpr int kCacheLockTimeoutMs = 120000;  // another build may be mid-save of a large cache

void addWarning(CacheStats& stats, std::string const& text) {
  if (text.empty()) return;
  stats.warning += (stats.warning.empty() ? "" : "; ") + text;
}

using CachePtr = std::unique_ptr<nvinfer1::ITimingCache>;

// createTimingCache on bytes read from a file; null when TensorRT cannot read them (one of the
// two known answers to bad bytes; the other is an empty cache, which readProof() catches).
CachePtr deserialize(CacheFactory& config, std::string const& bytes) {
  return CachePtr(config.createTimingCache(bytes.data(), bytes.size()));
}

size_t serializedSize(nvinfer1::ITimingCache const& cache) {
  std::unique_ptr<nvinfer1::IHostMemory> blob(cache.serialize());
  return blob != nullptr && blob->data() != nullptr ? blob->size() : 0;
}

}  // namespace

std::string TimingCacheSession::readProof(nvinfer1::ITimingCache const& loaded, std::string const& bytes) const {
  if (bytes.empty()) return {};
  // 10.8+: a file TensorRT read has its entries in the loaded cache. A file without entries is
  // proven by the size test below (an empty cache serializes to its header alone).
  int64_t entries = countEntries(&loaded);
  if (entries > 0) return {};
  // Every version: the loaded cache serializes back to the file's size. ASSUMED, not observed
  // here: that TensorRT re-serializes a cache it read to the same number of bytes. Where that
  // does not hold, the file is only ever kept (never replaced) and the entries go to a sidecar.
  size_t size = serializedSize(loaded);
  if (size == bytes.size()) return {};
  std::string loadedText = entries == 0 ? "no entries" : "a cache of " + std::to_string(size) + " bytes";
  return "TensorRT " + formatTrtVersion(libVersion_) + " loaded " + loadedText + " from its " + std::to_string(bytes.size()) +
         " bytes, so it cannot be proven that TensorRT read it (TensorRT is known to " +
         "go on with an empty cache when it cannot read one)";
}

bool TimingCacheSession::load(CacheFactory& config, std::string const& path, CacheStats& stats, std::string& error, bool pinned) {
  path_ = path;
  stats.path = path;
  CacheFileRead file = readCacheFile(path);
  if (file.state == CacheFileRead::State::kError) {
    error = "cannot use the timing cache: " + file.error + "; the file is left untouched";
    return false;
  }
  if (pinned && file.bytes.empty()) {
    error = "pinned timing cache " + path + " is missing or empty: a pinned build needs the cache of an earlier build";
    return false;
  }
  std::string const& bytes = file.bytes;  // empty when absent: TensorRT makes an empty cache
  cache_ = deserialize(config, bytes);
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
  // Bad bytes may come back as an EMPTY cache instead of null: the build goes on, but the file
  // must never be replaced by what this build saves (the save checks the same proof again on
  // the file as it is then, and puts this build's entries in a sidecar). Proven on the file's
  // cache alone, before sidecars are combined in: without entry counts (before 10.8) the proof
  // is the size, which a sidecar's entries would change.
  std::string const why = readProof(*cache_, bytes);
  // Entries a build could not save under the lock: start from them too (the next save merges
  // them into the file). One TensorRT will not combine (another device or version) is the save's
  // business: it is kept as "<sidecar>.rejected" there.
  for (auto const& side : pinned ? std::vector<std::string>{} : listPendingCacheFiles(path)) {
    CacheFileRead s = readCacheFile(side);
    if (s.state != CacheFileRead::State::kRead || s.bytes.empty()) continue;
    CachePtr pending = deserialize(config, s.bytes);
    if (pending != nullptr) cache_->combine(*pending, /*ignoreMismatch=*/false);
  }
  // A file made on another GPU or by another TensorRT version: what a fresh cache of this
  // library and device refuses to combine without ignoreMismatch (NvInferRuntime.h: combine fails
  // for another version, and for another device unless ignoreMismatch). It cannot be found out at
  // save time: the builder adds this GPU's measurements to the very cache it was given, whose
  // header still names the other device, so the file's cache and the built one would agree and
  // combine. So it is used as it is and never written to.
  if (!bytes.empty()) {
    CachePtr fresh = deserialize(config, std::string());
    foreign_ = fresh != nullptr && !fresh->combine(*cache_, /*ignoreMismatch=*/false);
  }
  // As trtexec attaches a cache: ignoreMismatch = true, so that a cache made on another GPU is
  // used without TensorRT logging an ERROR.
  if (!config.setTimingCache(*cache_, /*ignoreMismatch=*/true)) {
    error = "TensorRT refused the timing cache in " + path + "; the file is left untouched";
    cache_.reset();
    return false;
  }
  if (!why.empty()) {
    if (pinned) {
      error = "pinned timing cache " + path + ": " + why + "; a pinned build cannot run from it (the file is left untouched)";
      return false;  // cache_ stays: the config holds it until the builder is gone
    }
    addWarning(stats, "timing cache file " + path + " is kept as it is: " + why +
                          "; this build's entries go to a sidecar next to it (remove or rename the file to "
                          "start a new cache there)");
  }
  if (foreign_ && !pinned) {
    addWarning(stats, "timing cache file " + path +
                          " was made on another GPU or by another TensorRT version (TensorRT will not combine it with a cache "
                          "made here): it is used as it is, as trtexec uses one, and left byte for byte; this build's entries "
                          "are not saved (use one cache file per GPU model and TensorRT version)");
  }
  stats.entriesBefore = entryCount(config);
  return true;
}

nvinfer1::ITimingCache const* TimingCacheSession::builtCache(CacheFactory const& config) const {
  if (cache_ == nullptr) return nullptr;
  nvinfer1::ITimingCache const* attached = config.getTimingCache();
  return attached != nullptr ? attached : cache_.get();
}

int64_t TimingCacheSession::countEntries(nvinfer1::ITimingCache const* cache) const {
#if TBS_TRT_HEADERS_AT_LEAST(10, 8)
  if (!runtimeHasTimingCacheQueryKeys(libVersion_) || cache == nullptr) return -1;
  int64_t n = cache->queryKeys(nullptr, 0);  // null buffer: count only; -1 on error
  return n >= 0 ? n : -1;
#else
  (void)cache;
  return -1;  // ITimingCache::queryKeys is not in these headers
#endif
}

int64_t TimingCacheSession::entryCount(CacheFactory const& config) const { return countEntries(builtCache(config)); }

bool TimingCacheSession::save(CacheFactory& config, CacheStats& stats) {
  nvinfer1::ITimingCache const* built = builtCache(config);
  if (built == nullptr || path_.empty() || foreign_) return false;  // a foreign file: said at load
  std::unique_ptr<nvinfer1::IHostMemory> blob(built->serialize());
  if (blob == nullptr || blob->data() == nullptr) {
    addWarning(stats, "timing cache not saved: TensorRT could not serialize it");
    return false;
  }
  std::string const mine(static_cast<char const*>(blob->data()), blob->size());

  // Runs under the lock with the file as it is now: this build's entries go INTO what is on
  // disk (another build may have saved since this one loaded), as trtexec merges; on a key
  // present in both, combine() keeps the one on disk.
  auto merge = [&](CacheMergeInput const& in) {
    CacheMergeResult m;
    CachePtr base = deserialize(config, in.currentExists ? *in.current : std::string());
    if (base == nullptr) {
      m.refuse = true;
      m.error = in.currentExists && !in.current->empty() ? "it is not a timing cache that TensorRT " + formatTrtVersion(libVersion_) +
                                                               " can read (it was replaced during the build)"
                                                         : "TensorRT could not create a timing cache";
      return m;
    }
    // Never replace a file TensorRT may not have read (an empty cache for bad bytes).
    if (in.currentExists) {
      if (std::string why = readProof(*base, *in.current); !why.empty()) {
        m.refuse = true;
        m.error = why;
        return m;
      }
    }
    for (auto const& side : *in.pending) {
      CachePtr pending = deserialize(config, side);
      m.pendingMerged.push_back(pending != nullptr && base->combine(*pending, /*ignoreMismatch=*/false));
    }
    if (!base->combine(*built, /*ignoreMismatch=*/false)) {
      m.refuse = true;
      m.error =
          "it holds a cache from another GPU or TensorRT version, and TensorRT refuses to mix them; use one "
          "cache file per GPU model and TensorRT version";
      return m;
    }
    std::unique_ptr<nvinfer1::IHostMemory> out(base->serialize());
    if (out == nullptr || out->data() == nullptr) {
      m.refuse = true;
      m.error = "TensorRT could not serialize the merged cache";
      return m;
    }
    m.bytes.assign(static_cast<char const*>(out->data()), out->size());
    m.entries = countEntries(base.get());
    return m;
  };

  CacheSaveOptions options;
  options.lockTimeoutMs = cacheLockTimeoutMs(kCacheLockTimeoutMs);
  options.mineHasEntries = countEntries(built) != 0;
  CacheSaveResult r = saveCache(path_, mine, merge, options);
  addWarning(stats, r.warning);
  stats.deferredPath = r.deferredPath;
  if (r.outcome == CacheSaveResult::Outcome::kSaved) {
    stats.bytes = r.fileBytes;
    return true;
  }
  // Without entries of its own and without the lock, a build has nothing to keep and nothing to
  // say (the store is silent then); every other outcome comes with the store's warning.
  if (r.warning.empty() && !r.error.empty()) addWarning(stats, "timing cache not saved: " + r.error);
  return !r.deferredPath.empty();
}

}  // namespace tbs::trt
