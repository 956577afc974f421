#include "request_from_js.h"

#include <map>
#include <string>
#include <vector>

namespace tbs::addon {
namespace {

[[noreturn]] void typeError(Napi::Env env, std::string const& field, char const* expected) {
  throw Napi::TypeError::New(env, "build request: \"" + field + "\" must be " + expected);
}

std::string str(Napi::Object const& o, char const* key, bool required = false) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) {
    if (required) typeError(o.Env(), key, "a string");
    return {};
  }
  if (!v.IsString()) typeError(o.Env(), key, "a string");
  return v.As<Napi::String>().Utf8Value();
}

double num(Napi::Object const& o, char const* key, double fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return fallback;
  if (!v.IsNumber()) typeError(o.Env(), key, "a number");
  return v.As<Napi::Number>().DoubleValue();
}

bool flag(Napi::Object const& o, char const* key, bool fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return fallback;
  if (!v.IsBoolean()) typeError(o.Env(), key, "a boolean");
  return v.As<Napi::Boolean>().Value();
}

// An optional array of strings (plugin library paths).
std::vector<std::string> strings(Napi::Env env, Napi::Object const& o, char const* key) {
  Napi::Value v = o.Get(key);
  std::vector<std::string> out;
  if (v.IsUndefined() || v.IsNull()) return out;
  if (!v.IsArray()) typeError(env, key, "an array of strings");
  auto arr = v.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value s = arr.Get(i);
    if (!s.IsString()) typeError(env, key, "an array of strings");
    out.push_back(s.As<Napi::String>().Utf8Value());
  }
  return out;
}

// Shape-tensor values: any integers (zero and negative allowed).
std::vector<int64_t> values(Napi::Env env, Napi::Value v, std::string const& field) {
  if (!v.IsArray()) typeError(env, field, "an array of integers");
  auto arr = v.As<Napi::Array>();
  std::vector<int64_t> out;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value d = arr.Get(i);
    if (!d.IsNumber()) typeError(env, field, "an array of integers");
    double x = d.As<Napi::Number>().DoubleValue();
    if (x != static_cast<double>(static_cast<int64_t>(x))) typeError(env, field, "an array of integers");
    out.push_back(static_cast<int64_t>(x));
  }
  return out;
}

std::vector<int64_t> dims(Napi::Env env, Napi::Value v, std::string const& field) {
  if (!v.IsArray()) typeError(env, field, "an array of positive integers");
  auto arr = v.As<Napi::Array>();
  std::vector<int64_t> out;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value d = arr.Get(i);
    if (!d.IsNumber()) typeError(env, field, "an array of positive integers");
    out.push_back(d.As<Napi::Number>().Int64Value());
  }
  return out;
}

}  // namespace

