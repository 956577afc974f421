#include "build_job.h"

#include <algorithm>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "../core/build_runner.h"
#include "../core/thread_priority.h"

namespace tbs::addon {
namespace {

constexpr size_t kSlots = kEventSlots;  // events.h: the layout addon.ts checks at load
// Most events handed to JS per call: after a stall the outbox goes out in bites of this size,
// each followed by a turn of the event loop (where the worker may hold the rest back).
constexpr size_t kMaxEventsPerCall = 2000;

// The numbers of every batch handed to JS go into one buffer per JS environment, seen through a
// new Float64Array per call (a small object on V8's heap). A new ArrayBuffer per batch was a
// malloc on the JS thread of up to 128 KiB, freed only when V8 collected it: over the benchmark's
// 10 M callbacks 275 MB went through the main malloc arena, up to 31 MiB of it at once between
// collections, and that high-water stayed in the process's RSS after the build (glibc keeps the
// freed pages; bench:native memory run, 2026-12-07). Every listener decodes a batch within the
// call (apps/worker/addon.ts BatchDecoder), which is the contract: `nums` is valid until the call
// returns. A buffer a listener detached (transferred) is replaced.
struct BatchScratch {
  Napi::Reference<Napi::ArrayBuffer> buffer;
};

Napi::Float64Array batchNumbers(Napi::Env env, size_t count) {
  auto* scratch = env.GetInstanceData<BatchScratch>();
  if (scratch == nullptr) {
    scratch = new BatchScratch();
    env.SetInstanceData(scratch);  // deleted with the environment, on its thread
  }
  size_t bytes = count * sizeof(double);
  if (scratch->buffer.IsEmpty() || scratch->buffer.Value().ByteLength() < bytes) {
    size_t capacity = std::max(bytes, kMaxEventsPerCall * kSlots * sizeof(double));
    scratch->buffer = Napi::Persistent(Napi::ArrayBuffer::New(env, capacity));
  }
  return Napi::Float64Array::New(env, count, scratch->buffer.Value(), 0);
}

}  // namespace

// Once a build's job is gone: the free memory glibc's malloc arenas kept goes back to the kernel.
// The builder, flusher and producer threads each allocate in an arena of their own, and what a
// build held at its busiest (a lagging consumer's outbox, up to its 16 MiB bound, the queues'
// chunks, the flushes' batches) stays in those arenas as free pages after it is freed: a process
// that runs builds one after another (serve, the desktop app) kept the largest one's high-water.
// malloc_trim(0) releases the free pages of every arena; it runs once per build (measured with
// bench:native's memory run: see the report in bench/native.js).
BuildJob::ReturnFreedMemory::~ReturnFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

std::shared_ptr<BuildJob> BuildJob::start(Napi::Env env, Napi::Function onBatch, BuildRequest request, PipelineOptions options,
                                          std::unique_ptr<Backend> backend, std::string linePrefix) {
  std::shared_ptr<BuildJob> job(new BuildJob());
  if (!linePrefix.empty()) job->lineWriter_ = std::make_unique<EventLineWriter>(std::move(linePrefix));
  job->request_ = std::move(request);
  job->backend_ = std::move(backend);
  std::weak_ptr<BuildJob> weak = job;
  job->pipeline_ = std::make_unique<ProgressPipeline>(options, [weak](EventBatch&& batch) {
    if (auto self = weak.lock()) self->deliver(std::move(batch));
  });
  job->outbox_.gateTo(&job->pipeline_->room());
  // The finalizer owns a reference so the job outlives its thread; it runs on the JS thread
  // after Release() and after every queued call, which is where joining is safe.
  auto* keep = new std::shared_ptr<BuildJob>(job);
  job->tsfn_ = Napi::ThreadSafeFunction::New(env, onBatch, "trt-build-studio:events", 0 /* unbounded: we never queue more than one */, 1,
                                             keep, [](Napi::Env, std::shared_ptr<BuildJob>* ctx) {
                                               if ((*ctx)->thread_.joinable()) (*ctx)->thread_.join();
                                               delete ctx;
                                             });
  job->pipeline_->startFlusher();
  int nice = buildNice();
  job->thread_ = std::thread([job, nice] {
    // The build (and every thread it starts) at the build's priority, behind the event path.
    runAtBuildPriority(nice);
    // build.started is announced here, not on the JS thread: finding TensorRT and its adapter
    // (dlopen of libnvinfer, hundreds of MB) and asking the driver for the GPU must not block
    // the event loop. A Stop before it is held back by the pipeline until build.started is out.
    runBuild(*job->backend_, job->request_, *job->pipeline_);
    // finish() put the final batch in the outbox before returning; a hold may keep it there, and
    // releasing now would close the function before it is delivered. Releasing (after) lets the
    // event loop exit.
    {
      std::unique_lock<std::mutex> lk(job->outMu_);
      job->drained_.wait(lk, [&] { return job->outbox_.empty() || job->closing_; });
    }
    job->tsfn_.Release();
  });
  return job;
}

BuildJob::~BuildJob() {
  // Only reached without the finalizer when the environment is torn down mid-build.
  if (thread_.joinable()) thread_.detach();
}

void BuildJob::deliver(EventBatch&& batch) {
  {
    std::lock_guard<std::mutex> lk(outMu_);
    outbox_.add(std::move(batch));
    if (callPending_) return;  // the pending call will take it
    if (hold_) return;         // setHold(false) posts the call
    callPending_ = true;
  }
  auto self = shared_from_this();
  napi_status st = tsfn_.NonBlockingCall([self](Napi::Env env, Napi::Function fn) { self->drainOnJs(env, fn); });
  if (st != napi_ok) {
    std::lock_guard<std::mutex> lk(outMu_);
    callPending_ = false;  // environment closing: nobody is listening any more
    closing_ = true;
    drained_.notify_all();
    pipeline_->room().release();  // nobody will take the outbox down: the builder must not wait
  }
}

void BuildJob::drainOnJs(Napi::Env env, Napi::Function fn) {
  if (env == nullptr || fn.IsEmpty()) {  // called during teardown
    {
      std::lock_guard<std::mutex> lk(outMu_);
      closing_ = true;
      drained_.notify_all();
    }
    pipeline_->room().release();  // as in deliver(): no consumer any more
    return;
  }
  // One swap per call, then back to the event loop: a worker must stay responsive (cancel
  // messages) even while a builder produces faster than JS consumes.
  EventBatch batch;
  {
    std::lock_guard<std::mutex> lk(outMu_);
    if (outbox_.empty() || hold_) {
      callPending_ = false;
      return;
    }
    batch = outbox_.take(kMaxEventsPerCall);
    if (outbox_.empty()) drained_.notify_all();
  }
  size_t events = batch.events.size();
  Napi::HandleScope scope(env);
  auto nums = batchNumbers(env, events * kSlots);
  auto strs = Napi::Array::New(env);
  auto names = Napi::Array::New(env);
  double* out = nums.Data();
  uint32_t nStr = 0, nName = 0;
  {
    auto& b = batch;
    for (auto& name : b.newNames) names.Set(nName++, Napi::String::New(env, name));
    for (auto& e : b.events) {
      out[0] = static_cast<double>(e.type);
      out[1] = static_cast<double>(e.seq);
      out[2] = e.t;
      out[3] = static_cast<double>(e.a);
      out[4] = static_cast<double>(e.b);
      out[5] = static_cast<double>(e.c);
      out[6] = static_cast<double>(e.d);
      out[7] = static_cast<double>(e.e);
      switch (e.type) {
        case EvType::kHeartbeat:
        case EvType::kCancelling:
          out[4] = e.x;
          break;
        case EvType::kStarted:
        case EvType::kLog:
        case EvType::kCacheStats:
        case EvType::kFinished:
          out[7] = nStr;
          strs.Set(nStr++, Napi::String::New(env, e.text));
          break;
        default:
          break;
      }
      out += kSlots;
    }
  }
  Napi::Value lines = env.Undefined();
  if (lineWriter_) {
    // Here, not on the flusher: only what JS takes is written, and the outbox holds no text.
    lineWriter_->addNames(batch.firstNameId, batch.newNames);
    std::string text = lineWriter_->lines(batch.events);
    lines = Napi::String::New(env, text);
  }
  double firstNameId = batch.firstNameId;
  batch = EventBatch{};
  bool more;
  {
    std::lock_guard<std::mutex> lk(outMu_);
    more = !outbox_.empty() && !hold_;
    if (!more) callPending_ = false;
  }
  if (more) {
    // Re-post before calling out (the listener may throw). Acquire keeps the function open even
    // if the build thread has already released its reference after the final batch.
    auto self = shared_from_this();
    if (tsfn_.Acquire() == napi_ok) {
      tsfn_.NonBlockingCall([self](Napi::Env e, Napi::Function f) { self->drainOnJs(e, f); });
      tsfn_.Release();
    }
  }
  fn.Call({nums, strs, names, Napi::Number::New(env, firstNameId), lines});
}

void BuildJob::setHold(bool hold) {
  {
    std::lock_guard<std::mutex> lk(outMu_);
    hold_ = hold;
    if (hold || callPending_ || outbox_.empty()) return;
    callPending_ = true;
  }
  auto self = shared_from_this();
  if (tsfn_.Acquire() == napi_ok) {
    if (tsfn_.NonBlockingCall([self](Napi::Env e, Napi::Function f) { self->drainOnJs(e, f); }) != napi_ok) {
      std::lock_guard<std::mutex> lk(outMu_);
      callPending_ = false;
    }
    tsfn_.Release();
  } else {
    std::lock_guard<std::mutex> lk(outMu_);
    callPending_ = false;
  }
}

BuildJob::BackPressure BuildJob::backPressure() {
  BackPressure bp;
  {
    std::lock_guard<std::mutex> lk(outMu_);
    bp.outboxBytes = outbox_.bytes();
    bp.outboxPeakBytes = outbox_.peakBytes();
    bp.outboxHighBytes = outbox_.bounds().highBytes;
  }
  bp.inFlightBytes = inFlightBytes(pipeline_->maxQueuedRecords());
  bp.gateClosings = pipeline_->room().closings();
  bp.builderWaitedMs = static_cast<double>(pipeline_->room().waitedNs()) / 1e6;
  return bp;
}

}  // namespace tbs::addon
