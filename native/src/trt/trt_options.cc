#include "trt_options.h"

#include <cctype>
#include <map>
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

std::vector<std::string> splitOn(std::string const& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// trtexec's type names (its stringToValue<DataType>).
bool dataTypeOf(std::string const& name, nvinfer1::DataType& t) {
  using D = nvinfer1::DataType;
  static std::map<std::string, D> const kTypes{{"fp32", D::kFLOAT},  {"fp16", D::kHALF},   {"bf16", D::kBF16},   {"int8", D::kINT8},
                                               {"fp8", D::kFP8},     {"int32", D::kINT32}, {"int64", D::kINT64}, {"bool", D::kBOOL},
                                               {"uint8", D::kUINT8}, {"int4", D::kINT4}};
  auto it = kTypes.find(name);
  if (it == kTypes.end()) return false;
  t = it->second;
  return true;
}

bool tensorFormatOf(std::string const& name, nvinfer1::TensorFormat& f) {
  using T = nvinfer1::TensorFormat;
  static std::map<std::string, T> const kFormats{{"chw", T::kLINEAR},
                                                 {"chw2", T::kCHW2},
                                                 {"chw4", T::kCHW4},
                                                 {"hwc8", T::kHWC8},
                                                 {"chw16", T::kCHW16},
                                                 {"chw32", T::kCHW32},
                                                 {"dhwc8", T::kDHWC8},
                                                 {"cdhw32", T::kCDHW32},
                                                 {"hwc", T::kHWC},
                                                 {"dhwc", T::kDHWC},
                                                 {"dla_linear", T::kDLA_LINEAR},
                                                 {"hwc16", T::kHWC16},
                                                 {"dla_hwc4", T::kDLA_HWC4}};
  auto it = kFormats.find(name);
  if (it == kFormats.end()) return false;
  f = it->second;
  return true;
}

// "-CUBLAS,+CUDNN" → bits to add and remove; the sources the headers have (11.x dropped cuBLAS/cuDNN).
bool planTacticSources(std::string const& spec, ConfigPlan& plan, std::string& error) {
  using S = nvinfer1::TacticSource;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // cuBLAS/cuDNN sources: deprecated in 10.x, as trtexec still takes them
  std::map<std::string, S> const sources{
#if NV_TENSORRT_MAJOR < 11
      {"CUBLAS", S::kCUBLAS},
      {"CUBLAS_LT", S::kCUBLAS_LT},
      {"CUBLASLT", S::kCUBLAS_LT},
      {"CUDNN", S::kCUDNN},
#endif
      {"EDGE_MASK_CONVOLUTIONS", S::kEDGE_MASK_CONVOLUTIONS},
      {"JIT_CONVOLUTIONS", S::kJIT_CONVOLUTIONS}};
#pragma GCC diagnostic pop
  for (auto const& entry : splitOn(spec, ',')) {
    if (entry.empty() || (entry[0] != '+' && entry[0] != '-')) {
      error = "tacticSources: \"" + entry + "\" must start with + or - (enable or disable)";
      return false;
    }
    std::string name = entry.substr(1);
    for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto it = sources.find(name);
    if (it == sources.end()) {
      error =
          "tacticSources: \"" + entry.substr(1) + "\" is not a tactic source of TensorRT " + std::to_string(NV_TENSORRT_MAJOR) +
          (NV_TENSORRT_MAJOR >= 11 ? " (11.x has EDGE_MASK_CONVOLUTIONS and JIT_CONVOLUTIONS; cuBLAS and cuDNN tactics were removed)" : "");
      return false;
    }
    uint32_t bit = 1U << static_cast<uint32_t>(it->second);
    (entry[0] == '+' ? plan.enableTactics : plan.disableTactics) |= bit;
    if (plan.enableTactics & plan.disableTactics) {
      error = "tacticSources: " + name + " is both enabled and disabled";
      return false;
    }
  }
  plan.setTacticSources = true;
  return true;
}

// "+aliasedPluginIO1003" → preview features the headers have, by trtexec's names.
bool planPreview(std::string const& spec, ConfigPlan& plan, std::string& error) {
  using P = nvinfer1::PreviewFeature;
  for (auto const& entry : splitOn(spec, ',')) {
    if (entry.empty() || (entry[0] != '+' && entry[0] != '-')) {
      error = "previewFeatures: \"" + entry + "\" must start with + or - (enable or disable)";
      return false;
    }
    std::string const name = entry.substr(1);
    bool const on = entry[0] == '+';
    if (name == "profileSharing0806") {
      plan.warnings.push_back("preview feature profileSharing0806 is on by default since TensorRT 10.0; the setting has no effect");
      continue;
    }
    if (name == "aliasedPluginIO1003") {
      plan.preview.emplace_back(P::kALIASED_PLUGIN_IO_10_03, on);
#if TBS_TRT_HEADERS_AT_LEAST(10, 10)
    } else if (name == "runtimeActivationResize") {
      plan.preview.emplace_back(P::kRUNTIME_ACTIVATION_RESIZE_10_10, on);
#endif
#if NV_TENSORRT_MAJOR == 10 && TBS_TRT_HEADERS_AT_LEAST(10, 16)
    } else if (name == "multiDeviceRuntime") {
      plan.preview.emplace_back(P::kMULTIDEVICE_RUNTIME_10_16, on);
#endif
    } else {
      error = "previewFeatures: \"" + name + "\" is not a preview feature of the TensorRT " + std::to_string(NV_TENSORRT_MAJOR) +
              ".x headers this adapter was built with";
      return false;
    }
  }
  return true;
}

}  // namespace

