#include "trt_options.h"

#include <set>

namespace tbs::trt {
namespace {

// The weakly-typed precision flags (kFP16, kBF16, kINT8, kFP8, kINT4, kFP4) are marked
// [[deprecated]] in the 10.16 headers (removed in 11.x) but are still the 10.x way to allow
// those precisions. Warnings are errors for our code, so the deprecation is silenced only here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
bool precisionFlag(std::string const& name, nvinfer1::BuilderFlag& flag) {
  using F = nvinfer1::BuilderFlag;
  if (name == "fp16") flag = F::kFP16;
  else if (name == "bf16") flag = F::kBF16;
  else if (name == "int8") flag = F::kINT8;
  else if (name == "fp8") flag = F::kFP8;
  else if (name == "int4") flag = F::kINT4;
  else if (name == "fp4") flag = F::kFP4;
  else return false;
  return true;
}
#pragma GCC diagnostic pop

bool poolLimit(char const* option, int64_t bytes, nvinfer1::MemoryPoolType pool, ConfigPlan& plan,
               std::string& error) {
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

}  // namespace

bool planBuilderConfig(BuildRequest const& request, ConfigPlan& plan, std::string& error) {
  plan = ConfigPlan{};
  using F = nvinfer1::BuilderFlag;
  // Explicit batch is implicit in 10.x (kEXPLICIT_BATCH is deprecated and ignored).
  if (request.stronglyTyped) {
    plan.stronglyTyped = true;
    plan.networkFlags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
  }

  std::set<std::string> seen;
  for (auto const& name : request.precision) {
    nvinfer1::BuilderFlag flag{};
    if (!precisionFlag(name, flag)) {
      error = "unknown precision \"" + name + "\" (expected fp16, bf16, int8, fp8, int4 or fp4)";
      return false;
    }
    if (request.stronglyTyped) {
      // TensorRT rejects precision flags on strongly typed networks: types come from the model.
      error = "precision \"" + name +
              "\" cannot be combined with a strongly typed network (types come from the model); "
              "turn off strong typing or remove the precision flags";
      return false;
    }
    if (seen.insert(name).second) plan.setFlags.push_back(flag);
  }
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
      !poolLimit("tactic shared memory", request.tacticSharedMemoryBytes,
                 nvinfer1::MemoryPoolType::kTACTIC_SHARED_MEMORY, plan, error)) {
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

  std::string const& hc = request.hardwareCompatibility;
  if (!hc.empty()) {
    plan.setHardwareCompatibility = true;
    if (hc == "none") plan.hardwareCompatibility = nvinfer1::HardwareCompatibilityLevel::kNONE;
    else if (hc == "ampere_plus") plan.hardwareCompatibility = nvinfer1::HardwareCompatibilityLevel::kAMPERE_PLUS;
    else if (hc == "same_compute_capability")
      plan.hardwareCompatibility = nvinfer1::HardwareCompatibilityLevel::kSAME_COMPUTE_CAPABILITY;
    else {
      error = "unknown hardware compatibility \"" + hc +
              "\" (expected none, ampere_plus or same_compute_capability)";
      return false;
    }
  }

  if (request.maxAuxStreams < -1) {
    error = "max aux streams must be >= 0 (or unset), got " + std::to_string(request.maxAuxStreams);
    return false;
  }
  plan.maxAuxStreams = request.maxAuxStreams;
  return true;
}

std::string formatDims(std::vector<int64_t> const& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

bool planOptimizationProfile(std::vector<InputDesc> const& inputs,
                             std::map<std::string, ShapeRange> const& shapes,
                             std::vector<ProfileEntry>& profile, std::string& error) {
  profile.clear();
  for (auto const& [name, range] : shapes) {
    bool known = false;
    for (auto const& in : inputs) known = known || in.name == name;
    if (!known) {
      error = "shapes were given for \"" + name + "\", which is not an input of the model (inputs: " +
              joinNames(inputs) + ")";
      return false;
    }
  }
  for (auto const& in : inputs) {
    bool dynamic = false;
    for (int64_t d : in.dims) dynamic = dynamic || d < 0;
    auto it = shapes.find(in.name);
    if (it == shapes.end()) {
      if (dynamic) {
        error = "input \"" + in.name + "\" has dynamic dimensions " + formatDims(in.dims) +
                ": give its min/opt/max shapes";
        return false;
      }
      continue;
    }
    if (in.isShapeTensor && dynamic) {
      // Shape-tensor inputs need setShapeValuesV2 (values, not dimensions); not offered yet.
      error = "input \"" + in.name + "\" is a shape tensor; shape-tensor value ranges are not supported";
      return false;
    }
    ShapeRange const& r = it->second;
    std::vector<int64_t> const* sel[3] = {&r.min, &r.opt, &r.max};
    char const* selName[3] = {"min", "opt", "max"};
    for (int s = 0; s < 3; ++s) {
      auto const& v = *sel[s];
      if (v.size() != in.dims.size()) {
        error = "input \"" + in.name + "\": " + selName[s] + " shape " + formatDims(v) + " has rank " +
                std::to_string(v.size()) + ", the model's input " + formatDims(in.dims) + " has rank " +
                std::to_string(in.dims.size());
        return false;
      }
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] < 0) {
          error = "input \"" + in.name + "\": " + selName[s] + " shape " + formatDims(v) +
                  " has a negative dimension";
          return false;
        }
        if (in.dims[i] >= 0 && v[i] != in.dims[i]) {
          error = "input \"" + in.name + "\": " + selName[s] + " shape " + formatDims(v) +
                  " changes fixed dimension " + std::to_string(i) + " of " + formatDims(in.dims);
          return false;
        }
      }
    }
    for (std::size_t i = 0; i < in.dims.size(); ++i) {
      if (!(r.min[i] <= r.opt[i] && r.opt[i] <= r.max[i])) {
        error = "input \"" + in.name + "\": dimension " + std::to_string(i) + " needs min <= opt <= max, got " +
                formatDims(r.min) + " / " + formatDims(r.opt) + " / " + formatDims(r.max);
        return false;
      }
    }
    if (!dynamic) continue;  // a static input's shapes were only checked, nothing to set
    ProfileEntry e;
    e.input = in.name;
    if (!toDims(r.min, e.min) || !toDims(r.opt, e.opt) || !toDims(r.max, e.max)) {
      error = "input \"" + in.name + "\" has more than " + std::to_string(nvinfer1::Dims::MAX_DIMS) +
              " dimensions";
      return false;
    }
    profile.push_back(e);
  }
  return true;
}

