#include "trt_int8.h"

namespace tbs::trt {

#if NV_TENSORRT_MAJOR < 11
// ITensor::setDynamicRange / dynamicRangeIsSet are deprecated in late 10.x headers together with
// implicit quantization; they are still how 10.x takes placeholder scales.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

bool hasQdqLayers(nvinfer1::INetworkDefinition const& network) {
  for (int32_t i = 0; i < network.getNbLayers(); ++i) {
    nvinfer1::ILayer const* layer = network.getLayer(i);
    if (layer == nullptr) continue;
    nvinfer1::LayerType t = layer->getType();
    if (t == nvinfer1::LayerType::kQUANTIZE || t == nvinfer1::LayerType::kDEQUANTIZE) return true;
  }
  return false;
}

bool setPlaceholderDynamicRanges(nvinfer1::INetworkDefinition const& network, std::string& error) {
  constexpr float kIn = 2.0F;
  constexpr float kOut = 4.0F;
  auto set = [&](nvinfer1::ITensor* t, float range) {
    if (t == nullptr || t->dynamicRangeIsSet() || t->setDynamicRange(-range, range)) return true;
    error = std::string("TensorRT refused a placeholder dynamic range for tensor \"") + (t->getName() ? t->getName() : "") + "\"";
    return false;
  };
  for (int32_t l = 0; l < network.getNbLayers(); ++l) {
    nvinfer1::ILayer* layer = network.getLayer(l);
    if (layer == nullptr) continue;
    bool concat = layer->getType() == nvinfer1::LayerType::kCONCATENATION;
    bool pooling = layer->getType() == nvinfer1::LayerType::kPOOLING;
    for (int32_t i = 0; i < layer->getNbInputs(); ++i) {
      if (!set(layer->getInput(i), concat ? kOut : kIn)) return false;
    }
    for (int32_t o = 0; o < layer->getNbOutputs(); ++o) {
      if (!set(layer->getOutput(o), pooling ? kIn : kOut)) return false;
    }
  }
  return true;
}

#pragma GCC diagnostic pop
#endif

}  // namespace tbs::trt
