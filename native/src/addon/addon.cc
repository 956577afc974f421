// Module entry: listBackends(), startBuild(request, onBatch) and openGpuProbe(device). The TS
// wrapper (apps/worker/addon.ts) turns batches into protocol events; this file only crosses the
// JS boundary.
//
// The addon includes no TensorRT header: the tensorrt backend is trt/trt_host.cc, which loads
// the adapter library of the TensorRT major it finds (native/trt.cmake, trt/adapter_api.h).
#include <napi.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "../sim/callback_storm.h"
#include "../sim/sim_backend.h"
#include "../sim/sim_build_routes.h"
#include "../sim/sim_plugins.h"
#include "../sim/sim_precision.h"
#include "../gpu/cuda_driver.h"
#include "../gpu/gpu_probe.h"
#include "build_job.h"
#include "gpu_probe_js.h"
#include "request_from_js.h"
#include "stderr_file.h"
#include "trt/trt_capabilities.h"
#include "trt/trt_host.h"

#ifndef TBS_TRT_ADAPTERS
#define TBS_TRT_ADAPTERS ""  // built without native/trt.cmake
#endif

namespace tbs::addon {
namespace {

std::vector<AdapterFact> const& builtAdapters() {
  static auto const* list = new std::vector<AdapterFact>(trt::parseAdapterList(TBS_TRT_ADAPTERS));
  return *list;
}

Napi::Object libraryToJs(Napi::Env env, LibraryFact const& l) {
  auto o = Napi::Object::New(env);
  o.Set("path", l.path);
  if (!l.version.empty()) o.Set("version", l.version);
  return o;
}

// What identifies the GPU and driver an engine was built with (its manifest, `backends --json`),
// read in the addon through the CUDA driver and NVML it already uses for the GPU probe, so both
// adapters get it without a change to what they report. Empty where not known.
struct GpuIdentity {
  std::string uuid;           // cuDeviceGetUuid(_v2), "GPU-…" as nvidia-smi writes it
  std::string driverVersion;  // nvmlSystemGetDriverVersion, "580.95.05"
  std::string uuidProblem, driverProblem;
};

GpuIdentity gpuIdentity(int32_t device) {
  GpuIdentity id;
  std::string error;
  if (gpu::CudaDriver* driver = gpu::CudaDriver::get(error)) {
    if (!driver->uuidOf(device, id.uuid, error)) id.uuidProblem = error;
  } else {
    id.uuidProblem = error;
  }
  if (!gpu::nvidiaDriverVersion(id.driverVersion, error)) id.driverProblem = error;
  return id;
}

Napi::Array stringsToJs(Napi::Env env, std::vector<std::string> const& list) {
  auto arr = Napi::Array::New(env, list.size());
  for (uint32_t i = 0; i < list.size(); ++i) arr.Set(i, list[i]);
  return arr;
}

Napi::Object capabilitiesToJs(Napi::Env env, trt::TrtCapabilities const& c) {
  auto o = Napi::Object::New(env);
  o.Set("version", c.version);
  o.Set("precisions", stringsToJs(env, c.precisions));
  o.Set("deprecatedPrecisions", stringsToJs(env, c.deprecatedPrecisions));
  o.Set("weakTypingDeprecated", c.weakTypingDeprecated);
  o.Set("stronglyTypedImplied", c.stronglyTypedImplied);
  o.Set("hardwareCompatibility", stringsToJs(env, c.hardwareCompatibility));
  o.Set("buildRoutes", c.buildRoutes);
  o.Set("timingCacheKeyCount", c.timingCacheKeyCount);
  o.Set("serializeToStream", c.serializeToStream);
  o.Set("bestWithoutInt8OnCc103", c.bestWithoutInt8OnCc103);
  return o;
}

// The release whose capabilities a backend reports: for tensorrt the one it drives (the older of
// the found library and the adapter's headers; the library's version, or the backend's when it
// found none but is available), for the simulator the one it imitates. "" when none is known.
std::string capabilityRelease(BackendProbe const& p) {
  if (p.name == "simulated") return p.emulates.empty() ? std::string(facts::kSimulatedDefault) : p.emulates;
  std::string library = !p.library.path.empty() ? p.library.version : p.available ? p.version : std::string();
  return p.adapter.major > 0 ? trt::drivenRelease(library, p.adapter.headerVersion) : library;
}

Napi::Object probeToJs(Napi::Env env, BackendProbe const& p, GpuIdentity const& id) {
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
  if (p.name == "tensorrt") {
    auto adapters = Napi::Array::New(env, p.adapters.size());
    for (uint32_t i = 0; i < p.adapters.size(); ++i) {
      auto a = Napi::Object::New(env);
      a.Set("major", p.adapters[i].major);
      a.Set("headerVersion", p.adapters[i].headerVersion);
      adapters.Set(i, a);
    }
    o.Set("adapters", adapters);
  }
  if (!p.library.path.empty()) {
    auto l = libraryToJs(env, p.library);
    if (p.library.version.empty()) l.Set("version", "");
    o.Set("library", l);
  }
  if (!p.parser.path.empty()) {
    auto l = libraryToJs(env, p.parser);
    if (p.parser.version.empty()) l.Set("version", "");
    o.Set("parser", l);
  }
  if (p.adapter.major > 0) {
    auto a = Napi::Object::New(env);
    a.Set("major", p.adapter.major);
    a.Set("headerVersion", p.adapter.headerVersion);
    a.Set("path", p.adapter.path);
    o.Set("adapter", a);
  }
  if (!p.preloaded.empty()) {
    auto arr = Napi::Array::New(env, p.preloaded.size());
    for (uint32_t i = 0; i < p.preloaded.size(); ++i) arr.Set(i, libraryToJs(env, p.preloaded[i]));
    o.Set("preloaded", arr);
  }
  if (p.gpu.device >= 0) {
    auto g = Napi::Object::New(env);
    g.Set("name", p.gpu.name);
    g.Set("computeCapability", p.gpu.computeCapability);
    g.Set("device", p.gpu.device);
    if (!id.uuid.empty()) g.Set("uuid", id.uuid);
    o.Set("gpu", g);
  }
  if (!p.cudaDriver.path.empty()) {
    auto d = libraryToJs(env, p.cudaDriver);
    if (p.cudaDriver.version.empty()) d.Set("version", "");
    if (!p.cudaDriverProblem.empty()) d.Set("problem", p.cudaDriverProblem);
    if (!id.driverVersion.empty()) d.Set("driverVersion", id.driverVersion);
    o.Set("cudaDriver", d);
  }
  // Why an identity is missing, where a GPU was found (the manifest then says null).
  if (p.gpu.device >= 0 && (!id.uuidProblem.empty() || !id.driverProblem.empty())) {
    Napi::Object d = o.Has("detail") ? o.Get("detail").As<Napi::Object>() : Napi::Object::New(env);
    if (!id.uuidProblem.empty()) d.Set("gpuUuid", "unknown: " + id.uuidProblem);
    if (!id.driverProblem.empty()) d.Set("driverVersion", "unknown: " + id.driverProblem);
    o.Set("detail", d);
  }
  if (p.hasBuildRoutes) {
    auto arr = Napi::Array::New(env, p.buildRoutes.size());
    for (uint32_t i = 0; i < p.buildRoutes.size(); ++i) arr.Set(i, p.buildRoutes[i]);
    o.Set("buildRoutes", arr);
  }
  if (!p.emulates.empty()) o.Set("emulates", p.emulates);
  trt::TrtCapabilities caps;
  if (trt::capabilitiesOfText(capabilityRelease(p), caps)) o.Set("capabilities", capabilitiesToJs(env, caps));
  if (!p.pluginLibrary.path.empty() || p.pluginCreators >= 0) {
    auto pl = Napi::Object::New(env);
    if (!p.pluginLibrary.path.empty()) pl.Set("path", p.pluginLibrary.path);
    if (!p.pluginLibrary.version.empty()) pl.Set("version", p.pluginLibrary.version);
    if (p.pluginCreators >= 0) pl.Set("creators", p.pluginCreators);
    o.Set("plugins", pl);
  }
  return o;
}

BackendProbe probeTensorRtSafe() {
  try {
    return trt::probeTensorRt(builtAdapters());
  } catch (std::exception const& e) {
    BackendProbe p;
    p.name = "tensorrt";
    p.adapters = builtAdapters();
    p.reason = std::string("TensorRT probe failed: ") + e.what();
    return p;
  }
}

BackendProbe probeSimulated() {
  BackendProbe p = sim::SimBackend().probe();
  p.emulates = sim::simEmulatedTrtVersion();
  // As a TensorRT library with build routes: the knob database of getAllBuildRoutes().
  if (sim::simVersionHasBuildRoutes(p.emulates)) {
    p.hasBuildRoutes = true;
    p.buildRoutes = sim::simKnobPatterns();
    p.detail["buildRoutesJson"] = sim::simKnobDatabaseJson();
  }
  p.pluginLibrary.path = "(simulated) libnvinfer_plugin";
  p.pluginCreators = static_cast<int32_t>(sim::simStandardPluginOps().size());
  return p;
}

// The probe loads libraries (a real libnvinfer and its builder resources are hundreds of MB)
// and may initialize CUDA: it runs on a libuv worker thread, never on the JS thread.
class ProbeWorker final : public Napi::AsyncWorker {
 public:
  explicit ProbeWorker(Napi::Env env) : Napi::AsyncWorker(env, "trt-build-studio:probe"), deferred_(env) {}
  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    probes_.push_back(probeTensorRtSafe());
    probes_.push_back(probeSimulated());
    identities_.resize(probes_.size());
    // The GPU TensorRT found: no context is created for its UUID; NVML only reads the version.
    if (probes_[0].gpu.device >= 0) identities_[0] = gpuIdentity(probes_[0].gpu.device);
  }
  void OnOK() override {
    Napi::Env env = Env();
    auto arr = Napi::Array::New(env, probes_.size());
    for (uint32_t i = 0; i < probes_.size(); ++i) arr.Set(i, probeToJs(env, probes_[i], identities_[i]));
    deferred_.Resolve(arr);
  }
  void OnError(Napi::Error const& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::vector<BackendProbe> probes_;
  std::vector<GpuIdentity> identities_;
};

Napi::Value ListBackends(Napi::CallbackInfo const& info) {
  auto* worker = new ProbeWorker(info.Env());  // deleted by node-addon-api after OnOK/OnError
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

// TensorRT's build-route list (JSON), read when asked: it creates a builder (seconds, GBs), so
// on a libuv worker thread, never on the JS thread; kept on disk by the adapter.
class BuildRoutesWorker final : public Napi::AsyncWorker {
 public:
  explicit BuildRoutesWorker(Napi::Env env) : Napi::AsyncWorker(env, "trt-build-studio:build-routes"), deferred_(env) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      std::string error;
      if (!trt::makeTensorRtHostBackend(builtAdapters())->buildRoutes(json_, error)) SetError(error);
    } catch (std::exception const& e) {
      SetError(std::string("reading TensorRT build routes failed: ") + e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(Napi::String::New(Env(), json_)); }
  void OnError(Napi::Error const& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string json_;
};

Napi::Value ReadBuildRoutes(Napi::CallbackInfo const& info) {
  auto* worker = new BuildRoutesWorker(info.Env());  // deleted by node-addon-api after OnOK/OnError
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

std::unique_ptr<Backend> makeBackend(Napi::Env env, JobSpec const& spec) {
  std::string const& name = spec.request.backend;
  if (name == "simulated") return sim::makeSimBackend();
  if (name == "storm") {
    return std::make_unique<sim::CallbackStormBackend>(spec.stormCallbacks, spec.request.simThreads, spec.stormRate);
  }
  if (name == "tensorrt") return trt::makeTensorRtHostBackend(builtAdapters());
  throw Napi::TypeError::New(env, "build request: unknown backend \"" + name + "\" (expected tensorrt or simulated)");
}

CancelReason cancelReasonFrom(Napi::Value v) {
  if (!v.IsString()) return CancelReason::kUser;
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s == "timeout") return CancelReason::kTimeout;
  if (s == "shutdown") return CancelReason::kShutdown;
  if (s == "memory") return CancelReason::kMemory;
  return CancelReason::kUser;
}

Napi::Value StartBuild(Napi::CallbackInfo const& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    throw Napi::TypeError::New(env, "startBuild(request: object, onBatch: function, linePrefix?: string)");
  }
  // The worker's wire form: with a prefix, each batch also carries its hot events as JSON lines.
  std::string linePrefix = info.Length() > 2 && info[2].IsString() ? info[2].As<Napi::String>().Utf8Value() : std::string();
  JobSpec spec = requestFromJs(info[0].As<Napi::Object>());
  std::unique_ptr<Backend> backend = makeBackend(env, spec);
  std::shared_ptr<BuildJob> job =
      BuildJob::start(env, info[1].As<Napi::Function>(), std::move(spec.request), spec.pipeline, std::move(backend), std::move(linePrefix));

  auto handle = Napi::Object::New(env);
  handle.Set("cancel", Napi::Function::New(env, [job](Napi::CallbackInfo const& ci) -> Napi::Value {
               return Napi::Boolean::New(ci.Env(), job->cancel(cancelReasonFrom(ci.Length() > 0 ? ci[0] : ci.Env().Undefined())));
             }));
  handle.Set("hold", Napi::Function::New(env, [job](Napi::CallbackInfo const& ci) -> Napi::Value {
               job->setHold(ci.Length() > 0 && ci[0].ToBoolean().Value());
               return ci.Env().Undefined();
             }));
  handle.Set("backPressure", Napi::Function::New(env, [job](Napi::CallbackInfo const& ci) -> Napi::Value {
               auto bp = job->backPressure();
               auto o = Napi::Object::New(ci.Env());
               o.Set("outboxBytes", static_cast<double>(bp.outboxBytes));
               o.Set("outboxPeakBytes", static_cast<double>(bp.outboxPeakBytes));
               o.Set("outboxHighBytes", static_cast<double>(bp.outboxHighBytes));
               o.Set("inFlightBytes", static_cast<double>(bp.inFlightBytes));
               o.Set("gateClosings", static_cast<double>(bp.gateClosings));
               o.Set("builderWaitedMs", bp.builderWaitedMs);
               return o;
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

// The build options as the native layer read them (requestToJs), for the options-table test:
// parses a request object exactly as startBuild does, and starts nothing.
Napi::Value EchoBuildRequest(Napi::CallbackInfo const& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "echoBuildRequest(request): request must be an object");
  return requestToJs(env, requestFromJs(info[0].As<Napi::Object>()).request);
}

// What a TensorRT release can do (trt/trt_capabilities.h), for a release given as text; null when
// the text is not a release. What listBackends() reports per backend, for the test that holds
// apps/shared/trt-capabilities.ts (capabilities of a bare version string) to the same facts.
Napi::Value TrtCapabilitiesFor(Napi::CallbackInfo const& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "trtCapabilitiesFor(version): version must be a string");
  trt::TrtCapabilities caps;
  if (!trt::capabilitiesOfText(info[0].As<Napi::String>().Utf8Value(), caps)) return env.Null();
  return capabilitiesToJs(env, caps);
}

// The batch layout (events.h) for addon.ts to check against the one it decodes.
Napi::Object eventLayoutToJs(Napi::Env env) {
  auto layout = Napi::Object::New(env);
  layout.Set("slots", Napi::Number::New(env, static_cast<double>(kEventSlots)));
  auto fields = Napi::Array::New(env, kEventSlots);
  for (uint32_t i = 0; i < kEventSlots; ++i) fields.Set(i, kEventSlotNames[i]);
  layout.Set("fields", fields);
  auto types = Napi::Object::New(env);
  for (auto const& t : kEvTypeNames) types.Set(t.name, static_cast<double>(t.type));
  layout.Set("types", types);
  return layout;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("listBackends", Napi::Function::New(env, ListBackends, "listBackends"));
  exports.Set("startBuild", Napi::Function::New(env, StartBuild, "startBuild"));
  exports.Set("readBuildRoutes", Napi::Function::New(env, ReadBuildRoutes, "readBuildRoutes"));
  exports.Set("openGpuProbe", Napi::Function::New(env, OpenGpuProbe, "openGpuProbe"));
  exports.Set("echoBuildRequest", Napi::Function::New(env, EchoBuildRequest, "echoBuildRequest"));
  exports.Set("redirectStderrToFile", Napi::Function::New(env, tbs::RedirectStderrToFile, "redirectStderrToFile"));
  exports.Set("trtCapabilitiesFor", Napi::Function::New(env, TrtCapabilitiesFor, "trtCapabilitiesFor"));
  exports.Set("abiVersion", Napi::Number::New(env, 1));
  exports.Set("eventLayout", eventLayoutToJs(env));
  exports.Set("requestFields", requestFieldsToJs(env));
  return exports;
}

}  // namespace
}  // namespace tbs::addon

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return tbs::addon::Init(env, exports); }

NODE_API_MODULE(trt_build_studio, InitModule)