char const* parserErrorCodeName(nvonnxparser::ErrorCode code) noexcept {
  using E = nvonnxparser::ErrorCode;
  switch (code) {
    case E::kSUCCESS: return "SUCCESS";
    case E::kINTERNAL_ERROR: return "INTERNAL_ERROR";
    case E::kMEM_ALLOC_FAILED: return "MEM_ALLOC_FAILED";
    case E::kMODEL_DESERIALIZE_FAILED: return "MODEL_DESERIALIZE_FAILED";
    case E::kINVALID_VALUE: return "INVALID_VALUE";
    case E::kINVALID_GRAPH: return "INVALID_GRAPH";
    case E::kINVALID_NODE: return "INVALID_NODE";
    case E::kUNSUPPORTED_GRAPH: return "UNSUPPORTED_GRAPH";
    case E::kUNSUPPORTED_NODE: return "UNSUPPORTED_NODE";
    case E::kUNSUPPORTED_NODE_ATTR: return "UNSUPPORTED_NODE_ATTR";
    case E::kUNSUPPORTED_NODE_INPUT: return "UNSUPPORTED_NODE_INPUT";
    case E::kUNSUPPORTED_NODE_DATATYPE: return "UNSUPPORTED_NODE_DATATYPE";
    case E::kUNSUPPORTED_NODE_DYNAMIC: return "UNSUPPORTED_NODE_DYNAMIC";
    case E::kUNSUPPORTED_NODE_SHAPE: return "UNSUPPORTED_NODE_SHAPE";
    case E::kREFIT_FAILED: return "REFIT_FAILED";
  }
  return "UNKNOWN_ERROR";
}

std::string formatParserError(nvonnxparser::ErrorCode code, char const* desc, int node,
                              char const* nodeName, char const* nodeOperator) {
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
