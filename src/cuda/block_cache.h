// A cache of memory blocks kept between calls, free of CUDA so that CI tests its bookkeeping: the
// CUDA backend keeps one per device for device buffers and one for pinned host staging buffers, so
// that a call in steady state allocates nothing (cudaMalloc, cudaFree and cudaHostAlloc cost
// tens of microseconds to milliseconds and synchronise the device).
//
// A released block goes back to the cache while the cache holds at most `kept_limit` idle bytes,
// else it is freed. take() reuses the smallest idle block that holds the request without wasting
// more than half of it; when the allocator fails it frees every idle block and tries once more.
// Thread-safe: several calls may run at once.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

namespace ndconv::cuda_backend {

class BlockCache {
 public:
  /// `allocate(bytes)` returns a block or nullptr when out of memory (other failures throw);
  /// `free(block)` never throws.
  BlockCache(std::function<void*(std::size_t)> allocate, std::function<void(void*)> free)
      : allocate_(std::move(allocate)), free_(std::move(free)) {}
  ~BlockCache() { release_idle(); }
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  /// A block of at least `bytes` (> 0) and its size; {nullptr, 0} when the allocator cannot.
  std::pair<void*, std::size_t> take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = idle_.lower_bound(bytes);
      if (it != idle_.end() && it->first / 2 <= bytes) {
        const std::pair<void*, std::size_t> block{it->second, it->first};
        idle_bytes_ -= it->first;
        idle_.erase(it);
        ++reused_;
        return block;
      }
    }
    const std::size_t size = round_up(bytes);
    void* p = allocate_(size);
    if (p == nullptr) {
      release_idle();
      p = allocate_(size);
    }
    if (p == nullptr)
      return {nullptr, 0};
    std::lock_guard<std::mutex> lock(mutex_);
    ++allocated_;
    return {p, size};
  }

  /// Gives a block from take() back: kept while the idle bytes stay within `kept_limit`, else
  /// freed (the largest idle blocks first).
  void give(void* block, std::size_t bytes, std::size_t kept_limit) {
    if (block == nullptr)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.emplace(bytes, block);
    idle_bytes_ += bytes;
    trim_locked(kept_limit);
  }

  /// Frees idle blocks (largest first) until at most `kept_limit` bytes stay idle.
  void trim(std::size_t kept_limit) {
    std::lock_guard<std::mutex> lock(mutex_);
    trim_locked(kept_limit);
  }
  void release_idle() { trim(0); }

  std::size_t idle_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_bytes_;
  }
  /// Blocks obtained from the allocator / reused from the cache so far.
  std::size_t allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocated_;
  }
  std::size_t reuses() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return reused_;
  }

  /// Sizes are rounded up to 64 KiB under 1 MiB and to 1 MiB above, so that requests of nearly
  /// the same size (a volume's last chunk, a slightly different volume) share blocks.
  static std::size_t round_up(std::size_t bytes) {
    const std::size_t step =
        bytes < (std::size_t{1} << 20) ? std::size_t{1} << 16 : std::size_t{1} << 20;
    return (bytes + step - 1) / step * step;
  }

 private:
  void trim_locked(std::size_t kept_limit) {
    while (idle_bytes_ > kept_limit && !idle_.empty()) {
      const auto largest = std::prev(idle_.end());
      free_(largest->second);
      idle_bytes_ -= largest->first;
      idle_.erase(largest);
    }
  }

  std::function<void*(std::size_t)> allocate_;
  std::function<void(void*)> free_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> idle_;  // size -> block
  std::size_t idle_bytes_ = 0;
  std::size_t allocated_ = 0;
  std::size_t reused_ = 0;
};

}  // namespace ndconv::cuda_backend
