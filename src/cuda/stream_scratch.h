// Stream-ordered scratch memory for a launch that stages a transformed copy of its input (the
// padded input of cuda/border/pad_thread.h).
//
// Why stream-ordered: launches on different streams may run at once, so one shared scratch buffer
// would need events between them; a buffer allocated on the launch's stream and freed on it after
// the kernels that read it (cudaMallocFromPoolAsync / cudaFreeAsync) is never in use twice, and no
// host synchronisation is needed. The memory comes from a pool of ndconv's own per device, which
// keeps up to kScratchKeptBytes of what it allocated across synchronisations, so repeated
// launches reuse it instead of mapping memory anew inside the timed work; the caller's default
// pool is untouched.
// Where the device has no memory pools or the pool cannot allocate (out of memory), get() is null
// and the caller takes a path without scratch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "cuda/check.h"

namespace ndconv::cuda_backend {

/// Scratch memory the pool keeps for the next launch (a padded 512^3 float volume fits); more is
/// returned to the device at the next synchronisation.
inline constexpr uint64_t kScratchKeptBytes = uint64_t{1} << 30;

/// The scratch pool of `device`, created on first use; null when the device has no memory pools.
inline cudaMemPool_t scratch_pool(int device) {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = pools.find(device);
  if (it != pools.end())
    return it->second;
  int supported = 0;
  NDCONV_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
  cudaMemPool_t pool = nullptr;
  if (supported != 0) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    NDCONV_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    uint64_t keep = kScratchKeptBytes;
    NDCONV_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  pools.emplace(device, pool);
  return pool;
}

class StreamScratch {
 public:
  /// `floats` floats on `stream` (256-byte aligned), or none (get() null) when the pool cannot.
  StreamScratch(int device, int64_t floats, cudaStream_t stream) : stream_(stream) {
    const cudaMemPool_t pool = scratch_pool(device);
    if (pool == nullptr)
      return;
    void* p = nullptr;
    const cudaError_t status =
        cudaMallocFromPoolAsync(&p, static_cast<size_t>(floats) * sizeof(float), pool, stream);
    if (status == cudaErrorMemoryAllocation) {
      (void)
          cudaGetLastError();  // not sticky, but the runtime records it: cleared for the next check
      return;
    }
    NDCONV_CUDA_CHECK(status);
    data_ = static_cast<float*>(p);
  }
  ~StreamScratch() {
    if (data_ != nullptr)
      cudaFreeAsync(data_, stream_);  // after the kernels queued on the stream; cannot throw here
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  float* get() const { return data_; }

 private:
  cudaStream_t stream_;
  float* data_ = nullptr;
};

}  // namespace ndconv::cuda_backend
