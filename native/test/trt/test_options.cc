// BuildRequest -> TensorRT settings, the profile planner, parser-error wording, version
// arithmetic: pure code, no TensorRT library.
#include <algorithm>

#include "check.h"
#include "trt/route_knobs.h"
#include "trt/trt_options.h"
#include "trt/trt_version.h"

using namespace tbs::trt;
using nvinfer1::BuilderFlag;
using nvinfer1::MemoryPoolType;

namespace {

bool has(std::vector<BuilderFlag> const& v, BuilderFlag f) { return std::find(v.begin(), v.end(), f) != v.end(); }

// The library is as new as the headers unless a test says otherwise.
constexpr int32_t kLib = kHeaderVersion;

std::vector<int64_t> dimsOf(nvinfer1::Dims const& d) { return std::vector<int64_t>(d.d, d.d + d.nbDims); }

}  // namespace

TEST(default_request_changes_nothing) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.networkFlags, 0U);
  CHECK(p.setFlags.empty());
  CHECK(p.clearFlags.empty());
  CHECK_EQ(p.optLevel, -1);
  CHECK(p.poolLimits.empty());
  CHECK(!p.setProfilingVerbosity);
  CHECK(!p.setHardwareCompatibility);
}

#if NV_TENSORRT_MAJOR == 10
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // 10.x precision flags, see trt_options.cc
TEST(every_precision_the_headers_have_maps_to_its_10x_flag_once) {
  tbs::BuildRequest r;
  r.precision = {"fp16", "bf16", "int8", "fp8", "fp16"};
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.setFlags.size(), size_t{4});
  for (BuilderFlag f : {BuilderFlag::kFP16, BuilderFlag::kBF16, BuilderFlag::kINT8, BuilderFlag::kFP8}) {
    CHECK(has(p.setFlags, f));
  }
  // Every weakly typed flag is deprecated from 10.12: one warning per distinct flag.
  CHECK_EQ(p.warnings.size(), size_t{libHas(kLib, kSinceDeprecatedInt4Fp4) ? 4U : 0U});
  for (auto const& w : p.warnings) CHECK_CONTAINS(w, "deprecated since TensorRT 10.12");
  CHECK(p.int8);  // int8 without Q/DQ gets placeholder ranges at build time (trt_int8.h)
  ConfigPlan old;
  CHECK(planBuilderConfig(r, 100300, old, err));
  CHECK(old.warnings.empty());
  // The enum values 10.x uses (11.x renumbered them: mapped by name, never by number).
  CHECK_EQ(static_cast<int>(BuilderFlag::kFP16), 0);
  CHECK_EQ(static_cast<int>(BuilderFlag::kINT8), 1);
  CHECK_EQ(static_cast<int>(BuilderFlag::kFP8), 15);
  CHECK_EQ(static_cast<int>(BuilderFlag::kBF16), 17);
}

TEST(int4_and_fp4_follow_headers_and_library_and_warn_they_are_plugin_only) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  r.precision = {"int4"};
#if NV_TENSORRT_MINOR >= 1
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(has(p.setFlags, BuilderFlag::kINT4));
  CHECK_EQ(p.warnings.size(), size_t{1});
  CHECK_CONTAINS(p.warnings.at(0), "plugins with INT4");
  if (NV_TENSORRT_MINOR >= 12) CHECK_CONTAINS(p.warnings.at(0), "deprecated since TensorRT 10.12");
  // A 10.0 library under newer headers has no kINT4: refused before the build.
  CHECK(!planBuilderConfig(r, 100000, p, err));
  CHECK_CONTAINS(err, "needs TensorRT 10.1 or later; the loaded library is TensorRT 10.0.0");
#else
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "needs TensorRT 10.1 or later headers");
#endif
  r.precision = {"fp4"};
#if NV_TENSORRT_MINOR >= 8
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(has(p.setFlags, BuilderFlag::kFP4));
  CHECK(!planBuilderConfig(r, 100300, p, err));
  CHECK_CONTAINS(err, "precision \"fp4\" needs TensorRT 10.8 or later; the loaded library is TensorRT 10.3.0");
