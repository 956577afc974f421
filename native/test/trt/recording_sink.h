// A ProgressSink that records every call as a line of text (thread-safe), with a cancel switch.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.h"

namespace tbs_test {

class RecordingSink : public tbs::ProgressSink {
 public:
  void phaseStart(char const* name, char const* parent, int32_t nbSteps) noexcept override {
    add("start " + str(name) + " parent=" + (parent ? std::string(parent) : "null") + " n=" + std::to_string(nbSteps));
  }
  bool stepComplete(char const* name, int32_t step) noexcept override {
    bool go = !cancel.load();
    add("step " + str(name) + " " + std::to_string(step) + (go ? "" : " stop"));
    return go;
  }
  void phaseFinish(char const* name) noexcept override { add("finish " + str(name)); }
  void log(tbs::Severity severity, char const* message) noexcept override {
    add("log " + std::to_string(static_cast<int>(severity)) + " " + str(message));
  }
  void cacheStats(tbs::CacheStats const& stats) noexcept override {
    std::lock_guard<std::mutex> lock(mu);
    lastStats = stats;
    ++statsCalls;
  }
  bool cancelRequested() const noexcept override { return cancel.load(); }

  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }

  std::atomic<bool> cancel{false};
  tbs::CacheStats lastStats;
  int statsCalls = 0;

 private:
  static std::string str(char const* s) { return s ? std::string(s) : std::string("<null>"); }
  void add(std::string line) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::move(line));
  }
  mutable std::mutex mu;
  std::vector<std::string> events;
};

}  // namespace tbs_test
