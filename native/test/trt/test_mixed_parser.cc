// A mixed install: the scripted fake libnvinfer of one release beside an ONNX parser fake
// compiled from ANOTHER release's headers (TBS_FAKE_ONNXPARSER_ROOT), installed as NVIDIA's
// packages install it (libnvonnxparser.so.<major> -> libnvonnxparser.so.<release>). The parser
// calls INetworkDefinition::getBuilder() by its own release's slot, which 10.8 and 10.9 put in
// different places, so driving it would call the wrong method. The backend must refuse before
// any builder or parser is created, naming both files and both versions.
#include <dlfcn.h>
#include <stdlib.h>

#include <string>

#include <NvInferVersion.h>

#include "check.h"
#include "model_dir.h"
#include "recording_sink.h"
#include "trt/trt_backend.h"

namespace {

std::string journal() {
  void* h = dlopen(FAKE_FULL_NVINFER, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return "";
  auto fn = reinterpret_cast<char const* (*)()>(dlsym(h, "fakeFullJournal"));
  std::string j = fn != nullptr ? fn() : "";
  dlclose(h);
  return j;
}

}  // namespace

TEST(a_parser_of_another_release_is_refused_before_any_builder) {
  tbs_test::ModelDir s("tbs-trt-mixed", "input x 1,4\n");
  tbs::BuildRequest r = tbs_test::request(s);
  setenv("TBS_NVINFER_LIB", FAKE_FULL_NVINFER, 1);
  std::string parser = std::string(FAKE_MIXED_PARSER_DIR) + "/libnvonnxparser.so." + std::to_string(NV_TENSORRT_MAJOR);
  setenv("TBS_NVONNXPARSER_LIB", parser.c_str(), 1);
  tbs_test::RecordingSink sink;
  tbs::BuildOutcome o = tbs::makeTensorRtBackend()->build(r, sink);
  tbs::BackendProbe p = tbs::makeTensorRtBackend()->probe();
  unsetenv("TBS_NVINFER_LIB");
  unsetenv("TBS_NVONNXPARSER_LIB");
  CHECK(o.status == tbs::BuildOutcome::Status::kFailed);
  CHECK_CONTAINS(o.error, "mixed TensorRT install refused");
  CHECK_CONTAINS(o.error, "is TensorRT " FAKE_MIXED_PARSER_TEXT);
  CHECK_CONTAINS(o.error, "libnvonnxparser.so." FAKE_MIXED_PARSER_TEXT);
  CHECK_CONTAINS(o.error, std::string("libnvinfer ") + FAKE_FULL_NVINFER + " is TensorRT " FAKE_CURRENT_TEXT);
  CHECK(journal().find("createInferBuilder") == std::string::npos);
  CHECK(!s.has("model.engine"));
  CHECK(!p.available);
  CHECK_CONTAINS(p.reason, "mixed TensorRT install refused");
}

TEST_MAIN()
