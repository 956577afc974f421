// Converts the request object addon.ts passes (already validated and flattened there) into a
// BuildRequest, once, on the JS thread; builder threads never touch JS values.
#pragma once

#include <napi.h>

#include "../core/backend.h"
#include "../core/progress_pipeline.h"

namespace tbs::addon {

struct JobSpec {
  BuildRequest request;
  PipelineOptions pipeline;
  int64_t stormCallbacks = 0;  // backend "storm" only (benchmark)
  double stormRate = 0;        // callbacks per second, 0 = flat out
};

// Throws Napi::TypeError naming the offending field.
JobSpec requestFromJs(Napi::Object const& obj);

}  // namespace tbs::addon
