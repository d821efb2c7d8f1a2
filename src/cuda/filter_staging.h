// Host <-> device staging shared by the filter families that work on whole volumes
// (src/cuda/median/, src/cuda/recursive_gaussian/, src/cuda/bank/): device buffers freed on every
// path out, and a volume uploaded from or downloaded into a possibly strided host view, every call
// checked.
#pragma once

#include <chrono>
#include <vector>

#include "core/seconds_since.h"
#include "core/view_copy.h"
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

/// Copies `v` into `device` (voxel_count floats, x fastest) on `stream` and waits for it (a strided
/// view is gathered on the host first).
inline void upload(const ConstVolumeView& v, float* device, cudaStream_t stream = nullptr) {
  const size_t bytes = static_cast<size_t>(v.voxel_count()) * sizeof(float);
  std::vector<float> gathered;
  const float* src = v.data;
  if (!v.is_contiguous()) {
    gathered.resize(static_cast<size_t>(v.voxel_count()));
    detail::gather(v, gathered.data());
    src = gathered.data();
  }
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(device, src, bytes, cudaMemcpyHostToDevice, stream));
  NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));  // before `gathered` goes
}

/// Copies `device` (contiguous) into `v` on `stream` and waits for it.
inline void download(const float* device, const VolumeView& v, cudaStream_t stream = nullptr) {
  const size_t bytes = static_cast<size_t>(v.voxel_count()) * sizeof(float);
  if (v.is_contiguous()) {
    NDCONV_CUDA_CHECK(cudaMemcpyAsync(v.data, device, bytes, cudaMemcpyDeviceToHost, stream));
    NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  std::vector<float> copy(static_cast<size_t>(v.voxel_count()));
  NDCONV_CUDA_CHECK(cudaMemcpyAsync(copy.data(), device, bytes, cudaMemcpyDeviceToHost, stream));
  NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  detail::scatter(copy.data(), v);
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
