// IStreamWriter (TensorRT 10.13+) onto an AtomicFile: buildSerializedNetworkToStream hands the
// engine over in pieces, which go straight to the temp file beside the output, so a multi-GB
// engine is never held in memory. Nothing appears at the output path until commit() (temp +
// rename); a cancelled or failed build leaves nothing behind.
//
// NOT RUN HERE against a real TensorRT; exercised through the scripted fake builder.
#pragma once

#include "trt_headers.h"

#if TBS_TRT_HEADERS_AT_LEAST(10, 13)

#include <cstdint>

#include "../core/atomic_file.h"

namespace tbs::trt {

class EngineStreamWriter final : public nvinfer1::IStreamWriter {
 public:
  explicit EngineStreamWriter(AtomicFile& file) noexcept : file_(file) {}

  // TensorRT gives up on the stream when the result is negative or short, and then reports the
  // build as failed; the file's error() says why.
  int64_t write(void const* data, int64_t nbBytes) noexcept override {
    if (nbBytes < 0) return -1;
    if (nbBytes == 0) return 0;
    if (!file_.write(data, static_cast<size_t>(nbBytes))) {
      failed_ = true;
      return -1;
    }
    return nbBytes;
  }

  bool failed() const noexcept { return failed_; }

 private:
  AtomicFile& file_;
  bool failed_ = false;
};

}  // namespace tbs::trt

#endif
