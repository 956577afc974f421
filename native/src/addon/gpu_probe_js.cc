#include "gpu_probe_js.h"

#include <memory>
#include <string>

#include "gpu/gpu_probe.h"

namespace tbs::addon {

Napi::Value OpenGpuProbe(Napi::CallbackInfo const& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "openGpuProbe(device): device must be a number");
  double d = info[0].As<Napi::Number>().DoubleValue();
  auto result = Napi::Object::New(env);
  if (d != static_cast<double>(static_cast<int32_t>(d))) {
    result.Set("ok", false);
    result.Set("reason", "device " + std::to_string(d) + " is not a CUDA device ordinal");
    return result;
  }
  std::string error;
  // Shared by the two functions below; close() drops it, and so does the garbage collector.
  std::shared_ptr<gpu::GpuProbe> probe = gpu::GpuProbe::open(static_cast<int32_t>(d), error);
  if (!probe) {
    result.Set("ok", false);
    result.Set("reason", error);
    return result;
  }
  result.Set("ok", true);
  result.Set("busId", probe->pciBusId());
  auto holder = std::make_shared<std::shared_ptr<gpu::GpuProbe>>(std::move(probe));
  result.Set("sample", Napi::Function::New(env, [holder](Napi::CallbackInfo const& ci) -> Napi::Value {
               auto out = Napi::Object::New(ci.Env());
               if (!*holder) {
                 out.Set("error", "the GPU probe was closed");
                 out.Set("permanent", true);
                 return out;
               }
               gpu::GpuUtilization u;
               std::string err;
               bool permanent = false;
               if (!(*holder)->sample(u, err, permanent)) {
                 out.Set("error", err);
                 out.Set("permanent", permanent);
                 return out;
               }
               out.Set("gpuPercent", u.gpuPercent);
               out.Set("memoryPercent", u.memoryPercent);
               // Unknown figures are left out, not sent as -1.
               if (u.processMemoryBytes >= 0) out.Set("processMemoryBytes", static_cast<double>(u.processMemoryBytes));
               if (u.deviceUsedBytes >= 0) out.Set("deviceUsedBytes", static_cast<double>(u.deviceUsedBytes));
               if (u.deviceTotalBytes >= 0) out.Set("deviceTotalBytes", static_cast<double>(u.deviceTotalBytes));
               if (u.smClockMhz >= 0) out.Set("smClockMhz", u.smClockMhz);
               if (u.temperatureC >= 0) out.Set("temperatureC", u.temperatureC);
               return out;
             }));
  result.Set("close", Napi::Function::New(env, [holder](Napi::CallbackInfo const& ci) -> Napi::Value {
               holder->reset();
               return ci.Env().Undefined();
             }));
  return result;
}

}  // namespace tbs::addon
