// Work sharing for the CPU backend: a range of independent work items split into chunks that
// std::threads take from a shared counter. The calling thread works too and, between its
// chunks, reports progress through Options::progress; when that returns false the workers stop
// at their next chunk and the call throws ndconv::Aborted. An exception in any thread stops the
// others and is rethrown in the caller after every thread has been joined.
#pragma once

#include <cstdint>
#include <functional>

namespace ndconv::core {

/// Work items [begin, end), run by worker `worker` (0 = the calling thread, < threads).
using ChunkBody = std::function<void(int64_t begin, int64_t end, int worker)>;

struct ProgressSpan {
  const std::function<bool(double)>* callback = nullptr;  ///< may be null or empty
  double base = 0;                                        ///< fraction done before this call
  double span = 1;  ///< fraction of the whole run this call represents
};

/// Runs `body` over [0, items) on `threads` threads (the caller included).
void parallel_for(int threads, int64_t items, const ChunkBody& body, const ProgressSpan& progress);

/// Options::threads resolved: 0 means every hardware thread; negative is InvalidArgument.
int resolve_thread_count(int requested);

}  // namespace ndconv::core
