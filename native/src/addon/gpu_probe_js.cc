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
  // Optional period of the sampling thread, ms (default 500: two samples per heartbeat, so the
  // one a heartbeat reads is at most half a second old).
  int periodMs = 500;
  if (info.Length() >= 2 && info[1].IsNumber()) {
    double p = info[1].As<Napi::Number>().DoubleValue();
    if (p >= 1 && p <= 60000) periodMs = static_cast<int>(p);
  }
  std::string error;
  std::unique_ptr<gpu::GpuProbe> probe = gpu::GpuProbe::open(static_cast<int32_t>(d), error);
  if (!probe) {
    result.Set("ok", false);
    result.Set("reason", error);
    return result;
  }
  // NVML is asked on the sampler's own thread (one sample here, in open, beside the CUDA driver's
  // start); sample() only copies the latest figure, so a heartbeat never waits for NVML.
  // Shared by the two functions below; close() drops it (joining the thread), and so does the
  // garbage collector.
  auto holder = std::make_shared<std::unique_ptr<gpu::GpuSampler>>(std::make_unique<gpu::GpuSampler>(std::move(probe), periodMs));
  result.Set("ok", true);
  result.Set("busId", (*holder)->pciBusId());
  result.Set("sample", Napi::Function::New(env, [holder](Napi::CallbackInfo const& ci) -> Napi::Value {
               auto out = Napi::Object::New(ci.Env());
               if (!*holder) {
                 out.Set("error", "the GPU probe was closed");
                 out.Set("permanent", true);
                 return out;
               }
               gpu::GpuSampler::Sample s = (*holder)->latest();
               if (!s.ok) {
                 out.Set("error", s.error);
                 out.Set("permanent", s.permanent);
                 return out;
               }
               gpu::GpuUtilization const& u = s.value;
               out.Set("gpuPercent", u.gpuPercent);
               out.Set("memoryPercent", u.memoryPercent);
               // Unknown figures are left out, not sent as -1.
               if (u.processMemoryBytes >= 0) out.Set("processMemoryBytes", static_cast<double>(u.processMemoryBytes));
               if (u.processMemoryBytes < 0 && !u.processMemoryUnknown.empty()) out.Set("processMemoryUnknown", u.processMemoryUnknown);
               if (u.deviceUsedBytes >= 0) out.Set("deviceUsedBytes", static_cast<double>(u.deviceUsedBytes));
               if (u.deviceTotalBytes >= 0) out.Set("deviceTotalBytes", static_cast<double>(u.deviceTotalBytes));
               if (u.deviceReservedBytes >= 0) out.Set("deviceReservedBytes", static_cast<double>(u.deviceReservedBytes));
               if (u.deviceUsedDeltaBytes >= 0) out.Set("deviceUsedDeltaBytes", static_cast<double>(u.deviceUsedDeltaBytes));
               if (u.memoryInfoVersion > 0) out.Set("memoryInfoVersion", u.memoryInfoVersion);
               if (u.smClockMhz >= 0) out.Set("smClockMhz", u.smClockMhz);
               if (u.temperatureC >= 0) out.Set("temperatureC", u.temperatureC);
               out.Set("sampleNumber", static_cast<double>(s.number));
               return out;
             }));
  result.Set("close", Napi::Function::New(env, [holder](Napi::CallbackInfo const& ci) -> Napi::Value {
               holder->reset();
               return ci.Env().Undefined();
             }));
  return result;
}

}  // namespace tbs::addon