#else
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "precision \"fp4\" needs TensorRT 10.8 or later headers");
#endif
}
#pragma GCC diagnostic pop
#else
TEST(tensorrt_11_refuses_every_precision_flag_and_explains) {
  for (char const* name : {"fp16", "bf16", "int8", "fp8", "int4", "fp4"}) {
    tbs::BuildRequest r;
    r.precision = {name};
    ConfigPlan p;
    std::string err;
    CHECK(!planBuilderConfig(r, kLib, p, err));
    CHECK_CONTAINS(err, std::string("\"") + name + "\"");
    CHECK_CONTAINS(err, "strongly typed");
    CHECK_CONTAINS(err, "Model Optimizer");
  }
}

TEST(tensorrt_11_implies_strong_typing_and_never_passes_the_10x_bit) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(p.stronglyTyped);
  CHECK_EQ(p.networkFlags, 0U);  // 1 << 1 is kPREFER_JIT_PYTHON_PLUGINS in 11.x
  r.stronglyTyped = true;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.networkFlags, 0U);
  // Flags that moved down by one in 11.x, mapped by name.
  CHECK_EQ(static_cast<int>(BuilderFlag::kEDITABLE_TIMING_CACHE), 26);
}
#endif

TEST(an_adapter_refuses_a_library_of_another_major) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  CHECK(!planBuilderConfig(r, NV_TENSORRT_MAJOR == 10 ? 110100 : 101601, p, err));
  CHECK_CONTAINS(err, "cannot drive");
}

TEST(build_route_needs_11_1_headers_and_library) {
  tbs::BuildRequest r;
  r.buildRoute = "-conv_use_long_w=off";
  ConfigPlan p;
  std::string err;
#if NV_TENSORRT_MAJOR > 11 || (NV_TENSORRT_MAJOR == 11 && NV_TENSORRT_MINOR >= 1)
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.buildRoute, r.buildRoute);
  CHECK(!planBuilderConfig(r, 110000, p, err));
  CHECK_CONTAINS(err, "buildRoute needs TensorRT 11.1 or later; the loaded library is TensorRT 11.0.0");
#else
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "buildRoute needs TensorRT 11.1 or later");
#endif
}

TEST(infer_cache_misses_turns_on_what_the_inference_needs) {
  tbs::BuildRequest r;
  r.inferCacheMisses = true;
  ConfigPlan p;
  std::string err;
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 8
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(has(p.setFlags, BuilderFlag::kEDITABLE_TIMING_CACHE));
  CHECK(p.setProfilingVerbosity && p.profilingVerbosity == nvinfer1::ProfilingVerbosity::kDETAILED);
  CHECK(p.inferCacheMisses);
  if (NV_TENSORRT_MAJOR == 10) {
    CHECK(!planBuilderConfig(r, 100700, p, err));
    CHECK_CONTAINS(err, "needs TensorRT 10.8 or later; the loaded library is TensorRT 10.7.0");
  }
  r.profilingVerbosity = "none";
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "detailed profiling verbosity");
#else
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "10.8 or later headers");
#endif
  r = tbs::BuildRequest{};
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(!p.inferCacheMisses);
  CHECK(!p.forwardVerbose);
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 8
  r.inferCacheMisses = true;  // counting misses needs the VERBOSE lines
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(p.forwardVerbose);
#endif
}

