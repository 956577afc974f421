#pragma once
#include <napi.h>

namespace tbs {

// redirectStderrToFile(path): makes file descriptor 2 of this process the file at `path`
// (created 0600, appended to, never followed through a symlink). Why native: what a dying worker
// prints last (libstdc++'s "terminate called…", glibc's abort message, a sanitizer report) is
// written by native code straight to fd 2, and Electron drops a utility process's stdout/stderr
// listeners in the same turn it emits 'exit', so a pipe loses those lines. Bytes written to a file
// are in the kernel the moment write() returns and survive any crash; the launcher reads the tail.
Napi::Value RedirectStderrToFile(Napi::CallbackInfo const& info);

}  // namespace tbs
