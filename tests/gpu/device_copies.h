// Host vectors to device buffers and back for the GPU tests that drive the launch-level APIs
// (adaptive_resident_gpu_test.cpp, tensor_core_bank_gpu_test.cpp). CUDA builds only.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "cuda/check.h"
#include "cuda/device_memory.h"

namespace ndconv::test {

/// A device buffer holding `host` (any element type; DeviceBuffer counts floats, so the bytes are
/// rounded up to whole floats).
template <class T>
cuda_backend::DeviceBuffer to_device(const std::vector<T>& host) {
  cuda_backend::DeviceBuffer d((host.size() * sizeof(T) + sizeof(float) - 1) / sizeof(float));
  NDCONV_CUDA_CHECK(
      cudaMemcpy(d.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

/// The first `floats` floats of `d`, after the device's work is done.
inline std::vector<float> to_host(const cuda_backend::DeviceBuffer& d, size_t floats) {
  std::vector<float> host(floats);
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  NDCONV_CUDA_CHECK(
      cudaMemcpy(host.data(), d.get(), floats * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace ndconv::test
