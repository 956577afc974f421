// BuildRequest -> TensorRT settings, the profile planner, parser-error wording, version
// arithmetic and the file reader: pure code, no TensorRT library.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "trt/trt_options.h"
#include "trt/trt_timing_cache.h"
#include "trt/trt_version.h"

using namespace tbs::trt;
using nvinfer1::BuilderFlag;
using nvinfer1::MemoryPoolType;

namespace {

bool has(std::vector<BuilderFlag> const& v, BuilderFlag f) { return std::find(v.begin(), v.end(), f) != v.end(); }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // 10.x precision flags, see trt_options.cc
constexpr BuilderFlag kFP16 = BuilderFlag::kFP16, kBF16 = BuilderFlag::kBF16, kINT8 = BuilderFlag::kINT8,
                      kFP8 = BuilderFlag::kFP8, kINT4 = BuilderFlag::kINT4, kFP4 = BuilderFlag::kFP4;
#pragma GCC diagnostic pop

std::vector<int64_t> dimsOf(nvinfer1::Dims const& d) { return std::vector<int64_t>(d.d, d.d + d.nbDims); }

}  // namespace

TEST(default_request_changes_nothing) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, p, err));
  CHECK_EQ(p.networkFlags, 0U);
  CHECK(p.setFlags.empty());
  CHECK(p.clearFlags.empty());
  CHECK_EQ(p.optLevel, -1);
  CHECK(p.poolLimits.empty());
  CHECK(!p.setProfilingVerbosity);
  CHECK(!p.setHardwareCompatibility);
  CHECK_EQ(p.maxAuxStreams, -1);
}

TEST(every_precision_maps_to_its_10x_flag_once) {
  tbs::BuildRequest r;
  r.precision = {"fp16", "bf16", "int8", "fp8", "int4", "fp4", "fp16"};
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, p, err));
  CHECK_EQ(p.setFlags.size(), size_t{6});
  for (BuilderFlag f : {kFP16, kBF16, kINT8, kFP8, kINT4, kFP4}) CHECK(has(p.setFlags, f));
  // The enum values 10.x uses (11.x renumbered them, which is why the loader refuses 11).
  CHECK_EQ(static_cast<int>(kFP16), 0);
  CHECK_EQ(static_cast<int>(kINT8), 1);
  CHECK_EQ(static_cast<int>(kFP8), 15);
  CHECK_EQ(static_cast<int>(kBF16), 17);
  CHECK_EQ(static_cast<int>(kINT4), 22);
  CHECK_EQ(static_cast<int>(kFP4), 26);
}

TEST(unknown_precision_is_named) {
  tbs::BuildRequest r;
  r.precision = {"fp16", "fp12"};
  ConfigPlan p;
  std::string err;
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "\"fp12\"");
}

TEST(strongly_typed_sets_the_network_flag_and_refuses_precision_flags) {
  tbs::BuildRequest r;
  r.stronglyTyped = true;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, p, err));
  CHECK_EQ(p.networkFlags, 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED));
  CHECK_EQ(p.networkFlags, 2U);
  r.precision = {"fp16"};
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "strongly typed");
  CHECK_CONTAINS(err, "\"fp16\"");
}

TEST(tf32_on_off_and_default) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  r.tf32 = 0;
  CHECK(planBuilderConfig(r, p, err));
  CHECK(has(p.clearFlags, BuilderFlag::kTF32) && !has(p.setFlags, BuilderFlag::kTF32));
  r.tf32 = 1;
  CHECK(planBuilderConfig(r, p, err));
  CHECK(has(p.setFlags, BuilderFlag::kTF32) && !has(p.clearFlags, BuilderFlag::kTF32));
  r.tf32 = 2;
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "tf32");
}

TEST(optimization_level_range) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  for (int level = 0; level <= 5; ++level) {
    r.optLevel = level;
    CHECK(planBuilderConfig(r, p, err));
    CHECK_EQ(p.optLevel, level);
  }
  r.optLevel = 6;
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "0..5");
  r.optLevel = -2;
  CHECK(!planBuilderConfig(r, p, err));
}

TEST(memory_pools_map_to_their_pool_types) {
  tbs::BuildRequest r;
  r.workspaceBytes = int64_t{4} << 30;
  r.tacticDramBytes = 0;
  r.tacticSharedMemoryBytes = 48 * 1024;
  ConfigPlan p;
  std::string err;
  CHECK(planBuilderConfig(r, p, err));
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
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "tactic DRAM");
}

