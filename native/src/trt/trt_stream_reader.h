// IStreamReaderV2 (TensorRT 10.7+) over an engine file: the runtime deserializes a streamed
// engine by reading it in pieces, so the engine that was never held in host memory while it was
// built is not read back whole for its layer information either. As NVIDIA's own file reader
// (samples/common/streamReader.h): TensorRT may ask for bytes straight into device memory; those
// go through a bounded host buffer and cuMemcpyHtoDAsync on the stream it names (the driver API:
// the adapter does not link a CUDA runtime). Where no CUDA driver with the pointer query is loaded,
// nothing in the process can be device memory, and every destination is host memory.
//
// NOT RUN HERE against a real TensorRT or GPU; exercised through the fake runtime, which reads
// into host memory.
#pragma once

#include "trt_headers.h"

#if TBS_TRT_HEADERS_AT_LEAST(10, 7)

#include <cstdint>
#include <cstdio>
#include <string>

namespace tbs::trt {

class EngineFileReader final : public nvinfer1::IStreamReaderV2 {
 public:
  EngineFileReader() = default;
  ~EngineFileReader() override;
  EngineFileReader(EngineFileReader const&) = delete;
  EngineFileReader& operator=(EngineFileReader const&) = delete;

  // False with `error` when the file cannot be opened.
  bool open(std::string const& path, std::string& error);

  int64_t read(void* destination, int64_t nbBytes, cudaStream_t stream) noexcept override;
  bool seek(int64_t offset, nvinfer1::SeekPosition where) noexcept override;

  // The first failure TensorRT was answered -1 for ("" when none).
  std::string const& error() const noexcept { return error_; }

 private:
  int64_t readToDevice(void* destination, int64_t nbBytes, cudaStream_t stream) noexcept;

  std::FILE* file_ = nullptr;
  std::string error_;
};

}  // namespace tbs::trt

#endif
