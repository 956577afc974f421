// The process-wide nvinfer1::ILogger. TensorRT effectively keeps the first logger it is given
// for the whole process (a second one is ignored with a warning), so there is exactly one, and
// each build routes it to its own sink for its duration (LoggerRoute). Messages that arrive
// while no build is attached are dropped, except that the last error is remembered.
//
// ILogger differs between majors (11.x derives it from IVersionedInterface, whose
// getInterfaceInfo() the header implements); compiled against each major's headers, this class
// gets that major's layout, and only log() is ours to implement.
//
// NOT RUN HERE with a real TensorRT; unit-tested by calling log() directly and through the fakes.
#pragma once

#include "trt_headers.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "../core/backend.h"

namespace tbs::trt {

Severity mapSeverity(nvinfer1::ILogger::Severity severity) noexcept;

// Prefix of the VERBOSE line TensorRT logs for each op it profiles afresh when the build uses
// kEDITABLE_TIMING_CACHE. Counting them as timing-cache misses is an inference (TensorRT has no
// hit/miss API), so the count is reported with CacheStats::missesInferred = true.
inline constexpr char kAutotuningPrefix[] = "Autotuning op";

class Logger final : public nvinfer1::ILogger {
 public:
  // The one instance for the process. Deliberately never destroyed: TensorRT may log from its
  // own static destructors after ours have run.
  static Logger& instance();

  Logger() = default;  // public for tests; production code uses instance()

  // Thread-safe; TensorRT calls this from several threads. Messages below the forwarded
  // severity (VERBOSE unless asked for) and messages while no build listens take no lock: with
  // verbose logging on inside TensorRT they can be very many. Forwarded ones take a short lock.
  void log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept override;

  // Routes messages to `sink` until detach(). VERBOSE lines are forwarded only when asked
  // (subscribing to them measurably slows builds); they are always scanned for autotuning.
  void attach(ProgressSink* sink, bool forwardVerbose) noexcept;
  void detach() noexcept;

  std::string lastError() const;  // last kERROR / kINTERNAL_ERROR line since attach()
  int64_t autotuningLines() const noexcept { return autotuning_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  tbs::ProgressSink* sink_ = nullptr;
  std::atomic<bool> attached_{false};
  std::atomic<bool> forwardVerbose_{false};
  std::string lastError_;
  std::atomic<int64_t> autotuning_{0};
};

// Scope guard: attaches a build's sink to a logger and detaches it on every exit path.
class LoggerRoute {
 public:
  LoggerRoute(Logger& logger, ProgressSink& sink, bool forwardVerbose) noexcept : logger_(logger) { logger_.attach(&sink, forwardVerbose); }
  ~LoggerRoute() { logger_.detach(); }
  LoggerRoute(LoggerRoute const&) = delete;
  LoggerRoute& operator=(LoggerRoute const&) = delete;

 private:
  Logger& logger_;
};

}  // namespace tbs::trt
