// The perf library's view of the GPU: device facts, the ceilings measured at the start of a run
// (FP32 FMA peak, device copy bandwidth, host <-> device bandwidth from pageable and from pinned
// memory), device and pinned host buffers and the timing harness.
// Implemented in gpu.cu when ndconv is built with CUDA, else in gpu_unavailable.cpp, whose
// functions throw GpuUnavailable: a GPU mode never prints a number it did not measure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/device_facts.h"
#include "ndconv/errors.h"

namespace ndconv::perf {

/// No usable GPU (not compiled with CUDA, no driver, no device): the GPU modes stop with this.
class GpuUnavailable : public Error {
 public:
  using Error::Error;
};

/// A validation failed: the result differs from the CPU backend's beyond the tolerance.
class ValidationFailed : public Error {
 public:
  using Error::Error;
};

/// Median and minimum of timed repetitions, in milliseconds.
struct Timing {
  std::vector<double> samples_ms;
  double median_ms = 0;
  double min_ms = 0;
};

/// Median (mean of the two middle values for an even count) and minimum; throws on no samples.
Timing summarize(std::vector<double> samples_ms);

/// Runs `work` `warmup` times untimed, then `repetitions` times on the host clock.
Timing time_host(const std::function<void()>& work, int warmup, int repetitions);

namespace gpu {

/// Throws GpuUnavailable with the reason when the CUDA backend cannot run on `device`.
void require(int device);

/// The device's attributes, from the CUDA backend's cache (cuda/device_facts.h).
using DeviceFacts = cuda_backend::DeviceAttributes;
DeviceFacts facts(int device);

/// The device's ceilings, measured now on `device`.
struct Ceilings {
  double fma_flops = 0;         ///< FP32 FMA peak, 2 flops per FMA, FLOP/s
  double copy_bytes_per_s = 0;  ///< cudaMemcpy device to device, bytes read + written per second
  double fma_ms = 0;            ///< median time of the FMA kernel
  double copy_ms = 0;           ///< median time of the copy
  int64_t copy_bytes = 0;       ///< bytes copied per repetition (counted once)
  /// Host <-> device bandwidth of one large cudaMemcpy (host clock around the synchronous copy),
  /// from and to ordinary (pageable) and pinned (page-locked) host memory, bytes per second.
  double h2d_pageable_bytes_per_s = 0, d2h_pageable_bytes_per_s = 0;
  double h2d_pinned_bytes_per_s = 0, d2h_pinned_bytes_per_s = 0;
  /// Pinned, both directions at once (an upload and a download of host_copy_bytes each, on two
  /// streams, as a pipelined call overlaps them): bytes per second in each direction.
  double duplex_pinned_bytes_per_s = 0;
  int64_t host_copy_bytes = 0;  ///< bytes per host <-> device copy
};
Ceilings measure_ceilings(int device, int repetitions);

/// A float array in device memory (RAII).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t count);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  float* data() const { return data_; }
  std::size_t size() const { return count_; }
  void upload(const float* host, std::size_t count);
  void download(float* host, std::size_t count) const;
  /// Fills with NaN so that any element a kernel fails to write fails the validation.
  void poison();

 private:
  float* data_ = nullptr;
  std::size_t count_ = 0;
};

/// A float array in pinned (page-locked) host memory straight from cudaHostAlloc (RAII), for the
/// pinned-bandwidth ceiling: a measure of the hardware, independent of ndconv's own allocator.
class PinnedHostBuffer {
 public:
  explicit PinnedHostBuffer(std::size_t count);
  ~PinnedHostBuffer();
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  float* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  float* data_ = nullptr;
  std::size_t count_ = 0;
};

/// Times device work with CUDA events on its own stream: `warmup` untimed calls, then
/// `repetitions` timed calls, each preceded (outside the timed region) by a write to a buffer of
/// twice the L2 size when `flush_l2`, so that a volume that fits in L2 is not timed from cache.
class Timer {
 public:
  explicit Timer(int device);
  ~Timer();

  /// The stream (a cudaStream_t) the work must be enqueued on.
  void* stream() const;
  Timing time(const std::function<void(void* stream)>& work, int warmup, int repetitions,
              bool flush_l2);
  /// Blocks until the stream is idle and throws if a launch on it failed.
  void synchronize();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpu
}  // namespace ndconv::perf
