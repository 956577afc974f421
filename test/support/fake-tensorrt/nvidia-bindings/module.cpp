// The `tensorrt` module made from NVIDIA's own binding sources (python/src in NVIDIA/TensorRT,
// extracted from the mirror by build.sh, never committed) over the project's fake libnvinfer
// (native/test/trt/fake_full_nvinfer.cc). This file replaces NVIDIA's pyTensorRT.cpp only to bind
// the parts the watch probe meets (foundational types, the network, the builder, its config and
// the progress monitor trampoline) without the plugin, INT8 and algorithm-selector sources.
#include "ForwardDeclarations.h"
#include "utils.h"

#include <pybind11/stl_bind.h>

namespace tensorrt {
PYBIND11_MODULE(tensorrt, m) {
  py::class_<FallbackString, std::unique_ptr<FallbackString, py::nodelete>>(m, "FallbackString", py::module_local())
      .def(py::init<std::string>())
      .def(py::init<py::str>());
  py::implicitly_convertible<std::string, FallbackString>();
  py::implicitly_convertible<py::str, FallbackString>();
  py::bind_vector<std::vector<nvinfer1::PluginField>>(m, "PluginFieldCollection");
  bindFoundationalTypes(m);
  bindGraph(m);
  bindCore(m);
  m.attr("STAND_IN") = false;
  m.attr("BINDINGS") = "NVIDIA python/src (release/10.16) over the project's fake libnvinfer";
}
}  // namespace tensorrt
