// RAII owners of device memory, streams and events, so that an exception anywhere in the backend
// frees what was allocated. Destructors never throw (a failure to free is ignored: the context is
// already broken then, and the original exception is the one worth reporting).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/check.h"
#include "cuda/handle_pool.h"

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

/// A non-blocking stream of the current device, taken from its pool (handle_pool.h) and given back
/// on destruction: the owner waits for the work queued on it first.
class Stream {
 public:
  Stream() {
    NDCONV_CUDA_CHECK(cudaGetDevice(&device_));
    stream_ = take_stream(device_);
  }
  ~Stream() { give_stream(device_, stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { NDCONV_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
};

enum class EventTiming { On, Off };

/// An event of the current device, with timing or without, taken from its pool (handle_pool.h) and
/// given back on destruction, once the streams it was recorded on are done.
class Event {
 public:
  explicit Event(EventTiming timing) : timing_(timing == EventTiming::On) {
    NDCONV_CUDA_CHECK(cudaGetDevice(&device_));
    event_ = take_event(device_, timing_);
  }
  ~Event() { give_event(device_, timing_, event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) const { NDCONV_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { NDCONV_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  int device_ = 0;
  bool timing_ = true;
  cudaEvent_t event_ = nullptr;
};

}  // namespace ndconv::cuda_backend
