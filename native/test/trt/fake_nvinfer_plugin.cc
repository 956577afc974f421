// A stand-in for libnvinfer_plugin.so.<major> (test-only, our own code; not NVIDIA's library).
// initLibNvInferPlugins registers the creators of a few standard plugins in the registry of the
// libnvinfer loaded before it (getPluginRegistry, resolved against that global libnvinfer as the
// real plugin library's is), once however often it is called, and reports each call.
#include <mutex>
#include <vector>

#include "fake_plugin_registry.h"

namespace {

std::once_flag once;
int calls = 0;

}  // namespace

extern "C" {

__attribute__((visibility("default"))) bool initLibNvInferPlugins(void* /*logger*/, char const* libNamespace) {
  ++calls;
  std::call_once(once, [libNamespace] {
    static auto* creators = new std::vector<tbs_fake::FakeCreator*>{
        new tbs_fake::FakeCreator("EfficientNMS_TRT"), new tbs_fake::FakeCreator("ROIAlign_TRT"),
        new tbs_fake::FakeCreator("BatchedNMSDynamic_TRT"), new tbs_fake::FakeCreator("ScatterElements")};
    for (auto* c : *creators) getPluginRegistry()->registerCreator(*c, libNamespace != nullptr ? libNamespace : "");
  });
  return true;
}

// For the tests: how often initLibNvInferPlugins was called in this process.
__attribute__((visibility("default"))) int fakePluginInitCalls() { return calls; }

}  // extern "C"
