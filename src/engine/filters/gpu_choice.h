// The backend choice of the filters with a GPU kernel of their own (median, recursive Gaussian):
// the GPU when the options allow it, a device is usable and the work fits in its free memory;
// otherwise the CPU under Auto (the reason in the report), and an error when the caller insisted
// on the GPU.
#pragma once

#include <string>

#include "ndconv/engine.h"

namespace ndconv::filters {

/// `what` names the filter in messages ("median"); `device_bytes` is the device memory the run
/// needs; `kernel_why` is non-empty when the kernel cannot take this request (and says why).
inline bool use_gpu(const char* what, const Options& options, double device_bytes,
                    const std::string& kernel_why, RunReport& report) {
  if (options.backend == Backend::Cpu) {
    report.backend_reason = "CPU requested";
    return false;
  }
  std::string why = "ndconv was built without CUDA support";
#ifdef NDCONV_HAVE_CUDA
  const CudaStatus status = cuda_status();
  const int d = options.cuda_device;
  if (!status.usable) {
    why = status.reason;
  } else if (d < 0 || d >= static_cast<int>(status.devices.size())) {
    why = "no CUDA device " + std::to_string(d);
  } else if (!kernel_why.empty()) {
    why = kernel_why;
  } else if (static_cast<double>(status.devices[d].free_memory) < device_bytes) {
    why = "the volume does not fit in the GPU's free memory";
  } else {
    report.backend_reason =
        std::string(options.backend == Backend::Cuda ? "CUDA requested" : "GPU found") +
        ": device " + std::to_string(d) + " (" + status.devices[d].name + ")";
    return true;
  }
#else
  (void)device_bytes;
  (void)kernel_why;
#endif
  if (options.backend == Backend::Cuda)
    throw InvalidArgument(std::string("the GPU ") + what + " cannot run: " + why);
  report.backend_reason = std::string("the ") + what + " on the CPU: " + why;
  return false;
}

}  // namespace ndconv::filters
