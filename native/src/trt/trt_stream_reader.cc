#include "trt_stream_reader.h"

#if TBS_TRT_HEADERS_AT_LEAST(10, 7)

#include <dlfcn.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "../gpu/cuda_driver.h"

namespace tbs::trt {
namespace {

// The two driver calls a device destination needs (cuda.h: CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
// CU_MEMORYTYPE_DEVICE = 2; CUdeviceptr is 64 bits; a cudaStream_t is a CUstream).
using PointerAttributeFn = int (*)(void* data, int attribute, unsigned long long pointer);
using CopyHtoDAsyncFn = int (*)(unsigned long long dst, void const* src, size_t bytes, void* stream);
constexpr int kPointerMemoryType = 2;
constexpr unsigned kMemoryTypeDevice = 2;
constexpr int64_t kStagingBytes = 8 << 20;  // bounds the host copy of a device destination

struct DriverCalls {
  PointerAttributeFn attribute = nullptr;
  CopyHtoDAsyncFn copy = nullptr;
};

DriverCalls const& driverCalls() {
  static DriverCalls const calls = [] {
    DriverCalls c;
    std::string ignored;
    gpu::CudaDriver* driver = gpu::CudaDriver::get(ignored);
    if (driver == nullptr) return c;
    // Already loaded by CudaDriver: RTLD_NOLOAD only takes another reference to it.
    void* h = dlopen(driver->path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (h == nullptr) return c;
    c.attribute = reinterpret_cast<PointerAttributeFn>(dlsym(h, "cuPointerGetAttribute"));
    c.copy = reinterpret_cast<CopyHtoDAsyncFn>(dlsym(h, "cuMemcpyHtoDAsync_v2"));
    return c;
  }();
  return calls;
}

}  // namespace

EngineFileReader::~EngineFileReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool EngineFileReader::open(std::string const& path, std::string& error) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

int64_t EngineFileReader::read(void* destination, int64_t nbBytes, cudaStream_t stream) noexcept {
  if (file_ == nullptr || nbBytes < 0 || (destination == nullptr && nbBytes > 0)) return -1;
  if (nbBytes == 0) return 0;
  DriverCalls const& cu = driverCalls();
  unsigned type = 0;
  // An error (host memory CUDA does not know) or a host/unified type: plain host memory.
  if (cu.attribute != nullptr && cu.attribute(&type, kPointerMemoryType, reinterpret_cast<uintptr_t>(destination)) == 0 &&
      type == kMemoryTypeDevice) {
    return readToDevice(destination, nbBytes, stream);
  }
  size_t n = std::fread(destination, 1, static_cast<size_t>(nbBytes), file_);
  if (n == 0 && std::ferror(file_)) {
    error_ = std::string("reading the engine failed: ") + std::strerror(errno);
    return -1;
  }
  return static_cast<int64_t>(n);
}

int64_t EngineFileReader::readToDevice(void* destination, int64_t nbBytes, cudaStream_t stream) noexcept {
  DriverCalls const& cu = driverCalls();
  if (cu.copy == nullptr) {
    error_ = "TensorRT asked for engine bytes in device memory, and the CUDA driver has no cuMemcpyHtoDAsync_v2";
    return -1;
  }
  int64_t const chunk = nbBytes < kStagingBytes ? nbBytes : kStagingBytes;
  std::unique_ptr<char[]> staging(new (std::nothrow) char[static_cast<size_t>(chunk)]);
  if (!staging) {
    error_ = "no host memory for a " + std::to_string(chunk) + "-byte staging buffer";
    return -1;
  }
  int64_t done = 0;
  while (done < nbBytes) {
    int64_t want = nbBytes - done < chunk ? nbBytes - done : chunk;
    size_t got = std::fread(staging.get(), 1, static_cast<size_t>(want), file_);
    if (got == 0) break;
    // From pageable memory the copy has left the buffer when the call returns (NVIDIA's reader
    // relies on the same), so the buffer is reused at once.
    if (cu.copy(reinterpret_cast<uintptr_t>(destination) + static_cast<unsigned long long>(done), staging.get(), got, stream) != 0) {
      error_ = "cuMemcpyHtoDAsync_v2 failed copying engine bytes to the device";
      return -1;
    }
    done += static_cast<int64_t>(got);
    if (static_cast<int64_t>(got) < want) break;
  }
  return done;
}

bool EngineFileReader::seek(int64_t offset, nvinfer1::SeekPosition where) noexcept {
  if (file_ == nullptr) return false;
  int whence = where == nvinfer1::SeekPosition::kSET ? SEEK_SET : where == nvinfer1::SeekPosition::kCUR ? SEEK_CUR : SEEK_END;
  return fseeko(file_, static_cast<off_t>(offset), whence) == 0;
}

}  // namespace tbs::trt

#endif
