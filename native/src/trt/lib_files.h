// File-name facts about shared libraries, shared by the addon's TensorRT loader and the adapters
// (no TensorRT or CUDA header).
#pragma once

#include <string>
#include <vector>

namespace tbs::trt {

// "10.3.0" for a path whose real file is libnvonnxparser.so.10.3.0 (links are followed), "12"
// for libcudart.so.12; empty when the name carries no version after ".so.".
std::string versionFromFileName(std::string const& path);

// Regular files (or links to them) in `dir` whose names start with `prefix` and contain ".so",
// sorted by name; empty when the folder cannot be read.
std::vector<std::string> librariesIn(std::string const& dir, std::string const& prefix);

// The directory part of `path` joined with `name`, or `name` when `dir` is empty.
std::string joinPath(std::string const& dir, std::string const& name);

}  // namespace tbs::trt
