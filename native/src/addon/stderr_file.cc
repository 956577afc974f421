#include "stderr_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tbs {

Napi::Value RedirectStderrToFile(Napi::CallbackInfo const& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "redirectStderrToFile(path: string)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string const path = info[0].As<Napi::String>().Utf8Value();
  int const fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    Napi::Error::New(env, "cannot open " + path + " for the worker's stderr: " + std::strerror(errno)).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // dup2 clears FD_CLOEXEC on the new descriptor: fd 2 stays the file in anything exec'd later.
  int const rc = ::dup2(fd, STDERR_FILENO);
  int const err = errno;
  ::close(fd);
  if (rc < 0) {
    Napi::Error::New(env, std::string("dup2 onto stderr failed: ") + std::strerror(err)).ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

}  // namespace tbs
