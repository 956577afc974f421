// Test support for TrtBackend::build: a scratch directory holding a stand-in model.onnx, and the
// "tensorrt" request that builds it into model.engine in the same directory.
#pragma once

#include <fstream>
#include <string>

#include "core/backend.h"
#include "temp_dir.h"

namespace tbs_test {

struct ModelDir : TempDir {
  // `model` is the file's text: the scripted fake parser (fake_full_*.cc) reads it as its script;
  // the plain fakes fail before anything reads it.
  ModelDir(std::string const& prefix, std::string const& model) : TempDir(prefix) { std::ofstream(file("model.onnx")) << model; }
};

inline tbs::BuildRequest request(ModelDir const& d) {
  tbs::BuildRequest r;
  r.backend = "tensorrt";
  r.modelPath = d.file("model.onnx");
  r.outputPath = d.file("model.engine");
  return r;
}

}  // namespace tbs_test
