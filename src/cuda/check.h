// Every CUDA runtime call of the backend goes through NDCONV_CUDA_CHECK, which turns a failure
// into ndconv::CudaError naming the call, the error and the source line (never exit(), never a
// silent wrong result). NDCONV_CUDA_CHECK_LAUNCH follows each kernel launch.
#pragma once

#include <cuda_runtime.h>

#include "ndconv/errors.h"

namespace ndconv::cuda_backend {

[[noreturn]] inline void throw_cuda_error(const char* call, cudaError_t code, const char* file,
                                          int line) {
  throw CudaError(call, static_cast<int>(code), cudaGetErrorName(code), cudaGetErrorString(code),
                  file, line);
}

/// Gives the calling thread its current CUDA device back when it leaves scope. The backend's entry
/// points switch to Options::cuda_device; a library must not leave its caller (CuPy, PyTorch, the
/// caller's own code, which allocate on the current device) on another device.
class CallerDevice {
 public:
  CallerDevice() noexcept {
    if (cudaGetDevice(&device_) != cudaSuccess)
      device_ = -1;
  }
  ~CallerDevice() {
    if (device_ >= 0)
      (void)cudaSetDevice(device_);
  }
  CallerDevice(const CallerDevice&) = delete;
  CallerDevice& operator=(const CallerDevice&) = delete;

 private:
  int device_ = -1;
};

}  // namespace ndconv::cuda_backend

#define NDCONV_CUDA_CHECK(call)                                                            \
  do {                                                                                     \
    const cudaError_t ndconv_status_ = (call);                                             \
    if (ndconv_status_ != cudaSuccess)                                                     \
      ::ndconv::cuda_backend::throw_cuda_error(#call, ndconv_status_, __FILE__, __LINE__); \
  } while (0)

#define NDCONV_CUDA_CHECK_LAUNCH(what)                                                      \
  do {                                                                                      \
    const cudaError_t ndconv_status_ = cudaGetLastError();                                  \
    if (ndconv_status_ != cudaSuccess)                                                      \
      ::ndconv::cuda_backend::throw_cuda_error("launch of " what, ndconv_status_, __FILE__, \
                                               __LINE__);                                   \
  } while (0)
