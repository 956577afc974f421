// The build's timing cache, handled as NVIDIA's trtexec does (attach with ignoreMismatch = true;
// merge this build's cache into the file's with combine(..., ignoreMismatch = false)), on top of
// the shared cache store (core/cache_store.h), which the simulated backend uses too: reads that
// never block on a FIFO or read without bound, saving under "<cache>.lock" with a re-read and
// merge of what is on disk now, a sidecar "<cache>.pending-<pid>-<n>" when the lock cannot be
// had in time (CacheStats.deferredPath), and sidecars folded in by the next save. This file only
// knows how TensorRT reads, merges and writes a cache.
//
// A file TensorRT cannot deserialize is not a timing cache we may touch: the build stops before
// it starts, and if the file turns into one during the build, the save refuses to replace it
// (this build's entries then go to a sidecar, so nothing measured is lost).
//
// TensorRT is known to answer bad bytes with an EMPTY cache instead of null (it logs "The timing
// cache will not be used!"). So before a file is replaced, it is proven that TensorRT read it:
// 10.8+ the loaded cache has entries (queryKeys), and on every version a cache that serializes
// back to the file's size counts as read. Unproven: the file is kept byte for byte, the build
// goes on, and its entries go to a sidecar, with a warning that says why.
//
// NOT RUN HERE against a real TensorRT (needs libnvinfer and a GPU). The session logic (missing,
// foreign, mismatched and non-regular files, the queryKeys version guard, merge-under-lock with
// concurrent savers, sidecars, save after cancel) is tested with fake ITimingCache objects that
// enforce the documented combine()/setTimingCache() rules.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "../core/backend.h"
#include "../core/cache_store.h"
#include "trt_headers.h"

namespace tbs::trt {

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

  // Creates the cache from `path` (an empty cache when the file is missing or empty), adds the
  // entries of pending sidecars that TensorRT accepts, and attaches it to `config`. False with
  // `error` when the file cannot be read safely, is not a timing cache TensorRT can read, or
  // TensorRT refuses it: the build must not start (and the file is left alone). Attached with
  // ignoreMismatch = true (as trtexec), so a cache made on another device is used without a
  // TensorRT ERROR. Such a file (one a fresh cache of this library and device will not combine
  // with ignoreMismatch = false) is said in stats.warning and never written: save() then keeps
  // nothing. A file TensorRT may not have read (readProof) is reported in stats.warning and never
  // replaced. Fills stats.path / entriesBefore.
  // `pinned` (a pinned build, --pinned-cache): exactly the file, no sidecars (the same cache must
  // select the same tactics), the file must exist, and a read that cannot be proven is an error
  // (with an empty cache every tactic would miss); the caller never saves a pinned cache.
  bool load(CacheFactory& config, std::string const& path, CacheStats& stats, std::string& error, bool pinned = false);

  nvinfer1::ITimingCache* cache() const { return cache_.get(); }

  // Entries now in the cache attached to `config`, or -1 when unknown (library or headers older
  // than 10.8, or an error).
  int64_t entryCount(CacheFactory const& config) const;

  // Saves by the cache store's protocol, merging with combine(..., ignoreMismatch = false).
  // True when this build's entries were kept: in the file (stats.bytes = its size) or, when the
  // lock was not had in time or the file may not be replaced, in a sidecar
  // (stats.deferredPath). Anything short of a plain save is explained in stats.warning; a
  // failure is never an error of the build (the engine is still good).
  // The lock is waited for up to TBS_TIMING_CACHE_LOCK_TIMEOUT_MS (default 120 s: another build
  // may be mid-save of a large cache).
  bool save(CacheFactory& config, CacheStats& stats);

 private:
  // The cache the builder used: what the config reports, else the one we attached.
  nvinfer1::ITimingCache const* builtCache(CacheFactory const& config) const;
  int64_t countEntries(nvinfer1::ITimingCache const* cache) const;
  // Empty when it is proven that TensorRT read `bytes` into `loaded` (a file without bytes needs
  // no proof); otherwise why it is not proven. 10.8+: the loaded cache has entries; every
  // version: it serializes back to as many bytes as the file has.
  std::string readProof(nvinfer1::ITimingCache const& loaded, std::string const& bytes) const;

  int32_t libVersion_;
  std::string path_;
  bool foreign_ = false;  // the file is another GPU's or TensorRT version's: never written
  // Must outlive every builder that uses it (NvInfer.h, createTimingCache): the backend declares
  // this session before its IBuilder so that it is destroyed after it.
  std::unique_ptr<nvinfer1::ITimingCache> cache_;
};

}  // namespace tbs::trt
