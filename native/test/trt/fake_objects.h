// Fake TensorRT objects built on the headers' own implementation interfaces (apiv::VHostMemory,
// apiv::VTimingCache), the way libnvinfer builds its objects. Shared by test_timing_cache.cc and
// the scripted fake libnvinfer (fake_full_nvinfer.cc). The cache serializes its keys as text, so
// tests can read a saved cache file back.
#pragma once

#include <NvInfer.h>
#include <NvInferVersion.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace tbs_fake {

// Not plain text (the \x01): real timing caches are binary, and the service refuses a text file
// given as a timing cache (apps/service/timing-cache-file.ts), so a fake cache must not be text.
inline constexpr char kCacheMagic[] = "TBSFAKECACHE\x01\n";

// A cache's verification header as TensorRT keeps one: "<library version>/<device>". Empty in
// caches made by tests that do not care (it then matches everything).
inline std::string tagVersion(std::string const& tag) { return tag.substr(0, tag.find('/')); }

// Parses a serialized fake cache; false when `bytes` is not one ("corrupt"). A first line
// "tag <version>/<device>" carries the verification header.
inline bool parseCache(std::string const& bytes, std::set<std::string>& keys, std::string* tag = nullptr) {
  keys.clear();
  if (bytes.rfind(kCacheMagic, 0) != 0) return false;
  std::istringstream in(bytes.substr(sizeof(kCacheMagic) - 1));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("tag ", 0) == 0) {
      if (tag != nullptr) *tag = line.substr(4);
      continue;
    }
    keys.insert(line);
  }
  return true;
}

class FakeHostMemory final : public nvinfer1::IHostMemory {
 public:
  explicit FakeHostMemory(std::string bytes) : impl_(std::move(bytes)) { mImpl = &impl_; }

 private:
  struct Impl final : nvinfer1::apiv::VHostMemory {
    explicit Impl(std::string b) : bytes(std::move(b)) {}
    void* data() const noexcept override { return const_cast<char*>(bytes.data()); }
    std::size_t size() const noexcept override { return bytes.size(); }
    nvinfer1::DataType type() const noexcept override { return nvinfer1::DataType::kUINT8; }
    std::string bytes;
  } impl_;
};

class FakeTimingCache final : public nvinfer1::ITimingCache {
 public:
  FakeTimingCache(std::set<std::string> keys, std::atomic<int>* queryCalls, std::string tag = {})
      : impl_(std::move(keys), queryCalls, std::move(tag)) {
    mImpl = &impl_;
  }
  void add(std::string const& key) { impl_.keys.insert(key); }
  std::set<std::string> const& keys() const { return impl_.keys; }
  std::string const& tag() const { return impl_.tag; }

 private:
  struct Impl final : nvinfer1::apiv::VTimingCache {
    Impl(std::set<std::string> k, std::atomic<int>* q, std::string t) : keys(std::move(k)), queryCalls(q), tag(std::move(t)) {}
    nvinfer1::IHostMemory* serialize() const noexcept override {
      std::string out = kCacheMagic;
      if (!tag.empty()) out += "tag " + tag + "\n";
      for (auto const& k : keys) out += k + "\n";
      return new FakeHostMemory(out);
    }
    // As NvInferRuntime.h documents: a cache of another TensorRT version is never combined; one
    // of another device only with ignoreMismatch.
    bool combine(nvinfer1::ITimingCache const& input, bool ignoreMismatch) noexcept override {
      auto const* other = dynamic_cast<FakeTimingCache const*>(&input);
      if (other == nullptr) return false;
      if (!tag.empty() && !other->tag().empty()) {
        if (tagVersion(tag) != tagVersion(other->tag())) return false;
        if (tag != other->tag() && !ignoreMismatch) return false;
      }
      keys.insert(other->keys().begin(), other->keys().end());
      return true;
    }
    bool reset() noexcept override {
      keys.clear();
      return true;
    }
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 8  // queryKeys/query/update: 10.8+
    int64_t queryKeys(nvinfer1::TimingCacheKey*, int64_t) const noexcept override {
      if (queryCalls != nullptr) ++*queryCalls;
      return static_cast<int64_t>(keys.size());
    }
    nvinfer1::TimingCacheValue query(nvinfer1::TimingCacheKey const&) const noexcept override { return {}; }
    bool update(nvinfer1::TimingCacheKey const&, nvinfer1::TimingCacheValue const&) noexcept override { return false; }
#endif
    std::set<std::string> keys;
    std::atomic<int>* queryCalls;
    std::string tag;
  } impl_;
};

// What createTimingCache does with bytes it cannot read. Real TensorRT is known (public reports,
// not observed here) to log "The timing cache will not be used!" and return an EMPTY cache; the
// fakes can do either, so that both are tested. FAKE_TRT_BAD_CACHE=empty in the environment
// selects the empty cache for the fake libnvinfer (fake_full_nvinfer.cc).
enum class BadCacheBytes { kNull, kEmptyCache };

inline BadCacheBytes badCacheBytesFromEnv() {
  char const* v = std::getenv("FAKE_TRT_BAD_CACHE");
  return v != nullptr && std::string(v) == "empty" ? BadCacheBytes::kEmptyCache : BadCacheBytes::kNull;
}

// createTimingCache as the fakes implement it: null (or an empty cache, see BadCacheBytes) for
// a corrupt blob. A new cache gets `currentTag` (the library's own header); a loaded one keeps
// the file's.
inline FakeTimingCache* createFakeCache(void const* blob, std::size_t size, std::atomic<int>* queryCalls,
                                        std::string const& currentTag = {}, BadCacheBytes bad = BadCacheBytes::kNull) {
  std::set<std::string> keys;
  std::string tag = currentTag;
  if (size > 0 && !parseCache(std::string(static_cast<char const*>(blob), size), keys, &tag)) {
    if (bad == BadCacheBytes::kNull) return nullptr;
    keys.clear();
    tag = currentTag;
  }
  return new FakeTimingCache(std::move(keys), queryCalls, tag);
}

}  // namespace tbs_fake
