#include "request_from_js.h"

#include <iterator>
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

// One reader per kind of field (request_fields.h); `v` holds the field's `unset` on entry.
void read(Napi::Object const& o, char const* key, std::string& v, request_kind::Text) { v = str(o, key); }
void read(Napi::Object const& o, char const* key, std::string& v, request_kind::RequiredText) { v = str(o, key, true); }
void read(Napi::Object const& o, char const* key, int32_t& v, request_kind::Int32) { v = static_cast<int32_t>(num(o, key, v)); }
void read(Napi::Object const& o, char const* key, int64_t& v, request_kind::Int64) {
  v = static_cast<int64_t>(num(o, key, static_cast<double>(v)));
}
void read(Napi::Object const& o, char const* key, uint64_t& v, request_kind::Uint64) {
  v = static_cast<uint64_t>(num(o, key, static_cast<double>(v)));
}
void read(Napi::Object const& o, char const* key, double& v, request_kind::Double) { v = num(o, key, v); }
void read(Napi::Object const& o, char const* key, int32_t& v, request_kind::DeviceIndex) {
  double device = num(o, key, v);
  if (device != v && (device < 0 || device != static_cast<double>(static_cast<int32_t>(device)))) {
    typeError(o.Env(), key, "a CUDA device index (an integer >= 0)");
  }
  v = static_cast<int32_t>(device);
}
void read(Napi::Object const& o, char const* key, bool& v, request_kind::Flag) { v = flag(o, key, v); }
void read(Napi::Object const& o, char const* key, std::vector<std::string>& v, request_kind::Texts) { v = strings(o.Env(), o, key); }

template <typename Range, typename ReadList>
void readRanges(Napi::Object const& o, std::string const& key, std::map<std::string, Range>& out, ReadList readList) {
  Napi::Env env = o.Env();
  Napi::Value ranges = o.Get(key);
  if (ranges.IsUndefined() || ranges.IsNull()) return;
  if (!ranges.IsObject()) typeError(env, key, "an object of {min, opt, max}");
  auto so = ranges.As<Napi::Object>();
  Napi::Array names = so.GetPropertyNames();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    std::string name = names.Get(i).As<Napi::String>().Utf8Value();
    Napi::Value range = so.Get(name);
    if (!range.IsObject()) typeError(env, key + "." + name, "an object {min, opt, max}");
    auto ro = range.As<Napi::Object>();
    Range r;
    r.min = readList(env, ro.Get("min"), key + "." + name + ".min");
    r.opt = readList(env, ro.Get("opt"), key + "." + name + ".opt");
    r.max = readList(env, ro.Get("max"), key + "." + name + ".max");
    out[name] = r;
  }
}
void read(Napi::Object const& o, char const* key, std::map<std::string, ShapeRange>& v, request_kind::DimRanges) {
  readRanges(o, key, v, dims);
}
void read(Napi::Object const& o, char const* key, std::map<std::string, ShapeValueRange>& v, request_kind::ValueRanges) {
  readRanges(o, key, v, values);
}
void read(Napi::Object const& o, char const* key, SimFaultKind& v, request_kind::SimFault) {
  std::string fault = str(o, key);
  if (fault.empty()) {
    v = SimFaultKind::kNone;
  } else if (fault == "fail") {
    v = SimFaultKind::kFail;
  } else if (fault == "crash") {
    v = SimFaultKind::kCrash;
  } else if (fault == "hang") {
    v = SimFaultKind::kHang;
  } else {
    typeError(o.Env(), key, "one of \"fail\", \"crash\", \"hang\"");
  }
}
void read(Napi::Object const& o, char const* key, std::vector<LayerInfo>& v, request_kind::Layers) {
  Napi::Env env = o.Env();
  Napi::Value layers = o.Get(key);
  if (layers.IsUndefined() || layers.IsNull()) return;
  if (!layers.IsArray()) typeError(env, key, "an array of {name, op}");
  auto arr = layers.As<Napi::Array>();
  v.reserve(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value item = arr.Get(i);
    if (!item.IsObject()) typeError(env, std::string(key) + "[" + std::to_string(i) + "]", "an object {name, op}");
    auto layer = item.As<Napi::Object>();
    v.push_back(LayerInfo{str(layer, "name"), str(layer, "op")});
  }
}

}  // namespace

