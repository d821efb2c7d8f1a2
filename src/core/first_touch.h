// Large host buffers written for the first time, and copied, on every core.
//
// The first write to each 4 KiB page of fresh memory is a page fault in which the kernel supplies
// and zeroes the page: about 80 000 faults for a 328 MB float32 volume. std::vector's resize
// writes its values on one thread, so those faults run one after another; touching the pages on
// every core first spreads them, and the values are then written to memory already mapped.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

namespace ndconv::detail {

/// Writes one byte in every page of [p, p + bytes) on `threads` threads (0: every hardware thread)
/// when the range is large (small ranges are left alone). The bytes written are zero: for raw
/// memory about to be filled. Never throws.
void touch_pages(void* p, std::size_t bytes, int threads) noexcept;

/// Copies `bytes` from `src` to `dst` (not overlapping) on `threads` threads (0: every hardware
/// thread) when the copy is large enough for threads to pay (1 MiB per thread); the page faults of
/// fresh destination memory or a mapped source spread with it, and the copy runs at the host's
/// memory bandwidth rather than one core's.
void copy_on_all_cores(void* dst, const void* src, std::size_t bytes, int threads);

/// `v` = `n` copies of `value`; when `v` has to grow, its new memory is first touched on every
/// core (touch_pages). Its old contents are not kept.
template <typename T>
void assign_touched(std::vector<T>& v, std::size_t n, const T& value, int threads) {
  static_assert(std::is_trivially_copyable_v<T>, "for plain values");
  if (v.capacity() < n) {
    std::vector<T> fresh;
    fresh.reserve(n);
    touch_pages(fresh.data(), n * sizeof(T), threads);
    v.swap(fresh);
  }
  v.assign(n, value);
}

}  // namespace ndconv::detail
