// openGpuProbe(device) for the worker's heartbeats (native/src/gpu/gpu_probe.h).
#pragma once

#include <napi.h>

namespace tbs::addon {

// openGpuProbe(device: number):
//   { ok: true, busId, sample(): { gpuPercent, memoryPercent } | { error, permanent }, close() }
//   | { ok: false, reason }
Napi::Value OpenGpuProbe(Napi::CallbackInfo const& info);

}  // namespace tbs::addon