TEST(verbose_log_forwards_verbose_lines_and_changes_no_builder_setting) {
  tbs::BuildRequest r;
  r.verboseLog = true;
  ConfigPlan verbose;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, verbose, err));
  CHECK(verbose.forwardVerbose);
  CHECK(!verbose.inferCacheMisses);
  ConfigPlan plain;
  r.verboseLog = false;
  CHECK(planBuilderConfig(r, kLib, plain, err));
  CHECK(!plain.forwardVerbose);
  // Everything the builder is given is the same with and without the verbose log.
  CHECK(verbose.setFlags == plain.setFlags);
  CHECK(verbose.clearFlags == plain.clearFlags);
  CHECK(verbose.setProfilingVerbosity == plain.setProfilingVerbosity);
  CHECK(verbose.networkFlags == plain.networkFlags);
  CHECK(verbose.poolLimits == plain.poolLimits);
  // An explicit profiling verbosity stays legal: only inferCacheMisses insists on "detailed".
  r.verboseLog = true;
  r.profilingVerbosity = "none";
  CHECK(planBuilderConfig(r, kLib, verbose, err));
  CHECK(verbose.forwardVerbose);
}

TEST(unknown_precision_is_named) {
  tbs::BuildRequest r;
  r.precision = {"fp16", "fp12"};
  ConfigPlan p;
  std::string err;
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "\"fp12\"");
}

#if NV_TENSORRT_MAJOR == 10
TEST(strongly_typed_sets_the_network_flag_and_refuses_precision_flags) {
  tbs::BuildRequest r;
  r.stronglyTyped = true;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.networkFlags, 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED));
  CHECK_EQ(p.networkFlags, 2U);
  r.precision = {"fp16"};
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "strongly typed");
  CHECK_CONTAINS(err, "\"fp16\"");
}
#endif

TEST(tf32_on_off_and_default) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  r.tf32 = 0;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(has(p.clearFlags, BuilderFlag::kTF32) && !has(p.setFlags, BuilderFlag::kTF32));
  r.tf32 = 1;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(has(p.setFlags, BuilderFlag::kTF32) && !has(p.clearFlags, BuilderFlag::kTF32));
  r.tf32 = 2;
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "tf32");
}

TEST(optimization_level_range) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  for (int level = 0; level <= 5; ++level) {
    r.optLevel = level;
    CHECK(planBuilderConfig(r, kLib, p, err));
    CHECK_EQ(p.optLevel, level);
  }
  r.optLevel = 6;
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "0..5");
  r.optLevel = -2;
  CHECK(!planBuilderConfig(r, kLib, p, err));
}

TEST(memory_pools_map_to_their_pool_types) {
  tbs::BuildRequest r;
  r.workspaceBytes = int64_t{4} << 30;
  r.tacticDramBytes = 0;
  r.tacticSharedMemoryBytes = 48 * 1024;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.poolLimits.size(), size_t{3});
  if (p.poolLimits.size() == 3) {
    CHECK(p.poolLimits[0].first == MemoryPoolType::kWORKSPACE);
    CHECK_EQ(p.poolLimits[0].second, size_t{4} << 30);
    CHECK(p.poolLimits[1].first == MemoryPoolType::kTACTIC_DRAM);
    CHECK_EQ(p.poolLimits[1].second, size_t{0});
    CHECK(p.poolLimits[2].first == MemoryPoolType::kTACTIC_SHARED_MEMORY);
    CHECK_EQ(p.poolLimits[2].second, size_t{48 * 1024});
  }
  r.tacticDramBytes = -5;
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "tactic DRAM");
}

TEST(profiling_verbosity_and_hardware_compatibility) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  r.profilingVerbosity = "detailed";
  r.hardwareCompatibility = "ampere_plus";
  r.maxAuxStreams = 0;  // a bound of the request list: 0 passes (trt_backend.cc sets it; test_full_fake.cc)
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(p.setProfilingVerbosity && p.profilingVerbosity == nvinfer1::ProfilingVerbosity::kDETAILED);
  CHECK(p.setHardwareCompatibility && p.hardwareCompatibility == nvinfer1::HardwareCompatibilityLevel::kAMPERE_PLUS);
  r.profilingVerbosity = "none";
  r.hardwareCompatibility = "same_compute_capability";
