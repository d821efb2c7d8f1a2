// RAII owners of device memory and streams, so that an exception anywhere in the backend frees
// what was allocated. Destructors never throw (a failure to free is ignored: the context is
// already broken then, and the original exception is the one worth reporting).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/check.h"

namespace ndconv::cuda_backend {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t floats) { allocate(floats); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), floats_(std::exchange(o.floats_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      floats_ = std::exchange(o.floats_, 0);
    }
    return *this;
  }

  /// Replaces the buffer by one of `floats` floats (contents undefined).
  void allocate(std::size_t floats) {
    release();
    if (floats == 0)
      return;
    void* p = nullptr;
    NDCONV_CUDA_CHECK(cudaMalloc(&p, floats * sizeof(float)));
    data_ = static_cast<float*>(p);
    floats_ = floats;
  }
  /// Grows to at least `floats` (contents lost when it grows).
  void reserve(std::size_t floats) {
    if (floats > floats_)
      allocate(floats);
  }
  float* get() const { return data_; }
  std::size_t size() const { return floats_; }

 private:
  void release() noexcept {
    if (data_)
      cudaFree(data_);
    data_ = nullptr;
    floats_ = 0;
  }
  float* data_ = nullptr;
  std::size_t floats_ = 0;
};

class Stream {
 public:
  Stream() { NDCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_)
      cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace ndconv::cuda_backend
