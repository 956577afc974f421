// The build's timing cache: load from a file (ignoring device mismatch, as NVIDIA's own tools
// do), honest statistics, and save as lock -> re-read -> combine -> atomic write, so several
// builds sharing one cache file lose no entries.
//
// NOT RUN HERE against a real TensorRT (needs libnvinfer and a GPU); compile-checked against the
// 10.16 headers. The session logic (missing/corrupt/rejected files, the queryKeys version guard,
// merge-under-lock with concurrent savers) is unit-tested with fake ITimingCache objects.
#pragma once

#include <NvInfer.h>

#include <cstddef>
#include <memory>
#include <string>

#include "../core/backend.h"

namespace tbs::trt {

enum class ReadStatus : uint8_t { kOk = 0, kMissing, kError };

// Whole file into `bytes`. A missing file is kMissing (not an error); anything else that fails
// is kError with `error` naming the path and the OS reason.
ReadStatus readWholeFile(std::string const& path, std::string& bytes, std::string& error);

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
  // `canQueryKeys`: the loaded libnvinfer has ITimingCache::queryKeys (10.8+); see trt_version.h.
  explicit TimingCacheSession(bool canQueryKeys) : canQueryKeys_(canQueryKeys) {}

  // Creates the cache from `path` (empty cache when the file is missing, unreadable or corrupt,
  // with a warning in `stats`) and attaches it to `config`. Fills stats.path/entriesBefore.
  // Returns false only when TensorRT could create no cache at all (then the build runs without
  // one, and stats.warning says so).
  bool load(CacheFactory& config, std::string const& path, CacheStats& stats);

  nvinfer1::ITimingCache* cache() const { return cache_.get(); }

  // Entries now in the cache attached to `config`, or -1 when unknown (library older than 10.8,
  // or an error).
  int64_t entryCount(CacheFactory const& config) const;

  // Under FileLock("<path>.lock"): re-reads the file, combines this build's cache into what is
  // on disk now (as NVIDIA's trtexec does), serializes and writes atomically. Fills stats.bytes;
  // on failure stats.warning explains (the engine is still good, so the caller reports a warning
  // rather than failing the build).
  bool save(CacheFactory& config, CacheStats& stats);

 private:
  // The cache the builder used: what the config reports, else the one we attached.
  nvinfer1::ITimingCache const* builtCache(CacheFactory const& config) const;

  bool canQueryKeys_;
  std::string path_;
  // Must outlive every builder that uses it (NvInfer.h, createTimingCache): the backend declares
  // this session before its IBuilder so that it is destroyed after it.
  std::unique_ptr<nvinfer1::ITimingCache> cache_;
};

}  // namespace tbs::trt
