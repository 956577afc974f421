// The "model" language of the scripted fakes (fake_full_nvinfer.cc, fake_full_nvonnxparser.cc):
// a text file the fake parser reads instead of ONNX. One directive per line:
//   input <name> <d0,d1,...> [shape]    network input (-1 = dynamic; "shape": a shape tensor)
//   parse-error <code> <node> <name> <op> <description...>
//   plugin-op <node> <op> [<plugin>]     a node built through a plugin: the parser looks up
//                                        <plugin> (default <op>) in the builder's registry
//   build-fail <message...>             buildSerializedNetwork logs an error, returns null
//   wait-cancel                         steps until stepComplete returns false, then stops
//   ignore-stop                         keeps going after stepComplete returned false
//   threads <n>  steps <n>              size of the simulated tactic timing (default 3 x 20)
//   cache-add <n>                       timing-cache entries the build adds (before any step)
//   cache-prefix <text>                 their keys are "<text>-<i>" (default "entry")
//   autotune <n>                        VERBOSE "Autotuning op" lines to log
//   engine-bytes <n>                    size of the fake engine (default 4096)
// The parser passes every non-input, non-error line to the builder through the network's name.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace tbs_fake {

inline std::vector<int64_t> parseDims(std::string const& text) {
  std::vector<int64_t> dims;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) dims.push_back(std::stoll(item));
  return dims;
}

// Value of "<key> <n>" among the directives, or `fallback`.
inline int64_t directive(std::string const& directives, std::string const& key, int64_t fallback) {
  std::istringstream in(directives);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string k;
    int64_t v = 0;
    if (words >> k && k == key && (words >> v)) return v;
  }
  return fallback;
}

inline bool hasDirective(std::string const& directives, std::string const& key, std::string* rest = nullptr) {
  std::istringstream in(directives);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0 && (line.size() == key.size() || line[key.size()] == ' ')) {
      if (rest != nullptr) *rest = line.size() > key.size() ? line.substr(key.size() + 1) : "";
      return true;
    }
  }
  return false;
}

}  // namespace tbs_fake
