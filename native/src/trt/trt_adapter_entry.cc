// The one symbol an adapter library exports (everything else is hidden): the addon resolves
// kAdapterEntry with dlsym and gets the adapter's facts and its backend factory.
#include "adapter_api.h"
#include "trt_backend.h"
#include "trt_headers.h"

namespace {

tbs::Backend* makeBackend(tbs::trt::AdapterContext const& context) {
  try {
    return tbs::makeTensorRtBackend(context).release();
  } catch (...) {
    return nullptr;  // allocation failure; the addon reports it
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) tbs::trt::AdapterApi const* tbs_trt_adapter_entry(int32_t hostAbi) {
  static tbs::trt::AdapterApi const api{tbs::trt::kAdapterAbi, NV_TENSORRT_MAJOR, tbs::trt::kHeaderVersion, &makeBackend};
  return hostAbi == tbs::trt::kAdapterAbi ? &api : nullptr;
}
