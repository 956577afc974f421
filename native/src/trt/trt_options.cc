#include "trt_options.h"

#include <set>

#include "trt_version.h"

namespace tbs::trt {
namespace {

std::string libText(int32_t libVersion) { return "TensorRT " + formatTrtVersion(libVersion); }

// The library lacks an option: names the option, what it needs and what was found.
[[maybe_unused]] bool needs(std::string const& option, Since since, int32_t libVersion, std::string& error) {
  if (libHas(libVersion, since)) return true;
  error = option + " needs TensorRT " + sinceText(since) + " or later; the loaded library is " + libText(libVersion);
  return false;
}

// The adapter's headers lack an option (the library may have it): rebuild against newer headers.
[[maybe_unused]] bool headersLack(std::string const& option, Since since, std::string& error) {
  error = option + " needs TensorRT " + sinceText(since) + " or later headers; this adapter was compiled against " +
          formatTrtVersion(kHeaderVersion) + " (rebuild the addon with newer TensorRT headers in TENSORRT_ROOT)";
  return false;
}

#if NV_TENSORRT_MAJOR < 11
// The weakly-typed precision flags are marked [[deprecated]] in late 10.x headers (removed in
// 11.x) but are still the 10.x way to allow those precisions. Warnings are errors for our code,
// so the deprecation is silenced only here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// 0: unknown name, 1: mapped, -1: known but this header/library lacks it (error set).
int precisionFlag(std::string const& name, int32_t libVersion, nvinfer1::BuilderFlag& flag, std::string& error,
                  std::vector<std::string>& warnings) {
  using F = nvinfer1::BuilderFlag;
  auto pluginOnly = [&](char const* what) {
    warnings.push_back(std::string("precision \"") + name + "\" only lets plugins with " + what +
                       " inputs/outputs be used; it does not quantize the network" +
                       (libHas(libVersion, kSinceDeprecatedInt4Fp4)
                            ? " (deprecated since TensorRT 10.12; quantize the model instead, e.g. with NVIDIA Model Optimizer)"
                            : ""));
  };
  (void)pluginOnly;  // unused with headers that have neither kINT4 nor kFP4
  if (name == "fp16") flag = F::kFP16;
  else if (name == "bf16") flag = F::kBF16;
  else if (name == "int8") flag = F::kINT8;
  else if (name == "fp8") flag = F::kFP8;
  else if (name == "int4") {
#if TBS_TRT_HEADERS_AT_LEAST(10, 1)
    if (!needs("precision \"int4\"", kSinceInt4Flag, libVersion, error)) return -1;
    flag = F::kINT4;
    pluginOnly("INT4");
#else
    headersLack("precision \"int4\"", kSinceInt4Flag, error);
    return -1;
#endif
  } else if (name == "fp4") {
#if TBS_TRT_HEADERS_AT_LEAST(10, 8)
    if (!needs("precision \"fp4\"", kSinceFp4Flag, libVersion, error)) return -1;
    flag = F::kFP4;
    pluginOnly("FP4");
#else
    headersLack("precision \"fp4\"", kSinceFp4Flag, error);
    return -1;
#endif
  } else {
    return 0;
  }
  return 1;
}
#pragma GCC diagnostic pop
#endif

[[maybe_unused]] std::string deprecatedPrecisionWarning(std::string const& name) {
  return "precision \"" + name +
         "\" is a weakly typed precision flag, deprecated since TensorRT 10.12 and removed in 11: "
         "cast or quantize the model offline (e.g. with NVIDIA Model Optimizer) and build it strongly typed";
}

bool isPrecisionName(std::string const& name) {
  return name == "fp16" || name == "bf16" || name == "int8" || name == "fp8" || name == "int4" || name == "fp4";
}

bool planPrecision(BuildRequest const& request, int32_t libVersion, ConfigPlan& plan, std::string& error) {
  for (auto const& name : request.precision) {
    if (!isPrecisionName(name)) {
      error = "unknown precision \"" + name + "\" (expected fp16, bf16, int8, fp8, int4 or fp4)";
      return false;
    }
  }
#if NV_TENSORRT_MAJOR >= 11
  (void)libVersion;
  (void)plan;
  if (!request.precision.empty()) {
    error = "precision \"" + request.precision.front() + "\" is not an option in TensorRT " + std::to_string(NV_TENSORRT_MAJOR) +
            ": networks are strongly typed and take their types from the model. Cast or quantize the model "
            "offline (e.g. with NVIDIA Model Optimizer) and build it as it is";
    return false;
  }
  return true;
#else
  std::set<std::string> seen;
  for (auto const& name : request.precision) {
    if (request.stronglyTyped) {
      // TensorRT rejects precision flags on strongly typed networks: types come from the model.
      error = "precision \"" + name +
              "\" cannot be combined with a strongly typed network (types come from the model); "
              "turn off strong typing or remove the precision flags";
      return false;
    }
    nvinfer1::BuilderFlag flag{};
    if (precisionFlag(name, libVersion, flag, error, plan.warnings) != 1) return false;
    if (!seen.insert(name).second) continue;
    plan.setFlags.push_back(flag);
    plan.int8 = plan.int8 || name == "int8";
    // Every weakly typed precision flag is deprecated since 10.12 (and removed in 11), not only
    // int4/fp4 (whose own warning above says so).
    if (libHas(libVersion, kSinceDeprecatedInt4Fp4) && name != "int4" && name != "fp4") {
      plan.warnings.push_back(deprecatedPrecisionWarning(name));
    }
  }
  return true;
#endif
}

bool poolLimit(char const* option, int64_t bytes, nvinfer1::MemoryPoolType pool, ConfigPlan& plan, std::string& error) {
  if (bytes == -1) return true;
  if (bytes < 0) {
    error = std::string(option) + " must be a byte count >= 0 (or unset), got " + std::to_string(bytes);
    return false;
  }
  plan.poolLimits.emplace_back(pool, static_cast<std::size_t>(bytes));
  return true;
}

std::string joinNames(std::vector<InputDesc> const& inputs) {
  std::string out;
  for (auto const& in : inputs) out += (out.empty() ? "" : ", ") + in.name;
  return out.empty() ? "(none)" : out;
}

bool toDims(std::vector<int64_t> const& v, nvinfer1::Dims& d) {
  if (v.size() > static_cast<std::size_t>(nvinfer1::Dims::MAX_DIMS)) return false;
  d = nvinfer1::Dims{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) d.d[i] = v[i];
  return true;
}

bool planHardwareCompatibility(std::string const& hc, int32_t libVersion, ConfigPlan& plan, std::string& error) {
  if (hc.empty()) return true;
  plan.setHardwareCompatibility = true;
  using H = nvinfer1::HardwareCompatibilityLevel;
  if (hc == "none") plan.hardwareCompatibility = H::kNONE;
  else if (hc == "ampere_plus") plan.hardwareCompatibility = H::kAMPERE_PLUS;
  else if (hc == "same_compute_capability") {
#if TBS_TRT_HEADERS_AT_LEAST(10, 9)
    if (!needs("hardware compatibility \"same_compute_capability\"", kSinceSameComputeCapability, libVersion, error)) {
      return false;
    }
    plan.hardwareCompatibility = H::kSAME_COMPUTE_CAPABILITY;
#else
    (void)libVersion;
    return headersLack("hardware compatibility \"same_compute_capability\"", kSinceSameComputeCapability, error);
#endif
  } else {
    error = "unknown hardware compatibility \"" + hc + "\" (expected none, ampere_plus or same_compute_capability)";
    return false;
  }
  return true;
}

}  // namespace

bool planBuilderConfig(BuildRequest const& request, int32_t libVersion, ConfigPlan& plan, std::string& error) {
  plan = ConfigPlan{};
  using F = nvinfer1::BuilderFlag;
  if (decodeTrtVersion(libVersion).major != NV_TENSORRT_MAJOR) {
    error = "the TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " adapter cannot drive " + libText(libVersion);
    return false;
  }
#if NV_TENSORRT_MAJOR >= 11
  // Every 11.x network is strongly typed. kSTRONGLY_TYPED is 0 and ignored there, and bit 1 now
  // means kPREFER_JIT_PYTHON_PLUGINS: never pass the 10.x bit.
  plan.stronglyTyped = true;
#else
  // Explicit batch is implicit in 10.x (kEXPLICIT_BATCH is deprecated and ignored).
  if (request.stronglyTyped) {
    plan.stronglyTyped = true;
    plan.networkFlags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
  }
#endif
  if (!planPrecision(request, libVersion, plan, error)) return false;

  if (request.tf32 == 1) plan.setFlags.push_back(F::kTF32);
  else if (request.tf32 == 0) plan.clearFlags.push_back(F::kTF32);
  else if (request.tf32 != -1) {
    error = "tf32 must be -1 (default), 0 (off) or 1 (on), got " + std::to_string(request.tf32);
    return false;
  }

  if (request.optLevel < -1 || request.optLevel > 5) {
    error = "builder optimization level must be 0..5, got " + std::to_string(request.optLevel);
    return false;
  }
  plan.optLevel = request.optLevel;

  if (!poolLimit("workspace", request.workspaceBytes, nvinfer1::MemoryPoolType::kWORKSPACE, plan, error) ||
      !poolLimit("tactic DRAM", request.tacticDramBytes, nvinfer1::MemoryPoolType::kTACTIC_DRAM, plan, error) ||
      !poolLimit("tactic shared memory", request.tacticSharedMemoryBytes, nvinfer1::MemoryPoolType::kTACTIC_SHARED_MEMORY, plan, error)) {
    return false;
  }

  std::string const& pv = request.profilingVerbosity;
  if (!pv.empty()) {
    plan.setProfilingVerbosity = true;
    if (pv == "layer_names_only") plan.profilingVerbosity = nvinfer1::ProfilingVerbosity::kLAYER_NAMES_ONLY;
    else if (pv == "none") plan.profilingVerbosity = nvinfer1::ProfilingVerbosity::kNONE;
    else if (pv == "detailed") plan.profilingVerbosity = nvinfer1::ProfilingVerbosity::kDETAILED;
    else {
      error = "unknown profiling verbosity \"" + pv + "\" (expected layer_names_only, none or detailed)";
      return false;
    }
  }

  if (!planHardwareCompatibility(request.hardwareCompatibility, libVersion, plan, error)) return false;

  // Version compatibility (trtexec --versionCompatible / --excludeLeanRuntime): every supported
  // TensorRT (10.3 and later, headers and libraries) has both flags, so no version gate. As
  // trtexec (sampleOptions/sampleEngines): kEXCLUDE_LEAN_RUNTIME is set whenever it is asked for,
  // with or without kVERSION_COMPATIBLE. TensorRT ignores it without version compatibility, so
  // that case carries a warning (nobody should believe a lean runtime was left out).
  if (request.versionCompatible) plan.setFlags.push_back(F::kVERSION_COMPATIBLE);
  if (request.excludeLeanRuntime) {
    plan.setFlags.push_back(F::kEXCLUDE_LEAN_RUNTIME);
    if (!request.versionCompatible) {
      plan.warnings.push_back(
          "excludeLeanRuntime without versionCompatible: set as trtexec sets it, but TensorRT ignores it for an engine that is "
          "not version-compatible (such an engine embeds no lean runtime)");
    }
  }

  if (request.maxAuxStreams < -1) {
    error = "max aux streams must be >= 0 (or unset), got " + std::to_string(request.maxAuxStreams);
    return false;
  }
  plan.maxAuxStreams = request.maxAuxStreams;

  if (!request.buildRoute.empty()) {
#if TBS_TRT_HEADERS_AT_LEAST(11, 1)
    if (!needs("buildRoute", kSinceBuildRoutes, libVersion, error)) return false;
    plan.buildRoute = request.buildRoute;
#else
    if (!libHas(libVersion, kSinceBuildRoutes)) return needs("buildRoute", kSinceBuildRoutes, libVersion, error);
    return headersLack("buildRoute", kSinceBuildRoutes, error);
#endif
  }

  if (request.inferCacheMisses) {
    // The "Autotuning op" lines appear only with the editable timing cache, detailed profiling
    // verbosity and a verbose logger; without all three a count would be a wrong zero.
    if (!pv.empty() && pv != "detailed") {
      error = "inferCacheMisses needs detailed profiling verbosity, but profilingVerbosity is \"" + pv + "\"";
      return false;
    }
#if TBS_TRT_HEADERS_AT_LEAST(10, 8)
    if (!needs("inferCacheMisses (editable timing cache)", kSinceEditableTimingCache, libVersion, error)) return false;
    plan.setFlags.push_back(F::kEDITABLE_TIMING_CACHE);
#else
    return headersLack("inferCacheMisses (editable timing cache)", kSinceEditableTimingCache, error);
#endif
    plan.setProfilingVerbosity = true;
    plan.profilingVerbosity = nvinfer1::ProfilingVerbosity::kDETAILED;
    plan.inferCacheMisses = true;
  }
  if (request.errorOnCacheMiss) {
    // A pinned build: the same cache and inputs must select the same tactics, so any tactic the
    // cache lacks fails the build (TensorRT's own flag, as trtexec --errorOnTimingCacheMiss).
    if (request.timingCachePath.empty()) {
      error = "a pinned build (pinnedCache) needs its timing cache file";
      return false;
    }
    plan.setFlags.push_back(F::kERROR_ON_TIMING_CACHE_MISS);
    plan.pinnedCache = true;
  }
  plan.forwardVerbose = request.verboseLog || plan.inferCacheMisses;
  return true;
}

std::string formatDims(std::vector<int64_t> const& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

namespace {

bool knownInput(std::vector<InputDesc> const& inputs, std::string const& name) {
  for (auto const& in : inputs) {
    if (in.name == name) return true;
  }
  return false;
}

// min <= opt <= max per element, and equal lengths; `what` is "shape" or "values".
bool checkOrdered(std::string const& input, char const* what, std::vector<int64_t> const& mn, std::vector<int64_t> const& op,
                  std::vector<int64_t> const& mx, std::string& error) {
  if (mn.size() != op.size() || op.size() != mx.size()) {
    error = "input \"" + input + "\": min/opt/max " + what + " have different lengths: " + formatDims(mn) + " / " + formatDims(op) + " / " +
            formatDims(mx);
    return false;
  }
  for (std::size_t i = 0; i < mn.size(); ++i) {
    if (!(mn[i] <= op[i] && op[i] <= mx[i])) {
      error = "input \"" + input + "\": " + (std::string(what) == "values" ? "value " : "dimension ") + std::to_string(i) +
              " needs min <= opt <= max, got " + formatDims(mn) + " / " + formatDims(op) + " / " + formatDims(mx);
      return false;
    }
  }
  return true;
}

bool planDims(InputDesc const& in, ShapeRange const& r, ProfileEntry& e, std::string& error) {
  std::vector<int64_t> const* sel[3] = {&r.min, &r.opt, &r.max};
  char const* selName[3] = {"min", "opt", "max"};
  for (int s = 0; s < 3; ++s) {
    auto const& v = *sel[s];
    if (v.size() != in.dims.size()) {
      error = "input \"" + in.name + "\": " + selName[s] + " shape " + formatDims(v) + " has rank " + std::to_string(v.size()) +
              ", the model's input " + formatDims(in.dims) + " has rank " + std::to_string(in.dims.size());
      return false;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] < 0) {
        error = "input \"" + in.name + "\": " + selName[s] + " shape " + formatDims(v) + " has a negative dimension";
        return false;
      }
      if (in.dims[i] >= 0 && v[i] != in.dims[i]) {
        error = "input \"" + in.name + "\": " + selName[s] + " shape " + formatDims(v) + " changes fixed dimension " + std::to_string(i) +
                " of " + formatDims(in.dims);
        return false;
      }
    }
  }
  if (!checkOrdered(in.name, "shape", r.min, r.opt, r.max, error)) return false;
  if (!toDims(r.min, e.min) || !toDims(r.opt, e.opt) || !toDims(r.max, e.max)) {
    error = "input \"" + in.name + "\" has more than " + std::to_string(nvinfer1::Dims::MAX_DIMS) + " dimensions";
    return false;
  }
  return true;
}

// Elements of a static shape tensor (a scalar has one), or -1 when its dimensions are dynamic.
int64_t staticElementCount(std::vector<int64_t> const& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

bool planValues(InputDesc const& in, ShapeValueRange const& v, ProfileEntry& e, std::string& error) {
  if (!checkOrdered(in.name, "values", v.min, v.opt, v.max, error)) return false;
  if (v.opt.empty()) {
    error = "input \"" + in.name + "\": shapeValues need at least one value per min/opt/max";
    return false;
  }
  int64_t n = staticElementCount(in.dims);
  if (n >= 0 && static_cast<int64_t>(v.opt.size()) != n) {
    error = "input \"" + in.name + "\" is a shape tensor of " + std::to_string(n) + " value" + (n == 1 ? "" : "s") + " (dims " +
            formatDims(in.dims) + "), but shapeValues give " + std::to_string(v.opt.size());
    return false;
  }
  e.setValues = true;
  e.minValues = v.min;
  e.optValues = v.opt;
  e.maxValues = v.max;
  return true;
}

}  // namespace

bool planOptimizationProfile(std::vector<InputDesc> const& inputs, std::map<std::string, ShapeRange> const& shapes,
                             std::map<std::string, ShapeValueRange> const& shapeValues, std::vector<ProfileEntry>& profile,
                             std::string& error) {
  profile.clear();
  for (auto const& [name, range] : shapes) {
    (void)range;
    if (!knownInput(inputs, name)) {
      error = "shapes were given for \"" + name + "\", which is not an input of the model (inputs: " + joinNames(inputs) + ")";
      return false;
    }
  }
  for (auto const& [name, range] : shapeValues) {
    (void)range;
    if (!knownInput(inputs, name)) {
      error = "shapeValues were given for \"" + name + "\", which is not an input of the model (inputs: " + joinNames(inputs) + ")";
      return false;
    }
  }
  for (auto const& in : inputs) {
    bool dynamic = staticElementCount(in.dims) < 0;
    auto sit = shapes.find(in.name);
    auto vit = shapeValues.find(in.name);
    if (vit != shapeValues.end() && !in.isShapeTensor) {
      error = "shapeValues were given for \"" + in.name +
              "\", but TensorRT does not treat it as a shape tensor (its values do not shape the network); "
              "give its dimensions in shapes instead";
      return false;
    }
    if (in.isShapeTensor && vit == shapeValues.end()) {
      error = "input \"" + in.name +
              "\" is a shape tensor: give the min/opt/max values it takes in shapeValues "
              "(trtexec: --minShapes/--optShapes/--maxShapes " +
              in.name + ":v1,v2,...)";
      return false;
    }
    if (sit == shapes.end() && dynamic) {
      error = "input \"" + in.name + "\" has dynamic dimensions " + formatDims(in.dims) + ": give its min/opt/max shapes";
      return false;
    }
    ProfileEntry e;
    e.input = in.name;
    if (sit != shapes.end()) {
      if (!planDims(in, sit->second, e, error)) return false;
      e.setDims = dynamic;  // a static input's shapes are only checked, nothing to set
    }
    if (vit != shapeValues.end() && !planValues(in, vit->second, e, error)) return false;
    if (e.setDims || e.setValues) profile.push_back(std::move(e));
  }
  return true;
}

char const* parserErrorCodeName(nvonnxparser::ErrorCode code) noexcept {
  using E = nvonnxparser::ErrorCode;
  switch (code) {
    case E::kSUCCESS:
      return "SUCCESS";
    case E::kINTERNAL_ERROR:
      return "INTERNAL_ERROR";
    case E::kMEM_ALLOC_FAILED:
      return "MEM_ALLOC_FAILED";
    case E::kMODEL_DESERIALIZE_FAILED:
      return "MODEL_DESERIALIZE_FAILED";
    case E::kINVALID_VALUE:
      return "INVALID_VALUE";
    case E::kINVALID_GRAPH:
      return "INVALID_GRAPH";
    case E::kINVALID_NODE:
      return "INVALID_NODE";
    case E::kUNSUPPORTED_GRAPH:
      return "UNSUPPORTED_GRAPH";
    case E::kUNSUPPORTED_NODE:
      return "UNSUPPORTED_NODE";
    case E::kUNSUPPORTED_NODE_ATTR:
      return "UNSUPPORTED_NODE_ATTR";
    case E::kUNSUPPORTED_NODE_INPUT:
      return "UNSUPPORTED_NODE_INPUT";
    case E::kUNSUPPORTED_NODE_DATATYPE:
      return "UNSUPPORTED_NODE_DATATYPE";
    case E::kUNSUPPORTED_NODE_DYNAMIC:
      return "UNSUPPORTED_NODE_DYNAMIC";
    case E::kUNSUPPORTED_NODE_SHAPE:
      return "UNSUPPORTED_NODE_SHAPE";
    case E::kREFIT_FAILED:
      return "REFIT_FAILED";
  }
  return "UNKNOWN_ERROR";
}

std::string formatParserError(nvonnxparser::ErrorCode code, char const* desc, int node, char const* nodeName, char const* nodeOperator) {
  std::string out = "ONNX parse error";
  if (node >= 0) {
    out += " at node " + std::to_string(node);
    if (nodeName != nullptr && *nodeName != '\0') out += std::string(" \"") + nodeName + "\"";
    if (nodeOperator != nullptr && *nodeOperator != '\0') out += std::string(" (") + nodeOperator + ")";
  }
  out += std::string(": ") + parserErrorCodeName(code) + " (" + std::to_string(static_cast<int>(code)) + ")";
  if (desc != nullptr && *desc != '\0') out += std::string(": ") + desc;
  return out;
}

}  // namespace tbs::trt