#if NV_TENSORRT_MAJOR > 10 || NV_TENSORRT_MINOR >= 9
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(p.profilingVerbosity == nvinfer1::ProfilingVerbosity::kNONE);
  CHECK(p.hardwareCompatibility == nvinfer1::HardwareCompatibilityLevel::kSAME_COMPUTE_CAPABILITY);
  if (NV_TENSORRT_MAJOR == 10) {
    CHECK(!planBuilderConfig(r, 100800, p, err));
    CHECK_CONTAINS(err, "needs TensorRT 10.9 or later; the loaded library is TensorRT 10.8.0");
  }
#else
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "10.9 or later headers");
#endif
  r.profilingVerbosity = "layer_names_only";
  r.hardwareCompatibility = "none";
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(p.profilingVerbosity == nvinfer1::ProfilingVerbosity::kLAYER_NAMES_ONLY);
  CHECK(p.hardwareCompatibility == nvinfer1::HardwareCompatibilityLevel::kNONE);
  r.hardwareCompatibility = "hopper_plus";
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "hopper_plus");
  r.hardwareCompatibility = "";
  r.profilingVerbosity = "loud";
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "loud");
  r.profilingVerbosity = "";
  r.maxAuxStreams = -3;
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK_CONTAINS(err, "maxAuxStreams must be >= 0 (or unset), got -3");
}

TEST(static_inputs_need_no_profile) {
  std::vector<InputDesc> inputs = {{"image", {1, 3, 224, 224}, false}};
  std::vector<ProfileEntry> prof;
  std::string err;
  CHECK(planOptimizationProfile(inputs, {}, {}, prof, err));
  CHECK(prof.empty());
  // Shapes that repeat a static input's dims are accepted and need no profile entry.
  std::map<std::string, tbs::ShapeRange> same = {{"image", {{1, 3, 224, 224}, {1, 3, 224, 224}, {1, 3, 224, 224}}}};
  CHECK(planOptimizationProfile(inputs, same, {}, prof, err));
  CHECK(prof.empty());
}

TEST(dynamic_input_gets_min_opt_max) {
  std::vector<InputDesc> inputs = {{"image", {-1, 3, -1, -1}, false}, {"scale", {1}, false}};
  std::map<std::string, tbs::ShapeRange> shapes = {{"image", {{1, 3, 128, 128}, {8, 3, 224, 224}, {32, 3, 512, 512}}}};
  std::vector<ProfileEntry> prof;
  std::string err;
  CHECK(planOptimizationProfile(inputs, shapes, {}, prof, err));
  CHECK_EQ(prof.size(), size_t{1});
  if (prof.size() == 1) {
    CHECK_EQ(prof[0].input, std::string("image"));
    CHECK(dimsOf(prof[0].min) == std::vector<int64_t>({1, 3, 128, 128}));
    CHECK(dimsOf(prof[0].opt) == std::vector<int64_t>({8, 3, 224, 224}));
    CHECK(dimsOf(prof[0].max) == std::vector<int64_t>({32, 3, 512, 512}));
  }
}

TEST(dynamic_input_without_shapes_is_named) {
  std::vector<InputDesc> inputs = {{"tokens", {-1, -1}, false}};
  std::vector<ProfileEntry> prof;
  std::string err;
  CHECK(!planOptimizationProfile(inputs, {}, {}, prof, err));
  CHECK_CONTAINS(err, "\"tokens\"");
  CHECK_CONTAINS(err, "[-1,-1]");
  CHECK_CONTAINS(err, "min/opt/max");
}

TEST(bad_shapes_are_explained) {
  std::vector<InputDesc> inputs = {{"x", {-1, 3}, false}};
  std::vector<ProfileEntry> prof;
  std::string err;
  auto plan = [&](tbs::ShapeRange r) { return planOptimizationProfile(inputs, {{"x", r}}, {}, prof, err); };
  CHECK(!plan({{1, 3, 1}, {1, 3}, {1, 3}}));
  CHECK_CONTAINS(err, "rank");
  CHECK(!plan({{1, 4}, {1, 3}, {1, 3}}));
  CHECK_CONTAINS(err, "fixed dimension 1");
  CHECK(!plan({{4, 3}, {2, 3}, {8, 3}}));
  CHECK_CONTAINS(err, "min <= opt <= max");
  CHECK(!plan({{-1, 3}, {2, 3}, {8, 3}}));
  CHECK_CONTAINS(err, "negative");
  CHECK(!planOptimizationProfile(inputs, {{"y", {{1, 3}, {1, 3}, {1, 3}}}}, {}, prof, err));
  CHECK_CONTAINS(err, "\"y\"");
  CHECK_CONTAINS(err, "inputs: x");
}

