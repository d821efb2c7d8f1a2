#include "engine/first_touch.h"

#include <algorithm>
#include <cstdint>

#include "cpu/parallel_for.h"

namespace ndconv::detail {

void touch_pages(void* p, std::size_t bytes, int threads) noexcept {
  constexpr std::size_t kPage = 4096, kMinBytes = std::size_t{8} << 20, kChunk = 256 * kPage;
  if (p == nullptr || bytes < kMinBytes)
    return;
  auto* bytes_begin = static_cast<volatile unsigned char*>(p);
  const auto chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  try {
    cpu::parallel_for(
        cpu::resolve_thread_count(threads), chunks,
        [&](int64_t begin, int64_t end, int) {
          const std::size_t first = static_cast<std::size_t>(begin) * kChunk;
          const std::size_t last = std::min(bytes, static_cast<std::size_t>(end) * kChunk);
          for (std::size_t b = first; b < last; b += kPage)
            bytes_begin[b] = 0;
        },
        cpu::ProgressSpan{});
  } catch (...) {
    // No thread could be started: the values are written (and the pages faulted) by the caller.
  }
}

}  // namespace ndconv::detail
