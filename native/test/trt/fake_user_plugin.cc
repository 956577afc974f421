// A user plugin library (test-only, our own code) registering one creator, as trtexec's
// --dynamicPlugins and --staticPlugins libraries do: built once exporting getCreators() (what
// IPluginRegistry::loadLibrary calls) with "MyCustomOp_TRT", and once (FAKE_STATIC_PLUGIN)
// registering "MyStaticOp_TRT" from a static constructor when it is dlopened.
#include "fake_plugin_registry.h"

namespace {
tbs_fake::FakeCreator* creator() {
#ifdef FAKE_STATIC_PLUGIN
  static auto* c = new tbs_fake::FakeCreator("MyStaticOp_TRT");
#else
  static auto* c = new tbs_fake::FakeCreator("MyCustomOp_TRT");
#endif
  return c;
}
#ifdef FAKE_STATIC_PLUGIN
struct RegisterAtLoad {
  RegisterAtLoad() { getPluginRegistry()->registerCreator(*creator(), ""); }
} registerAtLoad;
#endif
}  // namespace

#ifndef FAKE_STATIC_PLUGIN
extern "C" __attribute__((visibility("default"))) nvinfer1::IPluginCreatorInterface* const* getCreators(int32_t& nbCreators) {
  static nvinfer1::IPluginCreatorInterface* list[1] = {creator()};
  nbCreators = 1;
  return list;
}
#endif
