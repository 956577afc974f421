// The build's timing cache, handled as NVIDIA's trtexec does: load with ignoreMismatch = true,
// and when saving, lock the file, re-read it, combine this build's cache INTO the file's with
// ignoreMismatch = false, and write atomically, so several builds sharing one cache file lose no
// entries and a cache from another device or TensorRT version is never silently mixed.
//
// A file TensorRT cannot deserialize is not a timing cache: the build stops before it starts and
// the file is never overwritten (it may be something the user needs, named by mistake).
//
// NOT RUN HERE against a real TensorRT (needs libnvinfer and a GPU). The session logic (missing,
// foreign, mismatched and non-regular files, the queryKeys version guard, merge-under-lock with
// concurrent savers, save after cancel) is tested with fake ITimingCache objects that enforce
// the documented combine()/setTimingCache() rules.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "../core/backend.h"
#include "safe_read.h"
#include "trt_headers.h"

namespace tbs::trt {

// Kept under its old name for callers and tests: see safe_read.h.
inline ReadStatus readWholeFile(std::string const& path, std::string& bytes, std::string& error) {
  return readRegularFile(path, bytes, error);
}

// The two IBuilderConfig calls the session needs, behind an interface so that tests can supply
// fake caches. BuilderConfigCaches is the production implementation.
class CacheFactory {
 public:
  virtual ~CacheFactory() = default;
  virtual nvinfer1::ITimingCache* createTimingCache(void const* blob, std::size_t size) noexcept = 0;
  virtual bool setTimingCache(nvinfer1::ITimingCache const& cache, bool ignoreMismatch) noexcept = 0;
  virtual nvinfer1::ITimingCache const* getTimingCache() const noexcept = 0;
};

class BuilderConfigCaches final : public CacheFactory {
 public:
  explicit BuilderConfigCaches(nvinfer1::IBuilderConfig& config) : config_(config) {}
  nvinfer1::ITimingCache* createTimingCache(void const* blob, std::size_t size) noexcept override {
    return config_.createTimingCache(blob, size);
  }
  bool setTimingCache(nvinfer1::ITimingCache const& cache, bool ignoreMismatch) noexcept override {
    return config_.setTimingCache(cache, ignoreMismatch);
  }
  nvinfer1::ITimingCache const* getTimingCache() const noexcept override { return config_.getTimingCache(); }

 private:
  nvinfer1::IBuilderConfig& config_;
};

class TimingCacheSession {
 public:
  // `libVersion`: getInferLibVersion() of the loaded library (gates queryKeys, 10.8+).
  explicit TimingCacheSession(int32_t libVersion) : libVersion_(libVersion) {}

  // Creates the cache from `path` (an empty cache when the file is missing or empty) and
  // attaches it to `config`. False with `error` when the file cannot be read safely, is not a
  // timing cache TensorRT can read, or TensorRT refuses it: the build must not start (and the
  // file is left alone). A cache made on another device or TensorRT version is attached with
  // ignoreMismatch and reported in stats.warning. Fills stats.path / entriesBefore.
  bool load(CacheFactory& config, std::string const& path, CacheStats& stats, std::string& error);

  nvinfer1::ITimingCache* cache() const { return cache_.get(); }

  // Entries now in the cache attached to `config`, or -1 when unknown (library or headers older
  // than 10.8, or an error).
  int64_t entryCount(CacheFactory const& config) const;

  // Under FileLock("<path>.lock"): re-reads the file, combines this build's cache into what is
  // on disk now (ignoreMismatch = false), serializes and writes atomically. Fills stats.bytes;
  // on failure stats.warning explains and the file is unchanged (the engine is still good, so
  // the caller reports a warning rather than failing the build).
  bool save(CacheFactory& config, CacheStats& stats);

 private:
  // The cache the builder used: what the config reports, else the one we attached.
  nvinfer1::ITimingCache const* builtCache(CacheFactory const& config) const;

  int32_t libVersion_;
  std::string path_;
  // Must outlive every builder that uses it (NvInfer.h, createTimingCache): the backend declares
  // this session before its IBuilder so that it is destroyed after it.
  std::unique_ptr<nvinfer1::ITimingCache> cache_;
};

}  // namespace tbs::trt