JobSpec requestFromJs(Napi::Object const& o) {
  JobSpec spec;
  BuildRequest& r = spec.request;
#define TBS_REQUEST_FIELD(member, Kind, unset, unit, origin, since, before, min) read(o, #member, r.member, request_kind::Kind{});
#include "../core/request_fields.def"
#undef TBS_REQUEST_FIELD
  // A pinned build: its cache is the build's timing cache, read only, and a miss fails.
  if (!r.pinnedCachePath.empty()) {
    r.timingCachePath = r.pinnedCachePath;
    r.errorOnCacheMiss = true;
  }

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

Napi::Value toJs(Napi::Env env, std::string const& v) { return Napi::String::New(env, v); }
Napi::Value toJs(Napi::Env env, int32_t v) { return Napi::Number::New(env, v); }
Napi::Value toJs(Napi::Env env, int64_t v) { return Napi::Number::New(env, static_cast<double>(v)); }
Napi::Value toJs(Napi::Env env, uint64_t v) { return Napi::Number::New(env, static_cast<double>(v)); }
Napi::Value toJs(Napi::Env env, double v) { return Napi::Number::New(env, v); }
Napi::Value toJs(Napi::Env env, bool v) { return Napi::Boolean::New(env, v); }
Napi::Value toJs(Napi::Env env, SimFaultKind v) { return Napi::String::New(env, simFaultName(v)); }
Napi::Value toJs(Napi::Env env, std::vector<std::string> const& v) {
  auto arr = Napi::Array::New(env, v.size());
  for (uint32_t i = 0; i < v.size(); ++i) arr.Set(i, v[i]);
  return arr;
}
template <typename Range>
Napi::Value toJs(Napi::Env env, std::map<std::string, Range> const& v) {
  return rangesToJs(env, v);
}
Napi::Value toJs(Napi::Env env, std::vector<LayerInfo> const& v) {
  auto arr = Napi::Array::New(env, v.size());
  for (uint32_t i = 0; i < v.size(); ++i) {
    auto layer = Napi::Object::New(env);
    layer.Set("name", v[i].name);
    layer.Set("op", v[i].op);
    arr.Set(i, layer);
  }
  return arr;
}

}  // namespace

Napi::Object requestToJs(Napi::Env env, BuildRequest const& r) {
  auto o = Napi::Object::New(env);
#define TBS_REQUEST_FIELD(member, Kind, unset, unit, origin, since, before, min) \
  if (RequestOrigin::origin == RequestOrigin::Option) o.Set(#member, toJs(env, r.member));
#include "../core/request_fields.def"
#undef TBS_REQUEST_FIELD
  // Pinned: the cache path comes back under the key it came in by only.
  if (r.errorOnCacheMiss) o.Set("timingCachePath", std::string());
  return o;
}

Napi::Array requestFieldsToJs(Napi::Env env) {
  auto list = Napi::Array::New(env, std::size(kRequestFields));
  uint32_t i = 0;
  for (RequestFieldInfo const& f : kRequestFields) {
    auto o = Napi::Object::New(env);
    o.Set("key", f.key);
    o.Set("type", f.jsType);
    o.Set("cxx", f.cxxType);
    o.Set("unit", f.unit);
    o.Set("origin", f.origin == RequestOrigin::Option ? "option" : "worker");
    if (f.since.major < 0) {
      o.Set("tensorrt", env.Null());
    } else {
      auto trt = Napi::Object::New(env);
      auto text = [](facts::Version v) { return std::to_string(v.major) + "." + std::to_string(v.minor); };
      if (f.since.major > 0) trt.Set("since", text(f.since));
      if (f.before.major > 0) trt.Set("before", text(f.before));
      o.Set("tensorrt", trt);
    }
    if (f.min != kNoMin) o.Set("min", Napi::Number::New(env, static_cast<double>(f.min)));
    list.Set(i++, o);
  }
  return list;
}

}  // namespace tbs::addon
