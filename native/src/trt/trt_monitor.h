// IProgressMonitor adapter: forwards TensorRT's build-progress callbacks to our ProgressSink.
// TensorRT calls these from several builder threads at once; the sink is thread-safe by
// contract, and this class adds no lock and no allocation of its own so that the cost inside the
// builder's threads is the sink's cost only (docs/tensorrt.md, "The progress monitor").
//
// NOT RUN HERE against a real builder (no TensorRT library or GPU); unit-tested by calling the
// overrides directly (native/test/trt/test_adapters.cc).
#pragma once

#include "trt_headers.h"

#include <atomic>

#include "../core/backend.h"

namespace tbs::trt {

class ProgressMonitor final : public nvinfer1::IProgressMonitor {
 public:
  explicit ProgressMonitor(ProgressSink& sink) noexcept : sink_(sink) {}

  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override {
    sink_.phaseStart(phaseName, parentPhase, nbSteps);
  }

  // Returning false is TensorRT's only cancellation point; the sink returns false once a cancel
  // was requested (including one requested during phaseStart, before any step).
  bool stepComplete(char const* phaseName, int32_t step) noexcept override {
    bool keepGoing = sink_.stepComplete(phaseName, step);
    if (!keepGoing) stopAsked_.store(true, std::memory_order_relaxed);
    return keepGoing;
  }

  void phaseFinish(char const* phaseName) noexcept override { sink_.phaseFinish(phaseName); }

  // True once any stepComplete returned false (the builder was asked to stop).
  bool stopAsked() const noexcept { return stopAsked_.load(std::memory_order_relaxed); }

 private:
  ProgressSink& sink_;
  std::atomic<bool> stopAsked_{false};
};

}  // namespace tbs::trt
