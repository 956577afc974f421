// The IProgressMonitor and ILogger adapters, called the way TensorRT calls them (through base
// class pointers, from several threads), with a recording sink. No TensorRT library needed.
#include <cstring>
#include <thread>
#include <vector>

#include "check.h"
#include "recording_sink.h"
#include "trt/trt_logger.h"
#include "trt/trt_monitor.h"

using tbs::trt::Logger;
using tbs::trt::ProgressMonitor;
using TrtSeverity = nvinfer1::ILogger::Severity;

TEST(monitor_forwards_in_order_through_the_tensorrt_interface) {
  tbs_test::RecordingSink sink;
  ProgressMonitor monitor(sink);
  nvinfer1::IProgressMonitor* m = &monitor;  // TensorRT only sees the interface
  m->phaseStart("Building engine", nullptr, 6);
  m->phaseStart("Cloning network graph", "Building engine", 30);
  CHECK(m->stepComplete("Cloning network graph", 0));
  CHECK(m->stepComplete("Building engine", 1));
  m->phaseFinish("Cloning network graph");
  m->phaseFinish("Building engine");
  std::vector<std::string> expected = {
      "start Building engine parent=null n=6", "start Cloning network graph parent=Building engine n=30",
      "step Cloning network graph 0",          "step Building engine 1",
      "finish Cloning network graph",          "finish Building engine",
  };
  auto got = sink.lines();
  CHECK_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size() && i < expected.size(); ++i) CHECK_EQ(got[i], expected[i]);
  CHECK(!monitor.stopAsked());
}

TEST(monitor_reports_the_tensorrt_interface_version) {
  tbs_test::RecordingSink sink;
  ProgressMonitor monitor(sink);
  nvinfer1::InterfaceInfo info = monitor.getInterfaceInfo();
  CHECK_EQ(std::string(info.kind), std::string("IProgressMonitor"));
  CHECK_EQ(info.major, 1);
  CHECK_EQ(info.minor, 0);
}

TEST(monitor_step_returns_false_once_cancel_is_requested) {
  tbs_test::RecordingSink sink;
  ProgressMonitor monitor(sink);
  nvinfer1::IProgressMonitor* m = &monitor;
  m->phaseStart("Timing graph nodes", nullptr, 12);
  CHECK(m->stepComplete("Timing graph nodes", 0));
  sink.cancel = true;
  CHECK(!m->stepComplete("Timing graph nodes", 1));
  CHECK(!m->stepComplete("Timing graph nodes", 2));  // stays false: cancel is sticky
  CHECK(monitor.stopAsked());
  m->phaseFinish("Timing graph nodes");  // TensorRT may finish early after a stop
  auto got = sink.lines();
  CHECK_EQ(got.back(), std::string("finish Timing graph nodes"));
  CHECK_EQ(got[2], std::string("step Timing graph nodes 1 stop"));
}

TEST(monitor_cancel_during_phase_start_is_honoured_at_the_first_step) {
  tbs_test::RecordingSink sink;
  ProgressMonitor monitor(sink);
  monitor.phaseStart("Building engine", nullptr, 6);
  sink.cancel = true;  // e.g. Stop pressed while TensorRT was still in phaseStart
  CHECK(!monitor.stepComplete("Building engine", 0));
  CHECK(monitor.stopAsked());
}

TEST(monitor_is_safe_from_many_builder_threads) {
  tbs_test::RecordingSink sink;
  ProgressMonitor monitor(sink);
  nvinfer1::IProgressMonitor* m = &monitor;
  constexpr int kThreads = 8, kSteps = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([m, t] {
      std::string name = "Measuring tactic time " + std::to_string(t);
      m->phaseStart(name.c_str(), "Timing graph nodes", kSteps);
      for (int s = 0; s < kSteps; ++s) m->stepComplete(name.c_str(), s);
      m->phaseFinish(name.c_str());
    });
  }
  for (auto& th : threads) th.join();
  size_t steps = 0, starts = 0, finishes = 0;
  for (auto const& l : sink.lines()) {
    steps += l.rfind("step ", 0) == 0;
    starts += l.rfind("start ", 0) == 0;
    finishes += l.rfind("finish ", 0) == 0;
  }
  CHECK_EQ(steps, static_cast<size_t>(kThreads * kSteps));
  CHECK_EQ(starts, static_cast<size_t>(kThreads));
  CHECK_EQ(finishes, static_cast<size_t>(kThreads));
}

