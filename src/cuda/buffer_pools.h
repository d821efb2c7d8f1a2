// The buffers the CUDA backend keeps between calls (block_cache.h): device buffers per device and
// pinned host staging buffers, with RAII leases that give them back. A lease must only be given
// back once no queued work uses it: the host path synchronises its streams first (Pipeline's
// destructor in cuda_backend.cu).
//
// Bounds: each device keeps at most kDeviceKeptBytes of idle buffers (less under a memory cap:
// at most the cap), the staging cache at most kStagingKeptBytes; ndconv::release_cached_memory()
// frees them all.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/block_cache.h"

namespace ndconv::cuda_backend {

/// Idle device memory kept per device between calls: the chunk buffers of several pipelined calls
/// (three sets of 8 MiB chunks take under 100 MiB), or the whole buffers of a one-pass volume up to
/// 512^3 float32 in and out.
inline constexpr std::size_t kDeviceKeptBytes = std::size_t{1} << 30;
/// Idle pinned staging memory kept between calls (pinned memory is taken from the host's RAM).
inline constexpr std::size_t kStagingKeptBytes = std::size_t{256} << 20;

/// The device buffer cache of `device` (created on first use; never destroyed, so that process
/// exit does not call into a runtime already torn down).
BlockCache& device_cache(int device);
/// The pinned host staging cache.
BlockCache& staging_cache();

/// Records that this process created a context on `device` (cuda/cuda_host.h, started()).
void mark_started(int device) noexcept;

/// A lease of `bytes` from a cache, given back on destruction with the given kept limit.
class Lease {
 public:
  Lease() = default;
  /// Throws CudaError (cudaErrorMemoryAllocation) when the cache cannot provide the block.
  Lease(BlockCache& cache, std::size_t bytes, std::size_t kept_limit, const char* what);
  ~Lease() { reset(); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  Lease(Lease&& o) noexcept
      : cache_(std::exchange(o.cache_, nullptr)),
        data_(std::exchange(o.data_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)),
        kept_limit_(o.kept_limit_) {}
  Lease& operator=(Lease&& o) noexcept {
    if (this != &o) {
      reset();
      cache_ = std::exchange(o.cache_, nullptr);
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      kept_limit_ = o.kept_limit_;
    }
    return *this;
  }
  void reset() noexcept {
    if (cache_ != nullptr && data_ != nullptr)
      cache_->give(data_, bytes_, kept_limit_);
    cache_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
  }
  float* floats() const { return static_cast<float*>(data_); }
  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  BlockCache* cache_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t kept_limit_ = 0;
};

}  // namespace ndconv::cuda_backend
