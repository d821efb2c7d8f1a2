// Work split over threads for the I/O layer (compression, type conversion): plain std::thread,
// no pool, since each call moves megabytes. ITK-free.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ndconv::io {

/// Threads to use for `requested` (0: all hardware threads, at least 1).
int worker_threads(int requested);

/// Runs task(i) for i in [0, count) on up to `threads` threads, each taking the next index;
/// rethrows the first exception after all threads have stopped.
template <typename Task>
void run_parallel(size_t count, int threads, const Task& task) {
  const size_t workers = std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), count);
  if (workers <= 1) {
    for (size_t i = 0; i < count; ++i)
      task(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (size_t i = next++; i < count; i = next++)
        task(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure)
        failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  if (failure)
    std::rethrow_exception(failure);
}

}  // namespace ndconv::io