TEST(logger_maps_every_tensorrt_severity) {
  CHECK(tbs::trt::mapSeverity(TrtSeverity::kINTERNAL_ERROR) == tbs::Severity::kInternalError);
  CHECK(tbs::trt::mapSeverity(TrtSeverity::kERROR) == tbs::Severity::kError);
  CHECK(tbs::trt::mapSeverity(TrtSeverity::kWARNING) == tbs::Severity::kWarning);
  CHECK(tbs::trt::mapSeverity(TrtSeverity::kINFO) == tbs::Severity::kInfo);
  CHECK(tbs::trt::mapSeverity(TrtSeverity::kVERBOSE) == tbs::Severity::kVerbose);
  CHECK(tbs::trt::mapSeverity(static_cast<TrtSeverity>(42)) == tbs::Severity::kVerbose);
}

TEST(logger_forwards_to_the_attached_sink_and_drops_verbose_unless_asked) {
  Logger logger;
  nvinfer1::ILogger* l = &logger;
  tbs_test::RecordingSink sink;
  logger.attach(&sink, /*forwardVerbose=*/false);
  l->log(TrtSeverity::kINTERNAL_ERROR, "internal");
  l->log(TrtSeverity::kERROR, "error");
  l->log(TrtSeverity::kWARNING, "warning");
  l->log(TrtSeverity::kINFO, "info");
  l->log(TrtSeverity::kVERBOSE, "verbose");
  l->log(TrtSeverity::kWARNING, nullptr);
  std::vector<std::string> expected = {"log 0 internal", "log 1 error", "log 2 warning", "log 3 info", "log 2 "};
  auto got = sink.lines();
  CHECK_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size() && i < expected.size(); ++i) CHECK_EQ(got[i], expected[i]);

  tbs_test::RecordingSink verbose;
  logger.attach(&verbose, /*forwardVerbose=*/true);
  l->log(TrtSeverity::kVERBOSE, "chatty");
  CHECK_EQ(verbose.lines().size(), size_t{1});
  CHECK_EQ(verbose.lines().at(0), std::string("log 4 chatty"));
  CHECK_EQ(sink.lines().size(), expected.size());  // the previous build's sink gets nothing more
}

TEST(logger_remembers_the_last_error_per_build) {
  Logger logger;
  tbs_test::RecordingSink sink;
  logger.attach(&sink, false);
  logger.log(TrtSeverity::kERROR, "first error");
  logger.log(TrtSeverity::kINTERNAL_ERROR, "second error");
  logger.log(TrtSeverity::kWARNING, "a warning is not an error");
  CHECK_EQ(logger.lastError(), std::string("second error"));
  logger.detach();
  logger.log(TrtSeverity::kERROR, "after detach");
  CHECK_EQ(logger.lastError(), std::string("after detach"));  // kept to explain a null result
  CHECK_EQ(sink.lines().size(), size_t{3});                   // but not forwarded
  logger.attach(&sink, false);
  CHECK_EQ(logger.lastError(), std::string(""));  // a new build starts clean
}

TEST(logger_counts_autotuning_lines_as_inferred_misses) {
  Logger logger;
  tbs_test::RecordingSink sink;
  logger.attach(&sink, false);
  logger.log(TrtSeverity::kVERBOSE, "Autotuning op conv1 (Conv)");
  logger.log(TrtSeverity::kVERBOSE, "Autotuning op conv2 (Conv)");
  logger.log(TrtSeverity::kVERBOSE, "Tactic: 0x1 Time: 0.1");
  logger.log(TrtSeverity::kINFO, "Autotuning op in an INFO line does not count");
  logger.log(TrtSeverity::kVERBOSE, "Autotuning o");  // truncated prefix does not count
  CHECK_EQ(logger.autotuningLines(), int64_t{2});
  logger.attach(&sink, false);
  CHECK_EQ(logger.autotuningLines(), int64_t{0});
}

TEST(logger_route_detaches_on_scope_exit) {
  Logger logger;
  tbs_test::RecordingSink sink;
  {
    tbs::trt::LoggerRoute route(logger, sink, false);
    logger.log(TrtSeverity::kWARNING, "inside");
  }
  logger.log(TrtSeverity::kWARNING, "outside");
  auto got = sink.lines();
  CHECK_EQ(got.size(), size_t{1});
  CHECK_EQ(got.at(0), std::string("log 2 inside"));
}

TEST(logger_is_safe_from_many_threads_and_while_switching_sinks) {
  Logger logger;
  tbs_test::RecordingSink a, b;
  logger.attach(&a, false);
  constexpr int kThreads = 4, kLines = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&logger] {
      for (int i = 0; i < kLines; ++i) logger.log(TrtSeverity::kWARNING, "w");
    });
  }
  for (int i = 0; i < 100; ++i) logger.attach(i % 2 ? &a : &b, false);
  for (auto& th : threads) th.join();
  CHECK_EQ(a.lines().size() + b.lines().size(), static_cast<size_t>(kThreads * kLines));
}

TEST(process_logger_is_a_single_instance) { CHECK(&Logger::instance() == &Logger::instance()); }

TEST_MAIN()
