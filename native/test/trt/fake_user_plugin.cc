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
// Code the plugin never runs that calls a function no library defines (linked with -z lazy):
// trtexec's RTLD_LAZY loads such a library, RTLD_NOW refuses it ("undefined symbol").
extern "C" void tbs_fake_defined_nowhere();
extern "C" __attribute__((visibility("default"))) void fakeStaticPluginUnusedPath() { tbs_fake_defined_nowhere(); }
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
