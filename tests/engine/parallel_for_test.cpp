// The CPU backend's work sharing (src/core/parallel_for.h): every item exactly once, exceptions
// from any thread reach the caller after all threads are joined, abort through the callback.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <stdexcept>
#include <vector>

#include "core/parallel_for.h"
#include "ndconv/errors.h"

namespace ndconv::core {
namespace {

TEST(ParallelFor, RunsEveryItemExactlyOnce) {
  for (int threads : {1, 2, 5}) {
    for (int64_t items : {int64_t{1}, int64_t{3}, int64_t{1000}}) {
      std::vector<std::atomic<int>> hits(items);
      std::atomic<int> max_worker{0};
      parallel_for(threads, items,
                   [&](int64_t b, int64_t e, int worker) {
                     int m = max_worker.load();
                     while (worker > m && !max_worker.compare_exchange_weak(m, worker)) {
                     }
                     for (int64_t i = b; i < e; ++i)
                       ++hits[i];
                   },
                   {});
      for (int64_t i = 0; i < items; ++i)
        ASSERT_EQ(hits[i].load(), 1) << "item " << i;
      EXPECT_LT(max_worker.load(), threads);
    }
  }
  parallel_for(4, 0, [](int64_t, int64_t, int) { FAIL() << "no items, no calls"; }, {});
}

TEST(ParallelFor, ExceptionInAWorkerReachesTheCaller) {
  // Thrown by another thread: the caller's first chunk waits until a worker has thrown.
  for (int threads : {2, 4}) {
    std::atomic<bool> thrown{false};
    EXPECT_THROW(parallel_for(threads, 10000,
                              [&](int64_t, int64_t, int worker) {
                                if (worker != 0) {
                                  thrown = true;
                                  throw std::runtime_error("worker failed");
                                }
                                while (!thrown)
                                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                              },
                              {}),
                 std::runtime_error);
  }
  // Thrown by the calling thread, alone or with others (which wait for it).
  for (int threads : {1, 3}) {
    std::atomic<bool> thrown{false};
    std::atomic<int64_t> done{0};
    EXPECT_THROW(parallel_for(threads, 10000,
                              [&](int64_t b, int64_t e, int worker) {
                                if (worker == 0) {
                                  thrown = true;
                                  throw std::logic_error("caller failed");
                                }
                                while (!thrown)
                                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                done += e - b;
                              },
                              {}),
                 std::logic_error);
    EXPECT_LT(done.load(), 10000);
  }
}

TEST(ParallelFor, ProgressAbortStopsTheWorkers) {
  // The workers' chunks wait until the callback has been asked, so the caller surely runs a
  // chunk and reports; the callback's first answer is false.
  std::atomic<bool> asked{false};
  const std::function<bool(double)> stop = [&](double) {
    asked = true;
    return false;
  };
  std::atomic<int64_t> done{0};
  EXPECT_THROW(parallel_for(
                   3, 100000,
                   [&](int64_t b, int64_t e, int worker) {
                     while (worker != 0 && !asked)
                       std::this_thread::sleep_for(std::chrono::milliseconds(1));
                     done += e - b;
                   },
                   ProgressSpan{&stop, 0.0, 1.0}),
               Aborted);
  EXPECT_LT(done.load(), 100000);
  std::vector<double> fractions;
  const std::function<bool(double)> record = [&](double f) {
    fractions.push_back(f);
    return true;
  };
  parallel_for(
      1, 64, [](int64_t, int64_t, int) {}, ProgressSpan{&record, 0.5, 0.25});
  ASSERT_FALSE(fractions.empty());
  EXPECT_GT(fractions.front(), 0.5);
  EXPECT_DOUBLE_EQ(fractions.back(), 0.75);
}

TEST(ParallelFor, ThreadCount) {
  EXPECT_EQ(resolve_thread_count(3), 3);
  EXPECT_GE(resolve_thread_count(0), 1);
  EXPECT_THROW(resolve_thread_count(-1), InvalidArgument);
}

}  // namespace
}  // namespace ndconv::core
