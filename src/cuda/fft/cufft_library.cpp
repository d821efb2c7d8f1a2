#include "cuda/fft/cufft_library.h"

#include <dlfcn.h>

#include <mutex>

#include "ndconv/errors.h"

namespace ndconv::cuda_backend {

namespace {

// The soname of the toolkit whose <cufft.h> the build used.
const std::string kSoname = "libcufft.so." + std::to_string(CUFFT_VER_MAJOR);

struct Loaded {
  CufftLibrary library;
  bool ok = false;
  std::string why;
};

template <typename Function>
bool resolve(void* handle, const char* name, Function& f, std::string& why) {
  f = reinterpret_cast<Function>(dlsym(handle, name));
  if (f == nullptr)
    why = kSoname + " has no " + name;
  return f != nullptr;
}

Loaded load() {
  Loaded l;
  void* handle = dlopen(kSoname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    l.why = error != nullptr ? error : (kSoname + " not found");
    return l;
  }
  CufftLibrary& f = l.library;
  l.ok = resolve(handle, "cufftCreate", f.create, l.why) &&
         resolve(handle, "cufftDestroy", f.destroy, l.why) &&
         resolve(handle, "cufftSetAutoAllocation", f.set_auto_allocation, l.why) &&
         resolve(handle, "cufftMakePlan2d", f.make_plan_2d, l.why) &&
         resolve(handle, "cufftMakePlan3d", f.make_plan_3d, l.why) &&
         resolve(handle, "cufftSetStream", f.set_stream, l.why) &&
         resolve(handle, "cufftSetWorkArea", f.set_work_area, l.why) &&
         resolve(handle, "cufftExecD2Z", f.exec_d2z, l.why) &&
         resolve(handle, "cufftExecZ2D", f.exec_z2d, l.why);
  // The handle stays open: plans made with the library live until the process ends.
  return l;
}

}  // namespace

const CufftLibrary* cufft_library(std::string* why) noexcept {
  static const Loaded loaded = load();  // thread-safe, once
  if (!loaded.ok && why != nullptr)
    *why = loaded.why;
  return loaded.ok ? &loaded.library : nullptr;
}

const CufftLibrary& cufft() {
  std::string why;
  const CufftLibrary* library = cufft_library(&why);
  if (library == nullptr)
    throw CudaError("dlopen(" + kSoname + ")", 0, "cuFFT not loadable", why, __FILE__, __LINE__);
  return *library;
}

}  // namespace ndconv::cuda_backend
