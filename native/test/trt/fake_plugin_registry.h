// The plugin registry of the scripted fake libnvinfer (test-only, our own code; included by
// fake_full_nvinfer.cc, one registry per fake library). What it models of real TensorRT, assumed
// from the headers and NVIDIA's samples, not observed on a real install:
//   - the registry starts EMPTY: the standard plugins exist only after libnvinfer_plugin's
//     initLibNvInferPlugins() registered their creators (fake_nvinfer_plugin.cc);
//   - a static plugin library registers its creators from a static constructor through
//     getPluginRegistry()->registerCreator when it is dlopened;
//   - loadLibrary(path) dlopens a plugin library and registers what its exported getCreators()
//     returns (the V3 entry point), returning null when the file or the entry point is missing;
//   - creators are found by (name, version, namespace), name from IPluginCreatorV3One.
#pragma once

#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <NvInferRuntime.h>

namespace tbs_fake {

class FakePluginRegistry final : public nvinfer1::IPluginRegistry {
 public:
  // The plugin name of a creator, when it is of the one kind the fakes register (V3One).
  static std::string nameOf(nvinfer1::IPluginCreatorInterface const& c) {
    nvinfer1::InterfaceInfo info = c.getInterfaceInfo();
    if (info.kind == nullptr || std::strcmp(info.kind, "PLUGIN CREATOR_V3ONE") != 0) return {};
    auto const& v3 = static_cast<nvinfer1::IPluginCreatorV3One const&>(c);
    return v3.getPluginName() != nullptr ? v3.getPluginName() : "";
  }

  void setErrorRecorder(nvinfer1::IErrorRecorder* const) noexcept override {}
  nvinfer1::IErrorRecorder* getErrorRecorder() const noexcept override { return nullptr; }
  bool isParentSearchEnabled() const override { return false; }
  void setParentSearchEnabled(bool const) override {}

  // What a fake library records of this registry's use ("<label> loadLibrary <path>", "<label>
  // register <name>"); none when unset.
  void (*journal)(std::string const&) = nullptr;
  std::string label = "registry";

  PluginLibraryHandle loadLibrary(nvinfer1::AsciiChar const* pluginPath) noexcept override {
    if (journal != nullptr) journal(label + " loadLibrary " + pluginPath);
    void* h = dlopen(pluginPath, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    using GetCreators = nvinfer1::IPluginCreatorInterface* const* (*)(int32_t&);
    auto fn = reinterpret_cast<GetCreators>(dlsym(h, "getCreators"));
    if (fn == nullptr) {
      dlclose(h);
      return nullptr;
    }
    int32_t n = 0;
    nvinfer1::IPluginCreatorInterface* const* list = fn(n);
    for (int32_t i = 0; i < n && list != nullptr; ++i) {
      if (list[i] != nullptr) registerCreator(*list[i], "");
    }
    return h;
  }
  void deregisterLibrary(PluginLibraryHandle) noexcept override {}

  bool registerCreator(nvinfer1::IPluginCreatorInterface& creator, nvinfer1::AsciiChar const* const ns) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string name = nameOf(creator);
    if (name.empty()) return false;
    for (auto const& e : entries_) {
      if (e.name == name && e.ns == (ns ? ns : "")) return false;  // already registered
    }
    entries_.push_back({name, ns ? ns : "", &creator});
    all_.push_back(&creator);
    if (journal != nullptr) journal(label + " register " + name);
    return true;
  }
  nvinfer1::IPluginCreatorInterface* const* getAllCreators(int32_t* const numCreators) const noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    if (numCreators != nullptr) *numCreators = static_cast<int32_t>(all_.size());
    return all_.empty() ? nullptr : all_.data();
  }
  nvinfer1::IPluginCreatorInterface* getCreator(nvinfer1::AsciiChar const* const pluginName, nvinfer1::AsciiChar const* const,
                                                nvinfer1::AsciiChar const* const ns = "") noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto const& e : entries_) {
      if (pluginName != nullptr && e.name == pluginName && e.ns == (ns ? ns : "")) return e.creator;
    }
    return nullptr;
  }
  bool deregisterCreator(nvinfer1::IPluginCreatorInterface const&) noexcept override { return false; }
  nvinfer1::IPluginResource* acquirePluginResource(nvinfer1::AsciiChar const*, nvinfer1::IPluginResource*) noexcept override {
    return nullptr;
  }
  int32_t releasePluginResource(nvinfer1::AsciiChar const*) noexcept override { return -1; }
#if NV_TENSORRT_MAJOR > 10 || (NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 10)
  nvinfer1::IPluginCreatorInterface* const* getAllCreatorsRecursive(int32_t* const numCreators) noexcept override {
    return getAllCreators(numCreators);
  }
#endif
#if NV_TENSORRT_MAJOR == 10
  // The IPluginCreator (V2) methods 10.x still declares; the fakes register only V3 creators.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  bool registerCreator(nvinfer1::IPluginCreator&, nvinfer1::AsciiChar const* const) noexcept override { return false; }
  nvinfer1::IPluginCreator* const* getPluginCreatorList(int32_t* const numCreators) const noexcept override {
    if (numCreators != nullptr) *numCreators = 0;
    return nullptr;
  }
  nvinfer1::IPluginCreator* getPluginCreator(nvinfer1::AsciiChar const* const, nvinfer1::AsciiChar const* const,
                                             nvinfer1::AsciiChar const* const = "") noexcept override {
    return nullptr;
  }
  bool deregisterCreator(nvinfer1::IPluginCreator const&) noexcept override { return false; }
#pragma GCC diagnostic pop
#endif
#if NV_TENSORRT_MAJOR >= 11
  ~FakePluginRegistry() noexcept override = default;
#endif

 private:
  struct Entry {
    std::string name;
    std::string ns;
    nvinfer1::IPluginCreatorInterface* creator;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  std::vector<nvinfer1::IPluginCreatorInterface*> all_;
};

// A creator that is found by name and creates nothing (the fakes never run a plugin).
class FakeCreator final : public nvinfer1::IPluginCreatorV3One {
 public:
  explicit FakeCreator(std::string name) : name_(std::move(name)) {}
  nvinfer1::IPluginV3* createPlugin(nvinfer1::AsciiChar const*, nvinfer1::PluginFieldCollection const*,
                                    nvinfer1::TensorRTPhase) noexcept override {
    return nullptr;
  }
  nvinfer1::PluginFieldCollection const* getFieldNames() noexcept override { return &fields_; }
  nvinfer1::AsciiChar const* getPluginName() const noexcept override { return name_.c_str(); }
  nvinfer1::AsciiChar const* getPluginVersion() const noexcept override { return "1"; }
  nvinfer1::AsciiChar const* getPluginNamespace() const noexcept override { return ""; }

 private:
  std::string name_;
  nvinfer1::PluginFieldCollection fields_{};
};

}  // namespace tbs_fake