bool parseIOFormats(char const* option, std::string const& spec, std::vector<IOFormatSpec>& out, std::string& error) {
  out.clear();
  for (auto const& entry : splitOn(spec, ',')) {
    std::size_t colon = entry.find(':');
    IOFormatSpec f;
    if (colon == std::string::npos || !dataTypeOf(entry.substr(0, colon), f.type)) {
      error = std::string(option) + ": \"" + entry + "\" is not <type>:<format>[+<format>] with a type trtexec knows (e.g. fp16:chw)";
      return false;
    }
    for (auto const& name : splitOn(entry.substr(colon + 1), '+')) {
      nvinfer1::TensorFormat fmt{};
      if (!tensorFormatOf(name, fmt)) {
        error = std::string(option) + ": \"" + name +
                "\" is not a tensor format (chw, chw2, chw4, hwc8, chw16, chw32, dhwc8, cdhw32, hwc, dhwc, dla_linear, hwc16, dla_hwc4)";
        return false;
      }
      f.formats |= 1U << static_cast<uint32_t>(fmt);
    }
    out.push_back(f);
  }
  return true;
}

bool parseLayerTypes(char const* option, std::string const& spec, bool severalTypes, std::vector<LayerTypeSpec>& out, std::string& error) {
  out.clear();
  for (auto const& entry : splitOn(spec, ',')) {
    std::size_t colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      error = std::string(option) + ": \"" + entry + "\" is not <layer name>:<type> (* for every layer)";
      return false;
    }
    LayerTypeSpec l{entry.substr(0, colon), {}};
    auto const types = severalTypes ? splitOn(entry.substr(colon + 1), '+') : std::vector<std::string>{entry.substr(colon + 1)};
    for (auto const& name : types) {
      nvinfer1::DataType t{};
      if (!dataTypeOf(name, t)) {
        error = std::string(option) + ": \"" + name + "\" is not a type (fp32, fp16, bf16, int8, fp8, int32, int64, bool, uint8, int4)";
        return false;
      }
      l.types.push_back(t);
    }
    out.push_back(l);
  }
  return true;
}

