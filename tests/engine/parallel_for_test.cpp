// The CPU backend's work sharing (src/core/parallel_for.h): every item exactly once, exceptions
// from any thread reach the caller after all threads are joined, abort through the callback;
// the parked worker threads shared by calls from several threads, from inside a body and from a
// forked child.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Calls from several threads at once, with calls from inside their bodies and varying thread
// counts: one of them has the parked workers at a time, the others start their own.
TEST(ParallelFor, ConcurrentAndNestedCalls) {
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 40; ++round) {
        const int threads = 1 + (c + round) % 5;
        std::vector<std::atomic<int>> hits(97);
        parallel_for(threads, 97,
                     [&](int64_t begin, int64_t end, int worker) {
                       if (worker < 0 || worker >= threads)
                         ++wrong;
                       for (int64_t i = begin; i < end; ++i) {
                         std::atomic<int> inner{0};
                         if (i % 13 == 0)
                           parallel_for(
                               3, 7,
                               [&](int64_t b, int64_t e, int) { inner += static_cast<int>(e - b); },
                               {});
                         if (i % 13 == 0 && inner != 7)
                           ++wrong;
                         ++hits[i];
                       }
                     },
                     {});
        for (const std::atomic<int>& h : hits)
          wrong += h != 1;
      }
    });
  for (std::thread& t : callers)
    t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A child forked after the workers were parked has none of them: it starts a pool of its own.
TEST(ParallelFor, ForkedChildRunsItsOwnWorkers) {
  parallel_for(4, 100, [](int64_t, int64_t, int) {}, {});  // the parent's pool is parked
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a hang fails the test instead of holding it up
    std::atomic<int> count{0};
    parallel_for(4, 1000, [&](int64_t b, int64_t e, int) { count += static_cast<int>(e - b); }, {});
    _exit(count == 1000 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(ParallelFor, ThreadCount) {
  EXPECT_EQ(resolve_thread_count(3), 3);
  EXPECT_GE(resolve_thread_count(0), 1);
  EXPECT_THROW(resolve_thread_count(-1), InvalidArgument);
}

}  // namespace
}  // namespace ndconv::core
