// openGpuProbe(device) for the worker's heartbeats (native/src/gpu/gpu_probe.h).
#pragma once

#include <napi.h>

namespace tbs::addon {

// openGpuProbe(device: number, periodMs?: number):
//   { ok: true, busId, sample(): { gpuPercent, memoryPercent, processMemoryBytes? |
//     processMemoryUnknown?, deviceUsedBytes?, deviceUsedDeltaBytes?, … } | { error, permanent },
//     close() } | { ok: false, reason }
// NVML is sampled every periodMs (default 500) on a thread of the probe's own; sample() returns
// the latest figure without calling NVML (gpu::GpuSampler).
Napi::Value OpenGpuProbe(Napi::CallbackInfo const& info);

}  // namespace tbs::addon
