//===- Cublas.cpp - cuBLAS, loaded with the first CUDA device -------------===//

#include "Cublas.h"

#include <dlfcn.h>

#include <cassert>
#include <mutex>
#include <string>

namespace zero::runtime::cuda {

namespace {

/// A name through the macros of cublas_v2.h: the symbol to look up.
#define ZERO_CUBLAS_SYMBOL(name) ZERO_CUBLAS_SYMBOL_TEXT(name)
#define ZERO_CUBLAS_SYMBOL_TEXT(name) #name

struct LoadedCublas {
  CublasApi api;
  Status status = Status::ok();
};

LoadedCublas load() {
  LoadedCublas loaded;
  // The soname first (the search path of the program and LD_LIBRARY_PATH),
  // then the library the build found.
  void *library = nullptr;
  std::string errors;
  for (const char *name : {ZERO_CUBLAS_SONAME, ZERO_CUBLAS_PATH}) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library)
      break;
    const char *error = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") +
              (error ? error : name);
  }
  if (!library) {
    loaded.status =
        ZERO_ERROR(kUnavailable, "cannot load cuBLAS (" + errors + ")");
    return loaded;
  }
#define ZERO_CUBLAS_RESOLVE(name)                                              \
  loaded.api.name = reinterpret_cast<decltype(loaded.api.name)>(              \
      dlsym(library, ZERO_CUBLAS_SYMBOL(name)));                               \
  if (!loaded.api.name) {                                                      \
    loaded.status = ZERO_ERROR(kUnavailable,                                   \
                               std::string("cuBLAS (") + ZERO_CUBLAS_SONAME +  \
                                   ") has no " + ZERO_CUBLAS_SYMBOL(name));    \
    return loaded;                                                             \
  }
  ZERO_CUBLAS_FUNCTIONS(ZERO_CUBLAS_RESOLVE)
#undef ZERO_CUBLAS_RESOLVE
  return loaded;
}

const LoadedCublas &getLoaded() {
  static const LoadedCublas loaded = load();
  return loaded;
}

} // namespace

StatusOr<const CublasApi *> loadCublas() {
  const LoadedCublas &loaded = getLoaded();
  if (!loaded.status.isOk())
    return loaded.status;
  return &loaded.api;
}

const CublasApi &cublas() {
  const LoadedCublas &loaded = getLoaded();
  assert(loaded.status.isOk() && "cuBLAS used before loadCublas succeeded");
  return loaded.api;
}

} // namespace zero::runtime::cuda