TEST(profiling_verbosity_and_hardware_compatibility) {
  tbs::BuildRequest r;
  ConfigPlan p;
  std::string err;
  r.profilingVerbosity = "detailed";
  r.hardwareCompatibility = "ampere_plus";
  r.maxAuxStreams = 0;
  CHECK(planBuilderConfig(r, p, err));
  CHECK(p.setProfilingVerbosity && p.profilingVerbosity == nvinfer1::ProfilingVerbosity::kDETAILED);
  CHECK(p.setHardwareCompatibility && p.hardwareCompatibility == nvinfer1::HardwareCompatibilityLevel::kAMPERE_PLUS);
  CHECK_EQ(p.maxAuxStreams, 0);
  r.profilingVerbosity = "none";
  r.hardwareCompatibility = "same_compute_capability";
  CHECK(planBuilderConfig(r, p, err));
  CHECK(p.profilingVerbosity == nvinfer1::ProfilingVerbosity::kNONE);
  CHECK(p.hardwareCompatibility == nvinfer1::HardwareCompatibilityLevel::kSAME_COMPUTE_CAPABILITY);
  r.profilingVerbosity = "layer_names_only";
  r.hardwareCompatibility = "none";
  CHECK(planBuilderConfig(r, p, err));
  CHECK(p.profilingVerbosity == nvinfer1::ProfilingVerbosity::kLAYER_NAMES_ONLY);
  CHECK(p.hardwareCompatibility == nvinfer1::HardwareCompatibilityLevel::kNONE);
  r.hardwareCompatibility = "hopper_plus";
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "hopper_plus");
  r.hardwareCompatibility = "";
  r.profilingVerbosity = "loud";
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "loud");
  r.profilingVerbosity = "";
  r.maxAuxStreams = -3;
  CHECK(!planBuilderConfig(r, p, err));
  CHECK_CONTAINS(err, "aux streams");
}

TEST(static_inputs_need_no_profile) {
  std::vector<InputDesc> inputs = {{"image", {1, 3, 224, 224}, false}};
  std::vector<ProfileEntry> prof;
  std::string err;
  CHECK(planOptimizationProfile(inputs, {}, prof, err));
  CHECK(prof.empty());
  // Shapes that repeat a static input's dims are accepted and need no profile entry.
  std::map<std::string, tbs::ShapeRange> same = {{"image", {{1, 3, 224, 224}, {1, 3, 224, 224}, {1, 3, 224, 224}}}};
  CHECK(planOptimizationProfile(inputs, same, prof, err));
  CHECK(prof.empty());
}

TEST(dynamic_input_gets_min_opt_max) {
  std::vector<InputDesc> inputs = {{"image", {-1, 3, -1, -1}, false}, {"scale", {1}, false}};
  std::map<std::string, tbs::ShapeRange> shapes = {
      {"image", {{1, 3, 128, 128}, {8, 3, 224, 224}, {32, 3, 512, 512}}}};
  std::vector<ProfileEntry> prof;
  std::string err;
  CHECK(planOptimizationProfile(inputs, shapes, prof, err));
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
  CHECK(!planOptimizationProfile(inputs, {}, prof, err));
  CHECK_CONTAINS(err, "\"tokens\"");
  CHECK_CONTAINS(err, "[-1,-1]");
  CHECK_CONTAINS(err, "min/opt/max");
}

TEST(bad_shapes_are_explained) {
  std::vector<InputDesc> inputs = {{"x", {-1, 3}, false}};
  std::vector<ProfileEntry> prof;
  std::string err;
  auto plan = [&](tbs::ShapeRange r) { return planOptimizationProfile(inputs, {{"x", r}}, prof, err); };
  CHECK(!plan({{1, 3, 1}, {1, 3}, {1, 3}}));
  CHECK_CONTAINS(err, "rank");
  CHECK(!plan({{1, 4}, {1, 3}, {1, 3}}));
  CHECK_CONTAINS(err, "fixed dimension 1");
  CHECK(!plan({{4, 3}, {2, 3}, {8, 3}}));
  CHECK_CONTAINS(err, "min <= opt <= max");
  CHECK(!plan({{-1, 3}, {2, 3}, {8, 3}}));
  CHECK_CONTAINS(err, "negative");
  CHECK(!planOptimizationProfile(inputs, {{"y", {{1, 3}, {1, 3}, {1, 3}}}}, prof, err));
  CHECK_CONTAINS(err, "\"y\"");
  CHECK_CONTAINS(err, "inputs: x");
  std::vector<InputDesc> shapeTensor = {{"n", {-1}, true}};
  CHECK(!planOptimizationProfile(shapeTensor, {{"n", {{1}, {1}, {1}}}}, prof, err));
  CHECK_CONTAINS(err, "shape tensor");
}

TEST(parser_errors_name_node_operator_code_and_description) {
  std::string s = formatParserError(nvonnxparser::ErrorCode::kUNSUPPORTED_NODE, "no importer for op", 12,
                                    "/backbone/conv1", "DeformConv");
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
}

TEST(read_whole_file_distinguishes_missing_from_unreadable) {
  std::string dir = "/tmp/tbs-trt-options-" + std::to_string(::getpid());
  CHECK_EQ(::mkdir(dir.c_str(), 0755), 0);
  std::string bytes, err;
  CHECK(readWholeFile(dir + "/absent", bytes, err) == ReadStatus::kMissing);
  CHECK(readWholeFile(dir, bytes, err) == ReadStatus::kError);
  CHECK_CONTAINS(err, "not a regular file");
  {
    std::ofstream out(dir + "/cache.bin", std::ios::binary);
    out.write("a\0b", 3);
  }
  CHECK(readWholeFile(dir + "/cache.bin", bytes, err) == ReadStatus::kOk);
  CHECK_EQ(bytes.size(), size_t{3});
  CHECK_EQ(bytes, std::string("a\0b", 3));
  std::remove((dir + "/cache.bin").c_str());
  ::rmdir(dir.c_str());
}

TEST_MAIN()
