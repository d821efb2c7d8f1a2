// Host <-> device staging shared by the filter families that work on whole volumes
// (src/cuda/median/, src/cuda/recursive_gaussian/): device buffers freed on every path out, and a
// volume uploaded from or downloaded into a possibly strided host view, every call checked.
#pragma once

#include <chrono>
#include <vector>

#include "core/seconds_since.h"
#include "cuda/check.h"
#include "ndconv/types.h"

namespace ndconv::cuda_filters {

template <typename T>
struct DeviceBuffer {
  T* data = nullptr;
  explicit DeviceBuffer(size_t count) { NDCONV_CUDA_CHECK(cudaMalloc(&data, count * sizeof(T))); }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/// Calls f(offset in the view, index in a contiguous copy) for every voxel.
template <typename T, typename F>
void for_each_element(const BasicVolumeView<T>& v, F f) {
  size_t i = 0;
  for (int64_t t = 0; t < v.extent[3]; ++t)
    for (int64_t z = 0; z < v.extent[2]; ++z)
      for (int64_t y = 0; y < v.extent[1]; ++y)
        for (int64_t x = 0; x < v.extent[0]; ++x)
          f(x * v.stride[0] + y * v.stride[1] + z * v.stride[2] + t * v.stride[3], i++);
}

/// Copies `v` into `device` (voxel_count floats, x fastest).
inline void upload(const ConstVolumeView& v, float* device) {
  const size_t bytes = static_cast<size_t>(v.voxel_count()) * sizeof(float);
  if (v.is_contiguous()) {
    NDCONV_CUDA_CHECK(cudaMemcpy(device, v.data, bytes, cudaMemcpyHostToDevice));
    return;
  }
  std::vector<float> copy(static_cast<size_t>(v.voxel_count()));
  for_each_element(v, [&](int64_t offset, size_t i) { copy[i] = v.data[offset]; });
  NDCONV_CUDA_CHECK(cudaMemcpy(device, copy.data(), bytes, cudaMemcpyHostToDevice));
}

/// Copies `device` (contiguous) into `v`.
inline void download(const float* device, const VolumeView& v) {
  const size_t bytes = static_cast<size_t>(v.voxel_count()) * sizeof(float);
  if (v.is_contiguous()) {
    NDCONV_CUDA_CHECK(cudaMemcpy(v.data, device, bytes, cudaMemcpyDeviceToHost));
    return;
  }
  std::vector<float> copy(static_cast<size_t>(v.voxel_count()));
  NDCONV_CUDA_CHECK(cudaMemcpy(copy.data(), device, bytes, cudaMemcpyDeviceToHost));
  for_each_element(v, [&](int64_t offset, size_t i) { v.data[offset] = copy[i]; });
}

using detail::seconds_since;

/// Selects `device` and returns its name.
inline std::string select_device(int device) {
  NDCONV_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop;
  NDCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

/// Waits for the work queued since `compute_start`, then downloads `result` into `output`; the
/// report gets both times.
inline void finish_and_download(const float* result, const VolumeView& output,
                                std::chrono::steady_clock::time_point compute_start,
                                RunReport& report) {
  NDCONV_CUDA_CHECK(cudaDeviceSynchronize());
  report.seconds_compute = seconds_since(compute_start);
  const auto t0 = std::chrono::steady_clock::now();
  download(result, output);
  report.seconds_download = seconds_since(t0);
}

}  // namespace ndconv::cuda_filters
