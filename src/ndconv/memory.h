// Host memory for volumes that cross to the GPU, and the memory ndconv keeps between calls.
//
// Page-locked (pinned) host memory crosses PCIe at the copy engines' full rate and lets the engine
// overlap the copies with the kernels; ordinary (pageable) memory is first copied by the CPU into
// a pinned staging buffer. Callers that filter on the GPU allocate their images here. Without a
// GPU (no driver, no device, or a build without CUDA) the same calls return ordinary memory, so
// code that uses them runs everywhere: they never throw for lack of a driver.
//
// ITK-free and CUDA-free: any C++17 caller can use it.
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace ndconv {

/// The memory pinned_allocate is asked for.
enum class HostMemory {
  /// Page-locked where CUDA can provide it. The first such allocation of a process creates the CUDA
  /// context (about 0.3 s with a GPU), or waits for a start-up under way (warm_up_cuda_async).
  Pinned,
  /// Ordinary memory, without asking CUDA: for data that may never reach a GPU.
  Ordinary,
};

/// `bytes` of host memory, aligned to at least 64 bytes: pinned where `kind` asks for it and CUDA
/// can provide it, else ordinary memory. Returns nullptr for 0 bytes; throws std::bad_alloc when
/// neither is available. `pinned`, when given, receives which kind it is. Free it with
/// pinned_free.
void* pinned_allocate(std::size_t bytes, bool* pinned = nullptr,
                      HostMemory kind = HostMemory::Pinned);

/// Frees memory from pinned_allocate (nullptr is ignored). Never throws.
void pinned_free(void* p) noexcept;

/// Whether [p, p + bytes) lies in page-locked host memory (from pinned_allocate, or registered or
/// allocated through CUDA by the caller). False without a GPU.
bool is_pinned(const void* p, std::size_t bytes);

/// Frees the device buffers and pinned staging buffers the GPU backend keeps between calls (they
/// let repeated calls allocate nothing; their total is bounded, see docs/design.md), and destroys
/// the idle CUDA streams and events it keeps. Calls running at the same time keep theirs. Never
/// throws.
void release_cached_memory() noexcept;

/// Memory kept between calls, for reports and tests.
struct CachedMemory {
  std::size_t device_bytes = 0;          ///< idle device buffers, all devices
  std::size_t pinned_staging_bytes = 0;  ///< idle pinned staging buffers
};
CachedMemory cached_memory() noexcept;

/// An owning array of `size()` elements of T in memory from pinned_allocate. T must be trivially
/// copyable (float, uint8_t, ...): the elements are not initialised.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  // In the body, not the initialiser list: pinned_'s default initialiser runs after data_'s and
  // would overwrite what pinned_allocate reported.
  explicit PinnedBuffer(std::size_t count, HostMemory kind = HostMemory::Pinned) {
    data_ = static_cast<T*>(pinned_allocate(count * sizeof(T), &pinned_, kind));
    size_ = count;
  }
  ~PinnedBuffer() { pinned_free(data_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        pinned_(std::exchange(o.pinned_, false)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      pinned_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      pinned_ = std::exchange(o.pinned_, false);
    }
    return *this;
  }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Whether the memory is page-locked (false without a GPU).
  bool pinned() const { return pinned_; }
  T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  bool pinned_ = false;
};

}  // namespace ndconv
