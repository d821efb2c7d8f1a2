// ndconv/memory.h: pinned host memory with an ordinary fallback, and the caches' public controls.
// Every block from pinned_allocate is recorded with its size and kind, so that pinned_free frees it
// the right way and is_pinned answers for ranges inside it without asking CUDA.
#include "ndconv/memory.h"

#include <iterator>
#include <map>
#include <mutex>
#include <new>

#include "cuda/cuda_host.h"

namespace ndconv {

namespace {

constexpr std::align_val_t kFallbackAlignment{64};

struct Block {
  std::size_t bytes = 0;
  bool pinned = false;
};

std::mutex g_blocks_mutex;
std::map<const void*, Block>& blocks() {
  static auto* map = new std::map<const void*, Block>();  // outlives static destructors
  return *map;
}

}  // namespace

void* pinned_allocate(std::size_t bytes, bool* pinned, HostMemory kind) {
  if (pinned != nullptr)
    *pinned = false;
  if (bytes == 0)
    return nullptr;
  void* p = kind == HostMemory::Pinned ? cuda_backend::pinned_host_allocate(bytes) : nullptr;
  const bool is_pinned_block = p != nullptr;
  if (p == nullptr)
    p = ::operator new(bytes, kFallbackAlignment);  // throws std::bad_alloc
  try {
    std::lock_guard<std::mutex> lock(g_blocks_mutex);
    blocks()[p] = {bytes, is_pinned_block};
  } catch (...) {
    if (is_pinned_block)
      cuda_backend::pinned_host_free(p);
    else
      ::operator delete(p, kFallbackAlignment);
    throw;
  }
  if (pinned != nullptr)
    *pinned = is_pinned_block;
  return p;
}

void pinned_free(void* p) noexcept {
  if (p == nullptr)
    return;
  Block block;
  {
    std::lock_guard<std::mutex> lock(g_blocks_mutex);
    const auto it = blocks().find(p);
    if (it == blocks().end())
      return;  // not ours: freeing it would be undefined
    block = it->second;
    blocks().erase(it);
  }
  if (block.pinned)
    cuda_backend::pinned_host_free(p);
  else
    ::operator delete(p, kFallbackAlignment);
}

bool is_pinned(const void* p, std::size_t bytes) {
  if (p == nullptr || bytes == 0)
    return false;
  {
    std::lock_guard<std::mutex> lock(g_blocks_mutex);
    const auto& map = blocks();
    auto it = map.upper_bound(p);
    if (it != map.begin()) {
      --it;
      const char* begin = static_cast<const char*>(it->first);
      const char* q = static_cast<const char*>(p);
      if (q >= begin && q + bytes <= begin + it->second.bytes)
        return it->second.pinned;
    }
  }
  return cuda_backend::host_range_pinned(p, bytes);
}

void release_cached_memory() noexcept {
  cuda_backend::release_cached_memory();
}

CachedMemory cached_memory() noexcept {
  return cuda_backend::cached_memory();
}

}  // namespace ndconv