TEST(shape_tensor_inputs_take_values) {
  std::vector<InputDesc> inputs = {{"image", {-1, 3, 8, 8}, false}, {"target", {2}, true}};
  std::map<std::string, tbs::ShapeRange> shapes = {{"image", {{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}}};
  std::map<std::string, tbs::ShapeValueRange> values = {{"target", {{1, -1}, {2, -1}, {4, -1}}}};
  std::vector<ProfileEntry> prof;
  std::string err;
  CHECK_MSG(planOptimizationProfile(inputs, shapes, values, prof, err), err);
  CHECK_EQ(prof.size(), size_t{2});
  if (prof.size() == 2) {
    CHECK(prof[0].setDims && !prof[0].setValues);
    CHECK(!prof[1].setDims && prof[1].setValues);
    CHECK(prof[1].minValues == std::vector<int64_t>({1, -1}));
    CHECK(prof[1].maxValues == std::vector<int64_t>({4, -1}));
  }
  // A shape tensor without values, values for an input that is not one, wrong counts, order.
  CHECK(!planOptimizationProfile(inputs, shapes, {}, prof, err));
  CHECK_CONTAINS(err, "\"target\" is a shape tensor");
  CHECK_CONTAINS(err, "shapeValues");
  std::map<std::string, tbs::ShapeValueRange> wrong = values;
  wrong["image"] = {{1}, {1}, {1}};
  CHECK(!planOptimizationProfile(inputs, shapes, wrong, prof, err));
  CHECK_CONTAINS(err, "TensorRT does not treat it as a shape tensor");
  CHECK(!planOptimizationProfile(inputs, shapes, {{"target", {{1}, {2}, {4}}}}, prof, err));
  CHECK_CONTAINS(err, "shape tensor of 2 values");
  CHECK(!planOptimizationProfile(inputs, shapes, {{"target", {{4, 1}, {2, 1}, {4, 1}}}}, prof, err));
  CHECK_CONTAINS(err, "min <= opt <= max");
  CHECK(!planOptimizationProfile(inputs, shapes, {{"nope", {{1}, {1}, {1}}}}, prof, err));
  CHECK_CONTAINS(err, "\"nope\", which is not an input");
}

TEST(parser_errors_name_node_operator_code_and_description) {
  std::string s = formatParserError(nvonnxparser::ErrorCode::kUNSUPPORTED_NODE, "no importer for op", 12, "/backbone/conv1", "DeformConv");
  CHECK_EQ(s, std::string("ONNX parse error at node 12 \"/backbone/conv1\" (DeformConv): UNSUPPORTED_NODE (8): "
                          "no importer for op"));
  std::string g = formatParserError(nvonnxparser::ErrorCode::kMODEL_DESERIALIZE_FAILED, "bad protobuf", -1, "", "");
  CHECK_EQ(g, std::string("ONNX parse error: MODEL_DESERIALIZE_FAILED (3): bad protobuf"));
  std::string n = formatParserError(static_cast<nvonnxparser::ErrorCode>(99), nullptr, 0, nullptr, nullptr);
  CHECK_EQ(n, std::string("ONNX parse error at node 0: UNKNOWN_ERROR (99)"));
  for (int c = 0; c <= nvonnxparser::EnumMax<nvonnxparser::ErrorCode>(); ++c) {
    CHECK(std::string(parserErrorCodeName(static_cast<nvonnxparser::ErrorCode>(c))) != "UNKNOWN_ERROR");
  }
}

TEST(version_arithmetic) {
  CHECK_EQ(formatTrtVersion(101601), std::string("10.16.1"));
  CHECK_EQ(formatTrtVersion(110100), std::string("11.1.0"));
  CHECK_EQ(formatTrtVersion(8601), std::string("8.6.1"));
  CHECK_EQ(decodeTrtVersion(NV_TENSORRT_VERSION).major, NV_TENSORRT_MAJOR);
  CHECK_EQ(decodeTrtVersion(NV_TENSORRT_VERSION).minor, NV_TENSORRT_MINOR);
  CHECK(!runtimeHasTimingCacheQueryKeys(100700));
  CHECK(runtimeHasTimingCacheQueryKeys(100800));
  CHECK(runtimeHasTimingCacheQueryKeys(101601));
  CHECK(!runtimeHasTimingCacheQueryKeys(8601));
  CHECK(libHas(110000, kSinceStreamBuild));
  CHECK(!libHas(110000, kSinceBuildRoutes));
  CHECK(libHas(110100, kSinceBuildRoutes));
  CHECK(!libHas(101000, kSinceShapeValuesV2));
  CHECK(libHas(101100, kSinceShapeValuesV2));
}

// The pattern list a probe reports, as the tuner reads the database: every entry with an option,
// whatever its allowed values; nothing for an empty database or text that is not one.
TEST(route_knob_patterns_keep_every_entry_with_an_option) {
  using tbs::trt::routeKnobPatterns;
  std::string const db = R"({"tuner_version": "2.19.15", "tuner_options": [)"
                         R"({"option": "-conv_use_long_w", "allowed_values": "-conv_use_long_w=[on | off]", "default_value": "on"},)"
                         R"( {"option": "-threads", "allowed_values": "-threads=[1...64]"},)"
                         R"( {"option": "-n", "allowed_values": ["a", "b"]}, {"option": "-m", "allowed_values": null},)"
                         R"( {"option": "tile", "allowed_values": "=int32_t", "help": "a \"quoted\" help"},)"
                         R"( {"option": ""}, {"allowed_values": "-x=[1|2]"}, 5]})";
  CHECK(routeKnobPatterns(db) ==
        std::vector<std::string>({"-conv_use_long_w=[on | off]", "-threads=[1...64]", "-n", "-m", "-tile=int32_t"}));
  CHECK(routeKnobPatterns("").empty());
  CHECK(routeKnobPatterns("{").empty());
  CHECK(routeKnobPatterns(R"({"tuner_options": {}})").empty());
  CHECK(routeKnobPatterns(std::string(200, '[')).empty());  // nesting beyond the limit: refused, no crash
}

