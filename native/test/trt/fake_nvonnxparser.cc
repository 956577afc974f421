// A stand-in for libnvonnxparser.so, built only for tests (our own code). Signatures are those
// declared in NvOnnxParser.h (10.16). FAKE_OMIT_PARSER drops createNvOnnxParser_INTERNAL.
#include <NvOnnxParser.h>

extern "C" {

#ifndef FAKE_OMIT_PARSER
void* createNvOnnxParser_INTERNAL(void* /*network*/, void* /*logger*/, int /*version*/) noexcept { return nullptr; }
#endif

int getNvOnnxParserVersion() noexcept { return 100; }  // "0.1.0" encoded, like the 10.16 header's

}  // extern "C"
