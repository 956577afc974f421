#include "trt_logger.h"

#include <cstring>

namespace tbs::trt {

Severity mapSeverity(nvinfer1::ILogger::Severity severity) noexcept {
  using S = nvinfer1::ILogger::Severity;
  switch (severity) {
    case S::kINTERNAL_ERROR:
      return Severity::kInternalError;
    case S::kERROR:
      return Severity::kError;
    case S::kWARNING:
      return Severity::kWarning;
    case S::kINFO:
      return Severity::kInfo;
    case S::kVERBOSE:
      return Severity::kVerbose;
  }
  return Severity::kVerbose;  // an unknown future level is treated as the least important
}

Logger& Logger::instance() {
  static Logger* logger = new Logger();  // intentionally leaked, see header
  return *logger;
}

void Logger::log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept {
  char const* text = msg != nullptr ? msg : "";
  tbs::Severity mapped = mapSeverity(severity);
  bool isError = mapped == tbs::Severity::kError || mapped == tbs::Severity::kInternalError;
  if (mapped == tbs::Severity::kVerbose) {
    if (std::strncmp(text, kAutotuningPrefix, sizeof(kAutotuningPrefix) - 1) == 0) {
      autotuning_.fetch_add(1, std::memory_order_relaxed);
    }
    if (!forwardVerbose_.load(std::memory_order_relaxed)) return;
  }
  if (!isError && !attached_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (isError) {
    try {
      lastError_ = text;
    } catch (...) {
      // Out of memory while copying an error line: keep the previous one rather than throw
      // through TensorRT (log is noexcept).
    }
  }
  if (sink_ != nullptr) sink_->log(mapped, text);
}

void Logger::attach(ProgressSink* sink, bool forwardVerbose) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = sink;
  forwardVerbose_.store(forwardVerbose, std::memory_order_relaxed);
  attached_.store(sink != nullptr, std::memory_order_relaxed);
  lastError_.clear();
  autotuning_.store(0, std::memory_order_relaxed);
}

void Logger::detach() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = nullptr;
  attached_.store(false, std::memory_order_relaxed);
  forwardVerbose_.store(false, std::memory_order_relaxed);
}

std::string Logger::lastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lastError_;
}

}  // namespace tbs::trt
