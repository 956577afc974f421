// A scripted stand-in for libnvonnxparser.so.10 (test-only, our own code): parseFromFile reads
// the text "model" of fake_full_script.h, adds its inputs to the network through the real
// INetworkDefinition API, and reports scripted errors through IParserError.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fake_full_script.h"
#include "trt_stubs.h"  // generated at configure time by gen_stubs.py

namespace {

class FakeParserError final : public nvonnxparser::StubIParserError {
 public:
  FakeParserError(int code, int node, std::string name, std::string op, std::string desc)
      : code_(code), node_(node), name_(std::move(name)), op_(std::move(op)), desc_(std::move(desc)) {}
  nvonnxparser::ErrorCode code() const override { return static_cast<nvonnxparser::ErrorCode>(code_); }
  char const* desc() const override { return desc_.c_str(); }
  int node() const override { return node_; }
  char const* nodeName() const override { return name_.c_str(); }
  char const* nodeOperator() const override { return op_.c_str(); }

 private:
  int code_, node_;
  std::string name_, op_, desc_;
};

class FakeParser final : public nvonnxparser::StubIParser {
 public:
  explicit FakeParser(nvinfer1::INetworkDefinition* network) : network_(network) {}

  bool parseFromFile(char const* path, int) noexcept override {
    // As the real parser does before it adds layers; in a mixed install this is a call into
    // another slot of libnvinfer's network, and the test process crashes like a user's would.
    nvinfer1::IBuilder& builder = network_->getBuilder();
    (void)builder.getNbDLACores();
    std::ifstream in(path);
    if (!in) {
      errors_.push_back(std::make_unique<FakeParserError>(3, -1, "", "", std::string("cannot open ") + path));
      return false;
    }
    std::string directives;
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string kind;
      words >> kind;
      if (kind == "input") {
        std::string name, dims, shape;
        words >> name >> dims >> shape;  // "shape": a shape-tensor input
        std::vector<int64_t> d = tbs_fake::parseDims(dims);
        nvinfer1::Dims td{};
        td.nbDims = static_cast<int32_t>(d.size());
        for (size_t i = 0; i < d.size(); ++i) td.d[i] = d[i];
        network_->addInput(name.c_str(), shape == "shape" ? nvinfer1::DataType::kINT64 : nvinfer1::DataType::kFLOAT, td);
      } else if (kind == "plugin-op") {
        // A node the parser builds through a plugin (an op it has no importer for, or one it
        // implements with a standard plugin): it asks the registry of the network's builder,
        // as onnx-tensorrt does, and fails naming the node and op when no creator is there.
        std::string node, op, plugin;
        words >> node >> op >> plugin;
        if (plugin.empty()) plugin = op;
        nvinfer1::IPluginRegistry& registry = network_->getBuilder().getPluginRegistry();
        if (registry.getCreator(plugin.c_str(), "1", "") == nullptr) {
          errors_.push_back(std::make_unique<FakeParserError>(
              8, nodes_, node, op, "Plugin not found, are the plugin name, version, and namespace correct? (plugin " + plugin + ")"));
        }
        ++nodes_;
      } else if (kind == "vc-plugin-lib") {
        // A plugin library a version-compatible engine needs, as the parser reports it.
        std::string lib;
        words >> lib;
        vcLibs_.push_back(lib);
      } else if (kind == "vc-plugin-query-fails") {
        vcQueryFails_ = true;
      } else if (kind == "parse-error") {
        int code = 0, node = 0;
        std::string name, op, desc;
        words >> code >> node >> name >> op;
        std::getline(words >> std::ws, desc);
        errors_.push_back(std::make_unique<FakeParserError>(code, node, name, op, desc));
      } else if (!kind.empty()) {
        directives += line + "\n";
      }
    }
    network_->setName(directives.c_str());
    return errors_.empty();
  }
  int getNbErrors() const noexcept override { return static_cast<int>(errors_.size()); }
  nvonnxparser::IParserError const* getError(int index) const noexcept override {
    return index >= 0 && index < getNbErrors() ? errors_[static_cast<size_t>(index)].get() : nullptr;
  }
  void clearErrors() noexcept override { errors_.clear(); }
  char const* const* getUsedVCPluginLibraries(int64_t& nbPluginLibs) const noexcept override {
    vcPointers_.clear();
    for (auto const& l : vcLibs_) vcPointers_.push_back(l.c_str());
    nbPluginLibs = vcQueryFails_ ? -1 : static_cast<int64_t>(vcPointers_.size());
    return vcPointers_.data();
  }

 private:
  std::vector<std::string> vcLibs_;
  mutable std::vector<char const*> vcPointers_;
  bool vcQueryFails_ = false;
  nvinfer1::INetworkDefinition* network_;
  std::vector<std::unique_ptr<FakeParserError>> errors_;
  int nodes_ = 0;
};

int lastParserVersion = -1;

}  // namespace

extern "C" {

void* createNvOnnxParser_INTERNAL(void* network, void* /*logger*/, int version) noexcept {
  lastParserVersion = version;
  return static_cast<nvonnxparser::IParser*>(new FakeParser(static_cast<nvinfer1::INetworkDefinition*>(network)));
}

int getNvOnnxParserVersion() noexcept { return 100; }

__attribute__((visibility("default"))) int fakeFullLastParserVersion() { return lastParserVersion; }

}  // extern "C"
