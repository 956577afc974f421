// Converts the request object addon.ts passes (already validated and flattened there) into a
// BuildRequest, once, on the JS thread; builder threads never touch JS values. The fields, their
// kinds and units come from one list, native/src/core/request_fields.def.
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

// The build options of a BuildRequest as a JS object, under the keys requestFromJs reads and in
// its units (bytes, ms): what the native layer understood. The addon exports it as
// echoBuildRequest so a test can walk every entry of the options table (apps/shared/
// build-options.ts) through JS -> native -> JS; a key read here but not there, or the other way
// round, fails that test. Unset values come back as their "not set" value (-1, "", false).
Napi::Object requestToJs(Napi::Env env, BuildRequest const& r);

// The list of request fields (request_fields.def) as data: [{key, type, cxx, unit, origin,
// tensorrt, min?}]. The addon exports it as requestFields; apps/worker/addon.ts refuses to load
// an addon whose fields disagree with the options table's native keys (checkRequestFields).
Napi::Array requestFieldsToJs(Napi::Env env);

}  // namespace tbs::addon
