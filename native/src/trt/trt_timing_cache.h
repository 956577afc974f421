// The build's timing cache: load from a file (ignoring device mismatch, as NVIDIA's own tools
// do), honest statistics, and save as lock -> re-read -> combine -> atomic write, so several
// builds sharing one cache file lose no entries.
//
// NOT RUN HERE against a real TensorRT (needs libnvinfer and a GPU); compile-checked against the
// 10.16 headers. The file helpers are unit-tested.
#pragma once

#include <NvInfer.h>

#include <memory>
#include <string>

#include "../core/backend.h"

namespace tbs::trt {

enum class ReadStatus : uint8_t { kOk = 0, kMissing, kError };

// Whole file into `bytes`. A missing file is kMissing (not an error); anything else that fails
// is kError with `error` naming the path and the OS reason.
ReadStatus readWholeFile(std::string const& path, std::string& bytes, std::string& error);

class TimingCacheSession {
 public:
  // `canQueryKeys`: the loaded libnvinfer has ITimingCache::queryKeys (10.8+); see trt_version.h.
  explicit TimingCacheSession(bool canQueryKeys) : canQueryKeys_(canQueryKeys) {}

  // Creates the cache from `path` (empty cache when the file is missing, unreadable or corrupt,
  // with a warning in `stats`) and attaches it to `config`. Fills stats.path/entriesBefore.
  // Returns false only when TensorRT could create no cache at all (then the build runs without
  // one, and stats.warning says so).
  bool load(nvinfer1::IBuilderConfig& config, std::string const& path, CacheStats& stats);

  // Entries now in the attached cache, or -1 when unknown (library older than 10.8, or error).
  int64_t entryCount() const;

  // Under FileLock("<path>.lock"): re-reads the file, combines its entries into ours, serializes
  // and writes atomically. Fills stats.bytes; on failure stats.warning explains (the engine is
  // still good, so the caller reports a warning rather than failing the build).
  bool save(nvinfer1::IBuilderConfig& config, CacheStats& stats);

 private:
  bool canQueryKeys_;
  std::string path_;
  // Must outlive every builder that uses it (NvInfer.h, createTimingCache): the backend declares
  // this session before its IBuilder so that it is destroyed after it.
  std::unique_ptr<nvinfer1::ITimingCache> cache_;
};

}  // namespace tbs::trt
