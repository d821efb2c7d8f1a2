// Pinned host memory, the buffer caches (buffer_pools.h) and CUDA start-up for the engine
// (cuda/cuda_host.h).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "cuda/fft/fft_launch.h"
#include "cuda/buffer_pools.h"
#include "cuda/check.h"
#include "cuda/handle_pool.h"
#include "cuda/cuda_host.h"

namespace ndconv::cuda_backend {

namespace {

// Devices whose context this process has created (bit d for device d < 64).
std::atomic<uint64_t> g_started{0};

// cudaErrorMemoryAllocation is an answer (nullptr), other failures are errors; the runtime's
// last-error state is cleared either way so that the next check does not see it.
void* device_allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  NDCONV_CUDA_CHECK(status);
  return p;
}

void* staging_allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t status = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  NDCONV_CUDA_CHECK(status);
  return p;
}

std::mutex g_caches_mutex;
// Never destroyed (see buffer_pools.h).
std::map<int, BlockCache*>& device_caches() {
  static auto* caches = new std::map<int, BlockCache*>();
  return *caches;
}

}  // namespace

BlockCache& device_cache(int device) {
  std::lock_guard<std::mutex> lock(g_caches_mutex);
  BlockCache*& cache = device_caches()[device];
  if (cache == nullptr)
    cache = new BlockCache(device_allocate, [](void* p) { cudaFree(p); });
  return *cache;
}

BlockCache& staging_cache() {
  static auto* cache = new BlockCache(staging_allocate, [](void* p) { cudaFreeHost(p); });
  return *cache;
}

Lease::Lease(BlockCache& cache, std::size_t bytes, std::size_t kept_limit, const char* what)
    : kept_limit_(kept_limit) {
  if (bytes == 0)
    return;
  const auto block = cache.take(bytes);
  if (block.first == nullptr)
    throw_cuda_error(what, cudaErrorMemoryAllocation, __FILE__, __LINE__);
  cache_ = &cache;
  data_ = block.first;
  bytes_ = block.second;
}

void* pinned_host_allocate(std::size_t bytes) noexcept {
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver, no device or no memory: the caller falls back
    return nullptr;
  }
  return p;
}

void pinned_host_free(void* p) noexcept {
  if (p != nullptr)
    cudaFreeHost(p);
}

bool host_range_pinned(const void* p, std::size_t bytes) noexcept {
  if (p == nullptr || bytes == 0)
    return false;
  for (const char* q : {static_cast<const char*>(p), static_cast<const char*>(p) + bytes - 1}) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, q) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    if (attributes.type != cudaMemoryTypeHost)
      return false;
  }
  return true;
}

void release_cached_memory() noexcept {
  std::lock_guard<std::mutex> lock(g_caches_mutex);
  for (auto& [device, cache] : device_caches())
    cache->release_idle();
  staging_cache().release_idle();
  release_idle_handles();
  release_fft_caches();
}

CachedMemory cached_memory() noexcept {
  CachedMemory m;
  std::lock_guard<std::mutex> lock(g_caches_mutex);
  for (auto& [device, cache] : device_caches())
    m.device_bytes += cache->idle_bytes();
  m.pinned_staging_bytes = staging_cache().idle_bytes();
  m.device_bytes += fft_caches().spectrum_bytes;  // the FFT path's cached filter spectra
  return m;
}

bool compiled() noexcept {
  return true;
}

bool started(int device) noexcept {
  return device >= 0 && device < 64 && (g_started.load() >> device & 1u) != 0;
}

void mark_started(int device) noexcept {
  if (device >= 0 && device < 64)
    g_started.fetch_or(uint64_t{1} << device);
}

void start(int device) noexcept {
  if (cudaSetDevice(device) == cudaSuccess && cudaFree(nullptr) == cudaSuccess) {
    mark_started(device);
    return;
  }
  (void)cudaGetLastError();
}

}  // namespace ndconv::cuda_backend
