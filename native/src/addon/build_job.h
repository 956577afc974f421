// One build as the addon runs it: its own native thread runs the backend; the pipeline's flusher
// hands batches to JS through ONE thread-safe function with at most one call pending. Batches
// that arrive while a call is pending wait in an outbox that coalesces steps (EventOutbox: a
// JS thread that stalls costs memory for starts, finishes and logs only); the JS side takes the
// whole outbox per call and re-posts itself if more arrived, so the TSFN queue never holds more than one call,
// the event loop gets a turn between batches, and the flusher never blocks (BlockingCall on a
// bounded queue from several threads deadlocks: nodejs/node#58723). The outbox is bounded in
// bytes (bounded_outbox.h): past its bound the builder threads wait in their callbacks, not the
// flusher, until JS has taken it down or the build is cancelled.
#pragma once

#include <napi.h>

#include <memory>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "../core/backend.h"
#include "../core/bounded_outbox.h"
#include "../core/event_lines.h"
#include "../core/progress_pipeline.h"

namespace tbs::addon {

class BuildJob : public std::enable_shared_from_this<BuildJob> {
 public:
  // onBatch(nums: Float64Array, strs: string[], newNames: string[], firstNameId: number, lines?: string)
  // With a non-empty linePrefix, each call also carries the JSON text of its hot events, one
  // line per event (event_lines.h); without one, no text is made.
  static std::shared_ptr<BuildJob> start(Napi::Env env, Napi::Function onBatch, BuildRequest request, PipelineOptions options,
                                         std::unique_ptr<Backend> backend, std::string linePrefix = {});
  ~BuildJob();

  bool cancel(CancelReason reason) { return pipeline_->requestCancel(reason); }
  // Back-pressure from the JS side: while held, batches stay in the outbox (steps coalescing,
  // other events compact in native memory, not on the JS heap) and no call is posted, the final
  // batch included (the JS side releases the hold for good when it must have the end: a cancel).
  // Releasing posts a call if anything waits.
  void setHold(bool hold);
  std::vector<PhaseSnapshot> snapshot() const { return pipeline_->snapshot(); }

  // The native hop's figures: what the outbox holds now and at most, its bound, how often the
  // builder was made to wait and for how long in all (summed over its threads).
  struct BackPressure {
    size_t outboxBytes = 0, outboxPeakBytes = 0, outboxHighBytes = 0;
    size_t inFlightBytes = 0;  // what may still arrive past the bound (bounded_outbox.h)
    uint64_t gateClosings = 0;
    double builderWaitedMs = 0;
  };
  BackPressure backPressure();

 private:
  BuildJob() = default;
  void deliver(EventBatch&& batch);                  // whoever flushes: the flusher, or a builder in its place (one at a time)
  void drainOnJs(Napi::Env env, Napi::Function fn);  // JS thread

  // Declared first, so destroyed last: once the job's own memory (the pipeline's queues and tree,
  // the outbox) is freed, the free pages malloc keeps go back to the kernel (build_job.cc).
  struct ReturnFreedMemory {
    ReturnFreedMemory() = default;
    ReturnFreedMemory(ReturnFreedMemory const&) = delete;
    ReturnFreedMemory& operator=(ReturnFreedMemory const&) = delete;
    ~ReturnFreedMemory();
  } returnFreedMemory_;
  BuildRequest request_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ProgressPipeline> pipeline_;
  Napi::ThreadSafeFunction tsfn_;
  std::thread thread_;
  // Set when the worker asked for lines; used on the JS thread only (drainOnJs).
  std::unique_ptr<EventLineWriter> lineWriter_;

  std::mutex outMu_;
  BoundedOutbox outbox_;
  bool callPending_ = false;
  bool hold_ = false;
  // Signalled when the outbox empties: the build thread keeps the thread-safe function alive
  // (does not release it) until the final batch has been handed to JS, however long a hold lasts.
  std::condition_variable drained_;
  bool closing_ = false;
};

}  // namespace tbs::addon
