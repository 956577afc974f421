// The LD_PRELOAD dispatcher (libtbs_watch.so) alone, without TensorRT headers, over a marker
// libnvinfer (fake_plain_nvinfer.cc). Run by ctest with LD_PRELOAD set to the dispatcher.
//   inert        TBS_WATCH_SOCKET unset: the factory hands back TensorRT's object, nothing printed
//   unsupported  TBS_WATCH_SOCKET set, library version 9.0.0: TensorRT's object, one warning
//   rtld_next    dlsym(RTLD_NEXT, ...) still resolves relative to the program, not the shim
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dlfcn.h>
#include <unistd.h>

extern "C" int tbs_fake_plain_builder;
extern "C" void* createInferBuilder_INTERNAL(void*, int32_t) noexcept;

namespace {
int failures = 0;
void check(bool ok, char const* what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

// Calls the factory with stderr captured; returns what was written there.
std::string callCaptured(void** result) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  *result = createInferBuilder_INTERNAL(nullptr, 0);
  void* again = createInferBuilder_INTERNAL(nullptr, 0);  // a second builder: still one warning at most
  (void)again;
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(tmp);
  std::string text;
  char buf[512];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, tmp)) > 0;) text.append(buf, n);
  std::fclose(tmp);
  return text;
}
}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  char const* preload = std::getenv("LD_PRELOAD");
  check(preload != nullptr && std::strstr(preload, "libtbs_watch.so") != nullptr, "runs with the dispatcher preloaded");
  Dl_info info{};
  check(dladdr(reinterpret_cast<void*>(&createInferBuilder_INTERNAL), &info) != 0 && std::strstr(info.dli_fname, "libtbs_watch.so"),
        "the program's createInferBuilder_INTERNAL binds to the dispatcher");
  if (mode == "inert" || mode == "unsupported") {
    void* builder = nullptr;
    std::string err = callCaptured(&builder);
    check(builder == &tbs_fake_plain_builder, "the factory returns TensorRT's own object");
    if (mode == "inert") {
      check(err.empty(), "nothing printed without TBS_WATCH_SOCKET");
    } else {
      std::printf("stderr: %s", err.c_str());
      check(err.find("trt-build-studio: could not attach: TensorRT 90000") == 0, "one warning naming the version");
      check(err.find('\n') == err.size() - 1, "exactly one line");
    }
  } else if (mode == "rtld_next") {
    // Next after the program is the preloaded dispatcher: glibc must see the program as caller.
    void* next = dlsym(RTLD_NEXT, "dlsym");
    check(next != nullptr && dladdr(next, &info) != 0 && std::strstr(info.dli_fname, "libtbs_watch.so") != nullptr,
          "dlsym(RTLD_NEXT, \"dlsym\") from the program finds the dispatcher's dlsym");
    void* viaDefault = dlsym(RTLD_DEFAULT, "createInferBuilder_INTERNAL");
    check(viaDefault == reinterpret_cast<void*>(&createInferBuilder_INTERNAL), "RTLD_DEFAULT finds the dispatcher's factory");
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  return failures == 0 ? 0 : 1;
}
