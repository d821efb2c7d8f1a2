// Dynamic shared memory beyond the default 48 KiB per block: a kernel may use up to the device's
// opt-in limit (227 KiB on an H100) only after cudaFuncSetAttribute raises its own limit. Both
// shared-memory kernels (the tiled dense kernel, launch.cu; the fused separable kernel,
// launch_fused.cu) raise it here, once per (device, kernel), and check their launches against
// the returned limit.
#pragma once

#include <map>
#include <mutex>
#include <utility>

#include "cuda/check.h"

namespace ndconv::cuda_backend {

/// The dynamic shared memory `kernel` may use per block on `device` (the current device): the
/// device's opt-in limit less the kernel's static shared memory, after raising the kernel's limit
/// to it on first use.
inline int opt_in_dynamic_shared_memory(int device, const void* kernel) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, int> limits;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, kernel);
  const auto it = limits.find(key);
  if (it != limits.end())
    return it->second;
  int optin = 0;
  NDCONV_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attr{};
  NDCONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const int limit = optin - static_cast<int>(attr.sharedSizeBytes);
  NDCONV_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  limits.emplace(key, limit);
  return limit;
}

}  // namespace ndconv::cuda_backend
