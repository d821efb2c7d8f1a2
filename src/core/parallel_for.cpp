// Chunks are small enough for about 16 per thread (load balance, progress granularity) and
// handed out through one atomic counter, so a slow thread never holds up the others. The
// worker threads are kept between calls (WorkerPool): starting and joining 15 threads cost
// 0.30 ms a call on the 16-core Xeon VM of the GPU machine, waking 15 parked ones 0.025 ms
// (dev/cpu_rows_probe.cpp), against a 3.3 ms dense 7^3 filter of 160^3.
#include "core/parallel_for.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "ndconv/errors.h"

namespace ndconv::core {

namespace {

// Parked worker threads, one set for the process. One parallel_for at a time uses it (acquire);
// a call that finds it in use (another thread's call, or a call from inside a body) starts its
// own threads as before. The threads live until the process ends; a forked child starts a pool
// of its own (its parent's threads do not exist there).
class WorkerPool {
 public:
  static WorkerPool* acquire() {
    static const bool registered = [] {
      // In the child: the parent's pool (leaked) has no threads; its mutex may have been held.
      pthread_atfork(nullptr, nullptr, [] {
        new (&instance_mutex_) std::mutex;
        instance_ = nullptr;
      });
      return true;
    }();
    (void)registered;
    std::lock_guard<std::mutex> lock(instance_mutex_);
    if (instance_ == nullptr)
      instance_ = new WorkerPool;  // never deleted: parked threads may outlive static objects
    bool idle = false;
    return instance_->busy_.compare_exchange_strong(idle, true) ? instance_ : nullptr;
  }

  /// Runs task(w) for w = 1..workers on parked threads (started on first need); may throw
  /// std::system_error when a thread cannot be started, with none of the task running.
  void start(int workers, const std::function<void(int)>& task) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (static_cast<int>(threads_.size()) < workers) {
      const int index = static_cast<int>(threads_.size()) + 1;
      // The thread waits for a generation after the current one: this call's.
      threads_.emplace_back([this, index, seen = generation_] { park(index, seen); });
    }
    task_ = &task;
    active_ = workers;
    running_ = workers;
    ++generation_;
    wake_.notify_all();
  }

  /// Waits for the tasks start() handed out, then makes the pool available again.
  void finish() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
    task_ = nullptr;
    lock.unlock();
    busy_ = false;
  }

 private:
  void park(int index, uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (index > active_)
        continue;
      const std::function<void(int)>* task = task_;
      lock.unlock();
      (*task)(index);  // the task catches its own exceptions
      lock.lock();
      if (--running_ == 0)
        done_.notify_one();
    }
  }

  static inline std::mutex instance_mutex_;
  static inline WorkerPool* instance_ = nullptr;
  std::atomic<bool> busy_{false};
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  uint64_t generation_ = 0;
  int active_ = 0;
  int running_ = 0;
};

}  // namespace

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
  // The chunk that starts at `begin`.
  auto run_range = [&](int64_t begin, int worker) {
    const int64_t end = std::min(items, begin + chunk);
    body(begin, end, worker);
    done.fetch_add(end - begin);
  };
  // One chunk; returns false when there is nothing left to do.
  auto run_chunk = [&](int worker) {
    if (stop.load(std::memory_order_relaxed))
      return false;
    const int64_t begin = next.fetch_add(chunk);
    if (begin >= items)
      return false;
    run_range(begin, worker);
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

  // The workers: parked pool threads where the pool is free, else threads of this call.
  WorkerPool* parked = threads > 1 ? WorkerPool::acquire() : nullptr;
  bool parked_running = false;
  const std::function<void(int)> task = worker_loop;
  std::vector<std::thread> pool;
  auto join_workers = [&] {
    if (parked_running) {
      parked->finish();
      parked_running = false;
      parked = nullptr;
    }
    for (std::thread& t : pool)
      t.join();
    pool.clear();
  };
  // The caller's first chunk, claimed before any worker runs: it reports progress between its
  // chunks, and parked workers wake fast enough to take every chunk of a small run first.
  const int64_t first = next.fetch_add(chunk);
  try {
    if (parked != nullptr) {
      try {
        parked->start(threads - 1, task);
        parked_running = true;
      } catch (...) {
        parked->finish();  // nothing was handed out
        parked = nullptr;
        throw;
      }
    } else {
      pool.reserve(threads - 1);
      for (int w = 1; w < threads; ++w)
        pool.emplace_back(worker_loop, w);
    }
    auto report_progress = [&] {
      if (report) {
        const double fraction = static_cast<double>(done.load()) / static_cast<double>(items);
        if (!(*progress.callback)(progress.base + progress.span * fraction)) {
          aborted = true;
          stop = true;
        }
      }
    };
    if (!stop.load(std::memory_order_relaxed)) {
      run_range(first, 0);
      report_progress();
    }
    while (run_chunk(0))
      report_progress();
    // Once more when this share of the run is complete.
    if (report && !aborted && !stop.load()) {
      join_workers();
      if (!error && !(*progress.callback)(progress.base + progress.span))
        aborted = true;
    }
  } catch (...) {
    record_error();  // the body on this thread, the callback, or thread creation failed
  }
  join_workers();
  if (error)
    std::rethrow_exception(error);
  if (aborted)
    throw Aborted();
}

}  // namespace ndconv::core
