// A dlopen'ed library with one owner: closed when the owner goes, never twice.
#pragma once

#include <dlfcn.h>

#include <string>
#include <utility>
#include <vector>

namespace tbs::gpu {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  ~SharedLibrary() { reset(); }
  SharedLibrary(SharedLibrary const&) = delete;
  SharedLibrary& operator=(SharedLibrary const&) = delete;
  SharedLibrary(SharedLibrary&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), name_(std::move(o.name_)) {}
  SharedLibrary& operator=(SharedLibrary&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, nullptr);
      name_ = std::move(o.name_);
    }
    return *this;
  }

  // The first of `names` that loads (RTLD_LOCAL: its symbols stay out of the process's global
  // namespace); an empty library with `error` listing what each attempt said otherwise.
  static SharedLibrary openFirst(std::vector<std::string> const& names, std::string& error) {
    SharedLibrary lib;
    std::string tried;
    for (auto const& n : names) {
      if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        lib.handle_ = h;
        lib.name_ = n;
        return lib;
      }
      char const* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e != nullptr ? e : n.c_str());
    }
    error = tried;
    return lib;
  }

  explicit operator bool() const { return handle_ != nullptr; }
  std::string const& name() const { return name_; }

  // The symbol as a function pointer of type F, or null.
  template <class F>
  F function(char const* symbol) const {
    return handle_ != nullptr ? reinterpret_cast<F>(dlsym(handle_, symbol)) : nullptr;
  }

  // Keep the library loaded for the rest of the process (a driver library whose state must
  // outlive any one user).
  void leak() { handle_ = nullptr; }

 private:
  void reset() {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = nullptr;
  }
  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace tbs::gpu
