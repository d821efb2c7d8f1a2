#include "engine/first_touch.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu/parallel_for.h"

namespace ndconv::detail {

namespace {

// Asks for the range's whole 2 MiB pages to be backed by transparent huge pages where the system
// leaves that to the program (THP "madvise"): one fault then maps 512 pages, so that a 328 MB
// buffer takes about 160 faults instead of 80 000. A hint: where THP is off or none is free, the
// pages stay 4 KiB and nothing fails.
void prefer_huge_pages(void* p, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1),
                       last = (begin + bytes) & ~(kHuge - 1);
  if (last > first)
    (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace

void touch_pages(void* p, std::size_t bytes, int threads) noexcept {
  constexpr std::size_t kPage = 4096, kMinBytes = std::size_t{8} << 20, kChunk = 512 * kPage;
  if (p == nullptr || bytes < kMinBytes)
    return;
  prefer_huge_pages(p, bytes);
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

void copy_on_all_cores(void* dst, const void* src, std::size_t bytes, int threads) {
  const int64_t size = static_cast<int64_t>(bytes);
  const int useful = static_cast<int>(
      std::min<int64_t>(cpu::resolve_thread_count(threads), size / (int64_t{1} << 20)));
  if (useful <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const int64_t pieces = int64_t{useful} * 4;
  cpu::parallel_for(
      useful, pieces,
      [&](int64_t begin, int64_t end, int) {
        const int64_t b0 = size * begin / pieces, b1 = size * end / pieces;
        std::memcpy(static_cast<char*>(dst) + b0, static_cast<const char*>(src) + b0,
                    static_cast<std::size_t>(b1 - b0));
      },
      cpu::ProgressSpan{});
}

}  // namespace ndconv::detail
