// Chunks are small enough for about 16 per thread (load balance, progress granularity) and
// handed out through one atomic counter, so a slow thread never holds up the others.
#include "core/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ndconv/errors.h"

namespace ndconv::core {

int resolve_thread_count(int requested) {
  if (requested < 0) {
    throw InvalidArgument("the number of CPU threads must be 0 (all) or positive, got " +
                          std::to_string(requested));
  }
  if (requested > 0)
    return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void parallel_for(int threads, int64_t items, const ChunkBody& body, const ProgressSpan& progress) {
  if (items <= 0)
    return;
  threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, items)));
  const int64_t chunk = std::max<int64_t>(1, items / (16 * static_cast<int64_t>(threads)));
  const bool report = progress.callback != nullptr && static_cast<bool>(*progress.callback);

  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  bool aborted = false;

  auto record_error = [&] {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error)
      error = std::current_exception();
    stop = true;
  };
  // One chunk; returns false when there is nothing left to do.
  auto run_chunk = [&](int worker) {
    if (stop.load(std::memory_order_relaxed))
      return false;
    const int64_t begin = next.fetch_add(chunk);
    if (begin >= items)
      return false;
    const int64_t end = std::min(items, begin + chunk);
    body(begin, end, worker);
    done.fetch_add(end - begin);
    return true;
  };
  auto worker_loop = [&](int worker) {
    try {
      while (run_chunk(worker)) {
      }
    } catch (...) {
      record_error();
    }
  };

  std::vector<std::thread> pool;
  try {
    pool.reserve(threads - 1);
    for (int w = 1; w < threads; ++w)
      pool.emplace_back(worker_loop, w);
    while (run_chunk(0)) {
      if (report) {
        const double fraction = static_cast<double>(done.load()) / static_cast<double>(items);
        if (!(*progress.callback)(progress.base + progress.span * fraction)) {
          aborted = true;
          stop = true;
        }
      }
    }
    // Once more when this share of the run is complete: the other threads may have taken every
    // chunk before the caller got one.
    if (report && !aborted && !stop.load()) {
      for (std::thread& t : pool)
        t.join();
      pool.clear();
      if (!error && !(*progress.callback)(progress.base + progress.span))
        aborted = true;
    }
  } catch (...) {
    record_error();  // the body on this thread, the callback, or thread creation failed
  }
  for (std::thread& t : pool)
    t.join();
  if (error)
    std::rethrow_exception(error);
  if (aborted)
    throw Aborted();
}

}  // namespace ndconv::core