TEST_MAIN()

// trtexec's other build flags (issue 37): BuildRequest's spec strings → the plan.
TEST(io_formats_parse_type_and_format_mask_per_tensor) {
  tbs::BuildRequest r;
  r.inputIOFormats = "fp16:chw,int8:chw4+hwc8";
  r.outputIOFormats = "fp32:hwc";
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.inputFormats.size(), size_t{2});
  CHECK(p.inputFormats[0].type == nvinfer1::DataType::kHALF);
  CHECK_EQ(p.inputFormats[0].formats, 1U << static_cast<uint32_t>(nvinfer1::TensorFormat::kLINEAR));
  CHECK(p.inputFormats[1].type == nvinfer1::DataType::kINT8);
  CHECK_EQ(p.inputFormats[1].formats,
           (1U << static_cast<uint32_t>(nvinfer1::TensorFormat::kCHW4)) | (1U << static_cast<uint32_t>(nvinfer1::TensorFormat::kHWC8)));
  CHECK_EQ(p.outputFormats.size(), size_t{1});
  CHECK(p.outputFormats[0].type == nvinfer1::DataType::kFLOAT);
  r.inputIOFormats = "fp16:nchw";
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("inputIOFormats: \"nchw\" is not a tensor format") == 0);
}

TEST(sparsity_compilation_cache_avg_timing_dla_map_to_their_settings) {
  tbs::BuildRequest r;
  r.sparsity = "enable";
  r.compilationCache = 0;
  r.avgTiming = 4;
  r.dlaCore = 1;
  r.allowGPUFallback = true;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(has(p.setFlags, BuilderFlag::kSPARSE_WEIGHTS));
  CHECK(has(p.setFlags, BuilderFlag::kDISABLE_COMPILATION_CACHE));
  CHECK(has(p.setFlags, BuilderFlag::kGPU_FALLBACK));
  CHECK_EQ(p.avgTiming, 4);
  CHECK_EQ(p.dlaCore, 1);
  r.sparsity = "force";
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("sparsity must be disable or enable") == 0);
  r.sparsity = "";
  r.avgTiming = 0;
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("avgTiming must be >= 1") == 0);
}