JobSpec requestFromJs(Napi::Object const& o) {
  Napi::Env env = o.Env();
  JobSpec spec;
  BuildRequest& r = spec.request;
  r.buildId = str(o, "buildId", true);
  r.backend = str(o, "backend", true);
  r.modelPath = str(o, "modelPath");
  r.outputPath = str(o, "outputPath");
  r.timingCachePath = str(o, "timingCachePath");
  // A pinned build (pinnedCache): its cache is the build's timing cache, read only, and a miss fails.
  std::string pinned = str(o, "pinnedCachePath");
  if (!pinned.empty()) {
    r.timingCachePath = pinned;
    r.errorOnCacheMiss = true;
  }

  Napi::Value layers = o.Get("layers");
  if (!layers.IsUndefined() && !layers.IsNull()) {
    if (!layers.IsArray()) typeError(env, "layers", "an array of {name, op}");
    auto arr = layers.As<Napi::Array>();
    r.layers.reserve(arr.Length());
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value item = arr.Get(i);
      if (!item.IsObject()) typeError(env, "layers[" + std::to_string(i) + "]", "an object {name, op}");
      auto layer = item.As<Napi::Object>();
      r.layers.push_back(LayerInfo{str(layer, "name"), str(layer, "op")});
    }
  }

  r.optLevel = static_cast<int32_t>(num(o, "optLevel", -1));
  r.workspaceBytes = static_cast<int64_t>(num(o, "workspaceBytes", -1));
  r.tacticDramBytes = static_cast<int64_t>(num(o, "tacticDramBytes", -1));
  r.tacticSharedMemoryBytes = static_cast<int64_t>(num(o, "tacticSharedMemoryBytes", -1));
  Napi::Value shapes = o.Get("shapes");
  if (!shapes.IsUndefined() && !shapes.IsNull()) {
    if (!shapes.IsObject()) typeError(env, "shapes", "an object of {min, opt, max}");
    auto so = shapes.As<Napi::Object>();
    Napi::Array names = so.GetPropertyNames();
    for (uint32_t i = 0; i < names.Length(); ++i) {
      std::string name = names.Get(i).As<Napi::String>().Utf8Value();
      Napi::Value range = so.Get(name);
      if (!range.IsObject()) typeError(env, "shapes." + name, "an object {min, opt, max}");
      auto ro = range.As<Napi::Object>();
      ShapeRange sr;
      sr.min = dims(env, ro.Get("min"), "shapes." + name + ".min");
      sr.opt = dims(env, ro.Get("opt"), "shapes." + name + ".opt");
      sr.max = dims(env, ro.Get("max"), "shapes." + name + ".max");
      r.shapes[name] = sr;
    }
  }
  Napi::Value shapeValues = o.Get("shapeValues");
  if (!shapeValues.IsUndefined() && !shapeValues.IsNull()) {
    if (!shapeValues.IsObject()) typeError(env, "shapeValues", "an object of {min, opt, max}");
    auto so = shapeValues.As<Napi::Object>();
    Napi::Array names = so.GetPropertyNames();
    for (uint32_t i = 0; i < names.Length(); ++i) {
      std::string name = names.Get(i).As<Napi::String>().Utf8Value();
      Napi::Value range = so.Get(name);
      if (!range.IsObject()) typeError(env, "shapeValues." + name, "an object {min, opt, max}");
      auto ro = range.As<Napi::Object>();
      ShapeValueRange vr;
      vr.min = values(env, ro.Get("min"), "shapeValues." + name + ".min");
      vr.opt = values(env, ro.Get("opt"), "shapeValues." + name + ".opt");
      vr.max = values(env, ro.Get("max"), "shapeValues." + name + ".max");
      r.shapeValues[name] = vr;
    }
  }
  double device = num(o, "device", -1);
  if (device != -1 && (device < 0 || device != static_cast<double>(static_cast<int32_t>(device)))) {
    typeError(env, "device", "a CUDA device index (an integer >= 0)");
  }
  r.device = static_cast<int32_t>(device);
  r.buildRoute = str(o, "buildRoute");
  r.staticPlugins = strings(env, o, "staticPlugins");
  r.dynamicPlugins = strings(env, o, "dynamicPlugins");
  r.pluginsToSerialize = strings(env, o, "pluginsToSerialize");
  r.inferCacheMisses = flag(o, "inferCacheMisses", false);
  r.verboseLog = flag(o, "verboseLog", false);
  r.inputIOFormats = str(o, "inputIOFormats");
  r.outputIOFormats = str(o, "outputIOFormats");
  r.precisionConstraints = str(o, "precisionConstraints");
  r.layerPrecisions = str(o, "layerPrecisions");
  r.layerOutputTypes = str(o, "layerOutputTypes");
  r.sparsity = str(o, "sparsity");
  r.tacticSources = str(o, "tacticSources");
  r.previewFeatures = str(o, "previewFeatures");
  r.avgTiming = static_cast<int32_t>(num(o, "avgTiming", -1));
  r.compilationCache = static_cast<int32_t>(num(o, "compilationCache", -1));
  r.dlaCore = static_cast<int32_t>(num(o, "dlaCore", -1));
  r.allowGPUFallback = flag(o, "allowGPUFallback", false);
  r.stronglyTyped = flag(o, "stronglyTyped", false);
  Napi::Value precision = o.Get("precision");
  if (!precision.IsUndefined() && !precision.IsNull()) {
    if (!precision.IsArray()) typeError(env, "precision", "an array of strings");
    auto arr = precision.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value p = arr.Get(i);
      if (!p.IsString()) typeError(env, "precision", "an array of strings");
      r.precision.push_back(p.As<Napi::String>().Utf8Value());
    }
  }
  r.tf32 = static_cast<int32_t>(num(o, "tf32", -1));
  r.profilingVerbosity = str(o, "profilingVerbosity");
  r.hardwareCompatibility = str(o, "hardwareCompatibility");
  r.versionCompatible = flag(o, "versionCompatible", false);
  r.excludeLeanRuntime = flag(o, "excludeLeanRuntime", false);
  r.maxAuxStreams = static_cast<int32_t>(num(o, "maxAuxStreams", -1));

  r.simDurationMs = num(o, "simDurationMs", r.simDurationMs);
  r.simSeed = static_cast<uint64_t>(num(o, "simSeed", static_cast<double>(r.simSeed)));
  r.simThreads = static_cast<int32_t>(num(o, "simThreads", r.simThreads));
  std::string fault = str(o, "simFault");
  if (fault.empty()) {
    r.simFault = SimFaultKind::kNone;
  } else if (fault == "fail") {
    r.simFault = SimFaultKind::kFail;
  } else if (fault == "crash") {
    r.simFault = SimFaultKind::kCrash;
  } else if (fault == "hang") {
    r.simFault = SimFaultKind::kHang;
  } else {
    typeError(env, "simFault", "one of \"fail\", \"crash\", \"hang\"");
  }
  r.simFaultPhase = str(o, "simFaultPhase");
  r.simHangMs = num(o, "simHangMs", r.simHangMs);
  r.simMemoryBytes = static_cast<int64_t>(num(o, "simMemoryBytes", 0));
  r.heartbeatMs = static_cast<int32_t>(num(o, "heartbeatMs", r.heartbeatMs));

  r.crashRecordPath = str(o, "crashRecordPath");

  spec.pipeline.heartbeatMs = r.heartbeatMs;
  spec.pipeline.crashRecordPath = r.crashRecordPath;
  spec.pipeline.flushIntervalMs = static_cast<int>(num(o, "flushIntervalMs", spec.pipeline.flushIntervalMs));
  spec.stormCallbacks = static_cast<int64_t>(num(o, "stormCallbacks", 0));
  spec.stormRate = num(o, "stormRate", 0);
  return spec;
}

