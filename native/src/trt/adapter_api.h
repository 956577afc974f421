// The seam between the addon and a TensorRT adapter library (libtbs_trt<major>.so).
//
// Both TensorRT majors declare the same nvinfer1 names with different layouts (11.x removed
// methods, so virtual-table slots moved; ILogger gained a base class), so code compiled against
// one major can never share an object file with code compiled against the other. Each adapter is
// therefore its own shared library, built with hidden visibility from the sources in this
// directory against one major's headers, exporting exactly one C symbol (kAdapterEntry). The
// addon includes no TensorRT header: it finds libnvinfer, reads its version, loads the adapter of
// that major and talks to it only through the types below.
//
// The adapter and the addon come from one CMake build with one compiler and one C++ standard
// library, so C++ types (std::string, tbs::Backend) may cross this seam; kAdapterAbi guards
// against a stale adapter file left next to a newer addon.
#pragma once

#include <cstdint>
#include <string>

#include "../core/backend.h"

namespace tbs::trt {

// Bump on any change to AdapterContext, AdapterApi or the tbs types they carry.
inline constexpr int32_t kAdapterAbi = 4;  // 3: probe fields (driver, routes); 4: plugin fields of BuildRequest / BackendProbe
inline constexpr char kAdapterEntry[] = "tbs_trt_adapter_entry";

// What the addon found, handed to the adapter.
struct AdapterContext {
  std::string nvinferPath;     // the libnvinfer the addon opened (resolved path or soname)
  std::string onnxParserPath;  // the ONNX parser library to load after it (path or soname)
  int32_t libVersion = 0;      // getInferLibVersion() of that libnvinfer
};

struct AdapterApi {
  int32_t abi = 0;
  int32_t major = 0;          // NV_TENSORRT_MAJOR of the headers the adapter was compiled with
  int32_t headerVersion = 0;  // NV_TENSORRT_VERSION of those headers (encoded)
  // A backend driving that library. The caller owns it (delete through Backend's virtual
  // destructor; both sides use the same operator delete). Never throws.
  Backend* (*makeBackend)(AdapterContext const& context) = nullptr;
};

// Signature of the exported entry: returns null if `hostAbi` differs from the adapter's.
using AdapterEntryFn = AdapterApi const* (*)(int32_t hostAbi);

}  // namespace tbs::trt
