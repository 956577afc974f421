// Module entry: listBackends() and startBuild(request, onBatch). The TS wrapper (apps/worker/
// addon.ts) turns batches into protocol events; this file only crosses the JS boundary.
#include <napi.h>

#include <memory>

#include "../sim/callback_storm.h"
#include "../sim/sim_backend.h"
#include "build_job.h"
#include "request_from_js.h"

#if defined(TBS_HAVE_TENSORRT) && TBS_HAVE_TENSORRT
#include "trt/trt_backend.h"
#endif

namespace tbs::addon {
namespace {

char const* const kNoTensorRt =
    "this build of the addon was compiled without TensorRT 10 headers (set TENSORRT_ROOT and rebuild)";

Napi::Object probeToJs(Napi::Env env, BackendProbe const& p) {
  auto o = Napi::Object::New(env);
  o.Set("name", p.name);
  o.Set("available", p.available);
  if (!p.version.empty()) o.Set("version", p.version);
  if (!p.reason.empty()) o.Set("reason", p.reason);
  if (!p.detail.empty()) {
    auto d = Napi::Object::New(env);
    for (auto const& [k, v] : p.detail) d.Set(k, v);
    o.Set("detail", d);
  }
  return o;
}

BackendProbe probeTensorRt() {
#if defined(TBS_HAVE_TENSORRT) && TBS_HAVE_TENSORRT
  try {
    auto backend = makeTensorRtBackend();
    BackendProbe p = backend->probe();
    p.name = "tensorrt";
    return p;
  } catch (std::exception const& e) {
    BackendProbe p;
    p.name = "tensorrt";
    p.reason = std::string("TensorRT probe failed: ") + e.what();
    return p;
  }
#else
  BackendProbe p;
  p.name = "tensorrt";
  p.available = false;
  p.reason = kNoTensorRt;
  return p;
#endif
}

Napi::Value ListBackends(Napi::CallbackInfo const& info) {
  Napi::Env env = info.Env();
  auto arr = Napi::Array::New(env);
  arr.Set(0u, probeToJs(env, probeTensorRt()));
  arr.Set(1u, probeToJs(env, sim::SimBackend().probe()));
  return arr;
}

std::unique_ptr<Backend> makeBackend(Napi::Env env, JobSpec const& spec) {
  std::string const& name = spec.request.backend;
  if (name == "simulated") return sim::makeSimBackend();
  if (name == "storm") {
    return std::make_unique<sim::CallbackStormBackend>(spec.stormCallbacks, spec.request.simThreads, spec.stormRate);
  }
  if (name == "tensorrt") {
#if defined(TBS_HAVE_TENSORRT) && TBS_HAVE_TENSORRT
    return makeTensorRtBackend();
#else
    throw Napi::Error::New(env, std::string("tensorrt backend unavailable: ") + kNoTensorRt);
#endif
  }
  throw Napi::TypeError::New(env, "build request: unknown backend \"" + name + "\" (expected tensorrt or simulated)");
}

CancelReason cancelReasonFrom(Napi::Value v) {
  if (!v.IsString()) return CancelReason::kUser;
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s == "timeout") return CancelReason::kTimeout;
  if (s == "shutdown") return CancelReason::kShutdown;
  return CancelReason::kUser;
}

Napi::Value StartBuild(Napi::CallbackInfo const& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    throw Napi::TypeError::New(env, "startBuild(request: object, onBatch: function)");
  }
  JobSpec spec = requestFromJs(info[0].As<Napi::Object>());
  std::unique_ptr<Backend> backend = makeBackend(env, spec);
  std::shared_ptr<BuildJob> job =
      BuildJob::start(env, info[1].As<Napi::Function>(), std::move(spec.request), spec.pipeline, std::move(backend));

  auto handle = Napi::Object::New(env);
  handle.Set("cancel", Napi::Function::New(env, [job](Napi::CallbackInfo const& ci) -> Napi::Value {
               return Napi::Boolean::New(ci.Env(), job->cancel(cancelReasonFrom(ci.Length() > 0 ? ci[0] : ci.Env().Undefined())));
             }));
  handle.Set("snapshot", Napi::Function::New(env, [job](Napi::CallbackInfo const& ci) -> Napi::Value {
               Napi::Env e = ci.Env();
               auto nodes = job->snapshot();
               auto arr = Napi::Array::New(e, nodes.size());
               for (uint32_t i = 0; i < nodes.size(); ++i) {
                 auto const& n = nodes[i];
                 auto o = Napi::Object::New(e);
                 o.Set("id", n.id);
                 o.Set("parentId", n.parentId < 0 ? e.Null() : Napi::Number::New(e, n.parentId));
                 o.Set("name", n.name);
                 o.Set("nbSteps", n.nbSteps);
                 o.Set("instance", n.instance);
                 o.Set("stepsDone", n.stepsDone);
                 o.Set("startT", n.startT);
                 if (n.endT >= 0) {
                   o.Set("endT", n.endT);
                   o.Set("early", n.early);
                 }
                 arr.Set(i, o);
               }
               return arr;
             }));
  return handle;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("listBackends", Napi::Function::New(env, ListBackends, "listBackends"));
  exports.Set("startBuild", Napi::Function::New(env, StartBuild, "startBuild"));
  exports.Set("abiVersion", Napi::Number::New(env, 1));
  return exports;
}

}  // namespace
}  // namespace tbs::addon

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return tbs::addon::Init(env, exports); }

NODE_API_MODULE(trt_build_studio, InitModule)