TEST(tactic_sources_add_and_remove_bits_the_headers_have) {
  tbs::BuildRequest r;
  r.tacticSources = "+jit_convolutions,-EDGE_MASK_CONVOLUTIONS";
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(p.setTacticSources);
  CHECK_EQ(p.enableTactics, 1U << static_cast<uint32_t>(nvinfer1::TacticSource::kJIT_CONVOLUTIONS));
  CHECK_EQ(p.disableTactics, 1U << static_cast<uint32_t>(nvinfer1::TacticSource::kEDGE_MASK_CONVOLUTIONS));
  r.tacticSources = "+JIT_CONVOLUTIONS,-JIT_CONVOLUTIONS";
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("both enabled and disabled") != std::string::npos);
  r.tacticSources = "-CUBLAS";
#if NV_TENSORRT_MAJOR >= 11
  // 11.x removed cuBLAS/cuDNN tactics: the flag names the ones there are.
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("cuBLAS and cuDNN tactics were removed") != std::string::npos);
#else
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK(p.disableTactics != 0U);
#endif
}

TEST(preview_features_by_trtexec_names) {
  tbs::BuildRequest r;
  r.previewFeatures = "+aliasedPluginIO1003,-profileSharing0806";
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.preview.size(), size_t{1});
  CHECK(p.preview[0].first == nvinfer1::PreviewFeature::kALIASED_PLUGIN_IO_10_03);
  CHECK(p.preview[0].second);
  CHECK_EQ(p.warnings.size(), size_t{1});
  r.previewFeatures = "+fastMath";
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("\"fastMath\" is not a preview feature") != std::string::npos);
}

TEST(layer_precision_constraints_are_10x_only) {
  tbs::BuildRequest r;
  r.precisionConstraints = "obey";
  r.layerPrecisions = "conv1:fp16,*:fp32";
  r.layerOutputTypes = "split:fp16+fp32";
  ConfigPlan p;
  std::string err;
#if NV_TENSORRT_MAJOR >= 11
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("TensorRT 11 has no per-layer precision constraints: networks are strongly typed") != std::string::npos);
#else
  CHECK(planBuilderConfig(r, kLib, p, err));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  CHECK(has(p.setFlags, BuilderFlag::kOBEY_PRECISION_CONSTRAINTS));
#pragma GCC diagnostic pop
  CHECK_EQ(p.layerPrecisions.size(), size_t{2});
  CHECK_EQ(p.layerPrecisions[1].layer, std::string("*"));
  CHECK(p.layerPrecisions[1].types.front() == nvinfer1::DataType::kFLOAT);
  CHECK_EQ(p.layerOutputTypes.size(), size_t{1});
  CHECK_EQ(p.layerOutputTypes[0].types.size(), size_t{2});
  r.stronglyTyped = true;
  CHECK(!planBuilderConfig(r, kLib, p, err));
  CHECK(err.find("stronglyTyped cannot be combined") == 0);
  r.stronglyTyped = false;
  r.precisionConstraints = "";
  CHECK(planBuilderConfig(r, kLib, p, err));
  CHECK_EQ(p.warnings.size(), size_t{1});  // without obey/prefer TensorRT may ignore them
#endif
}
