#include "core/first_touch.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/parallel_for.h"

namespace ndconv::detail {

void touch_pages(void* p, std::size_t bytes, int threads) noexcept {
  constexpr std::size_t kPage = 4096, kMinBytes = std::size_t{8} << 20, kChunk = 256 * kPage;
  if (p == nullptr || bytes < kMinBytes)
    return;
  auto* bytes_begin = static_cast<volatile unsigned char*>(p);
  const auto chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  try {
    core::parallel_for(
        core::resolve_thread_count(threads), chunks,
        [&](int64_t begin, int64_t end, int) {
          const std::size_t first = static_cast<std::size_t>(begin) * kChunk;
          const std::size_t last = std::min(bytes, static_cast<std::size_t>(end) * kChunk);
          for (std::size_t b = first; b < last; b += kPage)
            bytes_begin[b] = 0;
        },
        core::ProgressSpan{});
  } catch (...) {
    // No thread could be started: the values are written (and the pages faulted) by the caller.
  }
}

void copy_on_all_cores(void* dst, const void* src, std::size_t bytes, int threads) {
  const int64_t size = static_cast<int64_t>(bytes);
  const int useful = static_cast<int>(
      std::min<int64_t>(core::resolve_thread_count(threads), size / (int64_t{1} << 20)));
  if (useful <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const int64_t pieces = int64_t{useful} * 4;
  core::parallel_for(
      useful, pieces,
      [&](int64_t begin, int64_t end, int) {
        const int64_t b0 = size * begin / pieces, b1 = size * end / pieces;
        std::memcpy(static_cast<char*>(dst) + b0, static_cast<const char*>(src) + b0,
                    static_cast<std::size_t>(b1 - b0));
      },
      core::ProgressSpan{});
}

}  // namespace ndconv::detail
