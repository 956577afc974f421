// Configure-time check (try_compile in tests.cmake) that the stubs generated from the TensorRT
// headers found are complete: every class must be instantiable. If not, the scripted end-to-end
// test is skipped with a message instead of breaking the build.
#include "trt_stubs.h"

int main() {
  nvinfer1::apiv::StubVBuilder builder;
  nvinfer1::apiv::StubVBuilderConfig config;
  nvinfer1::apiv::StubVNetworkDefinition network;
  nvinfer1::apiv::StubVTensor tensor;
  nvinfer1::apiv::StubVOptimizationProfile profile;
  nvonnxparser::StubIParser parser;
  nvonnxparser::StubIParserError error;
  (void)builder, (void)config, (void)network, (void)tensor, (void)profile, (void)parser, (void)error;
  return 0;
}