namespace {

// --precisionConstraints and the layer types (10.x; 11.x networks are strongly typed).
bool planLayerConstraints(BuildRequest const& request, ConfigPlan& plan, std::string& error) {
  bool const any = !request.layerPrecisions.empty() || !request.layerOutputTypes.empty() ||
                   (!request.precisionConstraints.empty() && request.precisionConstraints != "none");
  if (!any) return true;
#if NV_TENSORRT_MAJOR >= 11
  error =
      "precisionConstraints/layerPrecisions/layerOutputTypes: TensorRT 11 has no per-layer precision constraints: networks are "
      "strongly typed, so each layer runs in the precision its tensors' types give it (cast or quantize the model offline)";
  (void)plan;
  return false;
#else
  if (plan.stronglyTyped) {
    error =
        "stronglyTyped cannot be combined with precisionConstraints/layerPrecisions/layerOutputTypes: a strongly typed network "
        "takes each layer's precision from the model";
    return false;
  }
  if (!request.layerPrecisions.empty() &&
      !parseLayerTypes("layerPrecisions", request.layerPrecisions, false, plan.layerPrecisions, error)) {
    return false;
  }
  if (!request.layerOutputTypes.empty() &&
      !parseLayerTypes("layerOutputTypes", request.layerOutputTypes, true, plan.layerOutputTypes, error)) {
    return false;
  }
  std::string const& c = request.precisionConstraints;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // kOBEY/kPREFER_PRECISION_CONSTRAINTS: deprecated in 10.12+
  nvinfer1::BuilderFlag const obey = nvinfer1::BuilderFlag::kOBEY_PRECISION_CONSTRAINTS;
  nvinfer1::BuilderFlag const prefer = nvinfer1::BuilderFlag::kPREFER_PRECISION_CONSTRAINTS;
#pragma GCC diagnostic pop
  if (c == "obey") plan.setFlags.push_back(obey);
  else if (c == "prefer") plan.setFlags.push_back(prefer);
  else if (c == "none" || c.empty()) {
    // As trtexec: layer types without obey/prefer are hints TensorRT may ignore.
    plan.warnings.push_back("layerPrecisions/layerOutputTypes without precisionConstraints obey or prefer: TensorRT may ignore them");
  } else {
    error = "precisionConstraints must be none, prefer or obey, got \"" + c + "\"";
    return false;
  }
  return true;
#endif
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
  // The lower bounds the request list declares (request_fields.def, its `min` column).
  if (!checkRequestMinimums(request, error)) return false;
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
  if (!request.inputIOFormats.empty() && !parseIOFormats("inputIOFormats", request.inputIOFormats, plan.inputFormats, error)) return false;
  if (!request.outputIOFormats.empty() && !parseIOFormats("outputIOFormats", request.outputIOFormats, plan.outputFormats, error))
    return false;
  if (!planLayerConstraints(request, plan, error)) return false;
  if (request.sparsity == "enable") plan.setFlags.push_back(F::kSPARSE_WEIGHTS);
  else if (!request.sparsity.empty() && request.sparsity != "disable") {
    error = "sparsity must be disable or enable, got \"" + request.sparsity + "\"";
    return false;
  }
  if (!request.tacticSources.empty() && !planTacticSources(request.tacticSources, plan, error)) return false;
  plan.avgTiming = request.avgTiming;
  if (request.compilationCache == 0) plan.setFlags.push_back(F::kDISABLE_COMPILATION_CACHE);
  if (!request.previewFeatures.empty() && !planPreview(request.previewFeatures, plan, error)) return false;
  if (request.dlaCore < -1) {
    error = "dlaCore must be a DLA core index >= 0 (or unset), got " + std::to_string(request.dlaCore);
    return false;
  }
  plan.dlaCore = request.dlaCore;
  if (request.allowGPUFallback) {
    plan.setFlags.push_back(F::kGPU_FALLBACK);
    if (request.dlaCore < 0) plan.warnings.push_back("allowGPUFallback without dlaCore: every layer runs on the GPU anyway");
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