namespace {

template <typename Range>
Napi::Object rangesToJs(Napi::Env env, std::map<std::string, Range> const& ranges) {
  auto out = Napi::Object::New(env);
  auto list = [&](std::vector<int64_t> const& v) {
    auto arr = Napi::Array::New(env, v.size());
    for (uint32_t i = 0; i < v.size(); ++i) arr.Set(i, Napi::Number::New(env, static_cast<double>(v[i])));
    return arr;
  };
  for (auto const& [name, r] : ranges) {
    auto o = Napi::Object::New(env);
    o.Set("min", list(r.min));
    o.Set("opt", list(r.opt));
    o.Set("max", list(r.max));
    out.Set(name, o);
  }
  return out;
}

char const* simFaultName(SimFaultKind k) {
  switch (k) {
    case SimFaultKind::kFail:
      return "fail";
    case SimFaultKind::kCrash:
      return "crash";
    case SimFaultKind::kHang:
      return "hang";
    case SimFaultKind::kNone:
      break;
  }
  return "";
}

}  // namespace

Napi::Object requestToJs(Napi::Env env, BuildRequest const& r) {
  auto o = Napi::Object::New(env);
  auto number = [&](char const* key, double v) { o.Set(key, Napi::Number::New(env, v)); };
  // Pinned: the cache path comes back under the key it came in by.
  o.Set("timingCachePath", r.errorOnCacheMiss ? std::string() : r.timingCachePath);
  o.Set("pinnedCachePath", r.errorOnCacheMiss ? r.timingCachePath : std::string());
  number("optLevel", r.optLevel);
  number("workspaceBytes", static_cast<double>(r.workspaceBytes));
  number("tacticDramBytes", static_cast<double>(r.tacticDramBytes));
  number("tacticSharedMemoryBytes", static_cast<double>(r.tacticSharedMemoryBytes));
  o.Set("shapes", rangesToJs(env, r.shapes));
  o.Set("stronglyTyped", r.stronglyTyped);
  auto precision = Napi::Array::New(env, r.precision.size());
  for (uint32_t i = 0; i < r.precision.size(); ++i) precision.Set(i, r.precision[i]);
  o.Set("precision", precision);
  number("tf32", r.tf32);
  o.Set("profilingVerbosity", r.profilingVerbosity);
  o.Set("hardwareCompatibility", r.hardwareCompatibility);
  o.Set("versionCompatible", r.versionCompatible);
  o.Set("excludeLeanRuntime", r.excludeLeanRuntime);
  number("maxAuxStreams", r.maxAuxStreams);
  number("device", r.device);
  o.Set("shapeValues", rangesToJs(env, r.shapeValues));
  o.Set("buildRoute", r.buildRoute);
  auto list = [&](char const* key, std::vector<std::string> const& v) {
    auto arr = Napi::Array::New(env, v.size());
    for (uint32_t i = 0; i < v.size(); ++i) arr.Set(i, v[i]);
    o.Set(key, arr);
  };
  list("staticPlugins", r.staticPlugins);
  list("dynamicPlugins", r.dynamicPlugins);
  list("pluginsToSerialize", r.pluginsToSerialize);
  o.Set("inferCacheMisses", r.inferCacheMisses);
  o.Set("verboseLog", r.verboseLog);
  o.Set("inputIOFormats", r.inputIOFormats);
  o.Set("outputIOFormats", r.outputIOFormats);
  o.Set("precisionConstraints", r.precisionConstraints);
  o.Set("layerPrecisions", r.layerPrecisions);
  o.Set("layerOutputTypes", r.layerOutputTypes);
  o.Set("sparsity", r.sparsity);
  o.Set("tacticSources", r.tacticSources);
  o.Set("previewFeatures", r.previewFeatures);
  number("avgTiming", r.avgTiming);
  number("compilationCache", r.compilationCache);
  number("dlaCore", r.dlaCore);
  o.Set("allowGPUFallback", r.allowGPUFallback);
  number("simDurationMs", r.simDurationMs);
  number("simSeed", static_cast<double>(r.simSeed));
  o.Set("simFault", simFaultName(r.simFault));
  o.Set("simFaultPhase", r.simFaultPhase);
  number("simMemoryBytes", static_cast<double>(r.simMemoryBytes));
  return o;
}

}  // namespace tbs::addon
