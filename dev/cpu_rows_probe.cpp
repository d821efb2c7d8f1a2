// Where the CPU rows (cpu3d_7: 160^3, dense 7^3, replicate; cpu_bank_3d: the 12-filter 7^3
// bank) lose their share of the FMA peak on a many-core host: the FMA loop's rate per thread
// pinned on 1..T CPUs and on pairs (CPU 0, CPU j) (a pair sharing a core's FMA pipes halves it),
// parallel_for's cost with nothing to do, the dense call at 1..T threads and with the rings'
// work split forced (Tuning::ring_run, ring_column), the ring kernel alone and the padding alone
// on every thread (each its own window, the share of a run), and the bank call at 1..T threads,
// with the minor page faults per call. A development probe, not a benchmark.
//   g++ -O2 -std=c++17 -I src -I build-cpu/src dev/cpu_rows_probe.cpp
//       build-cpu/src/libndconv_core.a -lpthread -o cpu_rows_probe && ./cpu_rows_probe [threads]
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/padding.h"
#include "core/parallel_for.h"
#include "core/bank_problem.h"
#include "core/problem.h"
#include "cpu/bank_kernel_set.h"
#include "cpu/isa_dispatch.h"
#include "cpu/kernel_set.h"
#include "cpu/tuning.h"
#include "ndconv/adaptive.h"
#include "ndconv/engine.h"

namespace {

using namespace ndconv;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// Runs body(worker) on `cpus.size()` threads, each pinned to its CPU; returns wall seconds.
template <typename F>
double on_cpus(const std::vector<int>& cpus, F body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  for (size_t i = 0; i < cpus.size(); ++i)
    ts.emplace_back([&, i] {
      if (cpus[i] >= 0)
        pin(cpus[i]);
      ++ready;
      while (!go.load())
        ;
      body(static_cast<int>(i));
    });
  while (ready.load() < static_cast<int>(cpus.size()))
    ;
  const auto t0 = Clock::now();
  go = true;
  for (auto& t : ts)
    t.join();
  return since(t0);
}

// GFMA/s of each thread running the FMA loop for `seconds` on `cpus`.
std::vector<double> fma_rates(const std::vector<int>& cpus, double seconds) {
  const cpu::BankKernelSet& k = cpu::bank_kernel_set(cpu::select_kernel_set().isa);
  constexpr int64_t kRounds = 100000;
  const double per = double(kRounds) * k.peak_chains * k.lanes;
  std::vector<double> rate(cpus.size());
  std::atomic<float> sink{0};
  on_cpus(cpus, [&](int i) {
    const auto t0 = Clock::now();
    int64_t n = 0;
    float s = 0;
    do {
      s += k.fma_rounds(kRounds, float(i + n));
      ++n;
    } while (since(t0) < seconds);
    rate[i] = double(n) * per / since(t0) * 1e-9;
    sink = sink + s;
  });
  return rate;
}

std::vector<int> first_cpus(int n) {
  std::vector<int> c(n);
  for (int i = 0; i < n; ++i)
    c[i] = i;
  return c;
}

template <typename F>
void median_ms(F f, int reps, double& med, double& mn, double& faults) {
  f();
  f();
  std::vector<double> t;
  const long f0 = minor_faults();
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    t.push_back(since(t0) * 1e3);
  }
  faults = double(minor_faults() - f0) / reps;
  std::sort(t.begin(), t.end());
  med = t[t.size() / 2];
  mn = t[0];
}

constexpr int64_t kN = 160, kK = 7;
const double kDenseFmas = double(kN * kN * kN) * kK * kK * kK;

struct DenseCase {
  std::vector<float> in, out, taps;
  detail::CorrelationProblem problem() {
    detail::CorrelationProblem p;
    p.input = make_view(static_cast<const float*>(in.data()), 3, Index{kN, kN, kN, 1});
    p.output = make_view(out.data(), 3, Index{kN, kN, kN, 1});
    p.filter_extent = {kK, kK, kK, 1};
    p.taps = taps.data();
    p.offset = {-kK / 2, -kK / 2, -kK / 2, 0};
    p.boundary = Boundary::Replicate;
    return p;
  }
};

DenseCase make_case() {
  DenseCase c;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  c.in.resize(kN * kN * kN);
  for (float& v : c.in)
    v = u(rng);
  c.out.assign(c.in.size(), 0.0f);
  c.taps.resize(kK * kK * kK);
  for (float& v : c.taps)
    v = u(rng);
  return c;
}

// The dense call's timeline: run_rings' window loop (dense.cpp) rebuilt here with clocks, on the
// split the rule gives (or `run` x `column`): per worker its start after the call's, its time
// padding, in the kernels and its end; the call's wall time. Replicate boundary, 160^3, 7^3.
void ring_timeline(int threads, int64_t run, int64_t column, const char* label) {
  DenseCase c = make_case();
  const cpu::KernelSet& ks = cpu::select_kernel_set();
  const int64_t row = cpu::padded_row_length(kN, kK), plane = kK * row;
  const Index n_c{kN, kN, 1, kN}, stride_c{1, kN, 0, kN * kN}, off_c{-3, -3, 0, -3};
  std::vector<float> weights(kK * kK * kK);
  for (int64_t t = 0; t < kK * kK; ++t)
    for (int64_t j3 = 0; j3 < kK; ++j3)
      weights[t * kK + j3] = c.taps[j3 * kK * kK + t];
  const int64_t columns = (kN + column - 1) / column, runs = (kN + run - 1) / run;
  const int64_t items = runs * columns;
  struct Worker {
    std::vector<float> rows;
    std::vector<int64_t> taps, row_offsets;
    double start = -1, end = 0, pad = 0, kernel = 0;
    int items = 0;
  };
  double best_wall = 1e9;
  std::vector<Worker> best;
  for (int rep = 0; rep < 7; ++rep) {
    std::vector<Worker> ws(threads);
    const auto t0 = Clock::now();
    core::parallel_for(threads, items,
                       [&](int64_t begin, int64_t end, int worker) {
                         Worker& w = ws[worker];
                         if (w.start < 0)
                           w.start = since(t0);
                         w.rows.resize((column + kK - 1) * plane);
                         w.taps.resize(kK * kK);
                         w.row_offsets.resize(kK);
                         for (int64_t item = begin; item < end; ++item) {
                           ++w.items;
                           const int64_t r = item % runs, col = item / runs;
                           const int64_t first = col * column,
                                         outputs = std::min(column, kN - first);
                           for (int64_t m1 = r * run; m1 < std::min(kN, (r + 1) * run); ++m1) {
                             const auto p0 = Clock::now();
                             for (int64_t i1 = m1 == r * run ? m1 : m1 + kK - 1; i1 < m1 + kK; ++i1)
                               for (int64_t q = 0; q < outputs + kK - 1; ++q)
                                 core::pad_row(c.in.data(), n_c, stride_c, off_c, i1, 0, first + q,
                                               kN + kK - 1, row, Boundary::Replicate,
                                               w.rows.data() + q * plane + (i1 % kK) * row);
                             for (int64_t j1 = 0; j1 < kK; ++j1) {
                               w.row_offsets[j1] = ((m1 + j1) % kK) * row;
                               for (int64_t jx = 0; jx < kK; ++jx)
                                 w.taps[j1 * kK + jx] = w.row_offsets[j1] + jx;
                             }
                             const auto k0 = Clock::now();
                             cpu::RingColumn a;
                             a.planes = w.rows.data();
                             a.plane_stride = plane;
                             a.tap_offsets = w.taps.data();
                             a.taps = kK * kK;
                             a.row_offsets = w.row_offsets.data();
                             a.rows = kK;
                             a.weights = weights.data();
                             a.nx = kN;
                             a.outputs = outputs;
                             a.dst = c.out.data() + m1 * kN + first * kN * kN;
                             a.dst_stride = kN * kN;
                             ks.ring[kK](a);
                             w.pad += std::chrono::duration<double>(k0 - p0).count();
                             w.kernel += since(k0);
                           }
                         }
                         w.end = since(t0);
                       },
                       {});
    const double wall = since(t0);
    if (wall < best_wall) {
      best_wall = wall;
      best = ws;
    }
  }
  double pad = 0, kernel = 0, last_start = 0, first_end = 1e9, last_end = 0;
  for (const Worker& w : best) {
    pad += w.pad;
    kernel += w.kernel;
    last_start = std::max(last_start, w.start);
    if (w.items > 0) {
      first_end = std::min(first_end, w.end);
      last_end = std::max(last_end, w.end);
    }
  }
  std::printf(
      "timeline T=%2d %s (%lld x %lld, %lld items): wall %.3f ms; summed over threads: padding "
      "%.2f ms, kernels %.2f ms (%.3f / %.3f ms a thread); last thread starts %.3f ms, first ends "
      "%.3f, last ends %.3f\n",
      threads, label, static_cast<long long>(run), static_cast<long long>(column),
      static_cast<long long>(items), best_wall * 1e3, pad * 1e3, kernel * 1e3, pad * 1e3 / threads,
      kernel * 1e3 / threads, last_start * 1e3, first_end * 1e3, last_end * 1e3);
  std::printf("  per thread (items, pad ms, kernel ms, end ms):");
  for (const Worker& w : best)
    std::printf(" %d/%.2f/%.2f/%.2f", w.items, w.pad * 1e3, w.kernel * 1e3, w.end * 1e3);
  std::printf("\n");
}

// The ring kernel alone, and the padding alone, each thread on its own window: `steps` ring
// columns of 160 outputs (one m1 each), the padding of `pad_rows` row-columns of 166 positions.
void ring_parts(int threads, int steps, int pad_rows, double fma_rate_all) {
  DenseCase c = make_case();
  const cpu::KernelSet& ks = cpu::select_kernel_set();
  const int64_t row = cpu::padded_row_length(kN, kK);
  const int64_t plane = kK * row, positions = kN + kK - 1;
  std::vector<float> weights(kK * kK * kK);
  for (int64_t t = 0; t < kK * kK; ++t)
    for (int64_t j3 = 0; j3 < kK; ++j3)
      weights[t * kK + j3] = c.taps[j3 * kK * kK + t];
  const Index n{kN, kN, kN, 1}, stride{1, kN, kN * kN, kN * kN * kN}, zero{0, 0, 0, 0};
  const Index n_c{kN, kN, 1, kN}, stride_c{1, kN, 0, kN * kN}, off_c{-3, -3, 0, -3};
  (void)n;
  (void)stride;
  (void)zero;
  std::vector<std::vector<float>> win(threads), outs(threads);
  for (int t = 0; t < threads; ++t) {
    win[t].assign(positions * plane, 0.5f);
    outs[t].assign(kN * kN, 0.0f);
  }
  std::vector<int64_t> tap_offsets(kK * kK), row_offsets(kK);
  for (int64_t j1 = 0; j1 < kK; ++j1) {
    row_offsets[j1] = j1 * row;
    for (int64_t jx = 0; jx < kK; ++jx)
      tap_offsets[j1 * kK + jx] = j1 * row + jx;
  }
  auto kernel = [&](int t) {
    cpu::RingColumn a;
    a.planes = win[t].data();
    a.plane_stride = plane;
    a.tap_offsets = tap_offsets.data();
    a.taps = kK * kK;
    a.row_offsets = row_offsets.data();
    a.rows = kK;
    a.weights = weights.data();
    a.nx = kN;
    a.outputs = kN;
    a.dst = outs[t].data();
    a.dst_stride = kN;
    for (int s = 0; s < steps; ++s)
      ks.ring[kK](a);
  };
  auto pad = [&](int t) {
    for (int i1 = 0; i1 < pad_rows; ++i1)
      for (int64_t q = 0; q < positions; ++q)
        core::pad_row(c.in.data(), n_c, stride_c, off_c, (t * 10 + i1) % kN, 0, q, kN + kK - 1, row,
                      Boundary::Replicate, win[t].data() + q * plane + (i1 % kK) * row);
  };
  // The same rows with the source rows two positions ahead prefetched.
  auto pad_prefetch = [&](int t) {
    for (int i1 = 0; i1 < pad_rows; ++i1) {
      const int64_t y = std::clamp<int64_t>((t * 10 + i1) % kN - 3, 0, kN - 1);
      for (int64_t q = 0; q < positions; ++q) {
        const int64_t z = std::clamp<int64_t>(q + 2 - 3, 0, kN - 1);
        const float* ahead = c.in.data() + y * kN + z * kN * kN;
        for (int64_t v = 0; v < kN; v += 16)
          __builtin_prefetch(ahead + v);
        core::pad_row(c.in.data(), n_c, stride_c, off_c, (t * 10 + i1) % kN, 0, q, kN + kK - 1, row,
                      Boundary::Replicate, win[t].data() + q * plane + (i1 % kK) * row);
      }
    }
  };
  std::vector<int> unpinned(threads, -1);
  double best_k = 1e9, best_p = 1e9, best_pp = 1e9;
  for (int r = 0; r < 5; ++r) {
    best_k = std::min(best_k, on_cpus(unpinned, kernel));
    best_p = std::min(best_p, on_cpus(unpinned, pad));
    best_pp = std::min(best_pp, on_cpus(unpinned, pad_prefetch));
  }
  std::printf(
      "ring parts T=%2d: padding with the rows 2 positions ahead prefetched %.2f us per "
      "row-column\n",
      threads, best_pp * 1e6 / pad_rows);
  const double fmas = double(threads) * steps * double(kN + kK - 1) * kN * kK * kK * kK;
  std::printf(
      "ring parts T=%2d: kernel %d columns/thread %.3f ms (%.1f GFMA/s incl. the 6 extra "
      "positions, %.1f%% of the FMA loop's %.1f), padding %d row-columns/thread %.3f ms "
      "(%.2f us per row-column)\n",
      threads, steps, best_k * 1e3, fmas / best_k * 1e-9, 100 * fmas / best_k * 1e-9 / fma_rate_all,
      fma_rate_all, pad_rows, best_p * 1e3, best_p * 1e6 / pad_rows);
}

// A persistent pool: workers wait on a generation counter; run() hands each its index and waits
// for all. Only to measure what starting and joining threads per call costs against it.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int w = 1; w < threads; ++w)
      workers_.emplace_back([this, w] { loop(w); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(m_);
      quit_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (auto& t : workers_)
      t.join();
  }
  template <typename F>
  void run(F f) {
    body_ = f;
    pending_ = static_cast<int>(workers_.size());
    {
      std::lock_guard<std::mutex> l(m_);
      ++generation_;
    }
    cv_.notify_all();
    body_(0);
    while (pending_.load() > 0)
      ;
  }

 private:
  void loop(int w) {
    int64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return generation_ != seen; });
        seen = generation_;
        if (quit_)
          return;
      }
      body_(w);
      --pending_;
    }
  }
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_;
  int64_t generation_ = 0;
  bool quit_ = false;
  std::atomic<int> pending_{0};
  std::function<void(int)> body_;
};

}  // namespace

int main(int argc, char** argv) {
  const int max_threads = argc > 1 ? std::atoi(argv[1]) : int(std::thread::hardware_concurrency());
  const std::string only = argc > 2 ? argv[2] : "all";
  std::printf("hardware_concurrency %u, kernels %s\n", std::thread::hardware_concurrency(),
              cpu::select_kernel_set().isa);
  std::vector<int> counts;
  for (int t = 1; t < max_threads; t *= 2)
    counts.push_back(t);
  counts.push_back(max_threads);
  std::vector<double> all_rate(max_threads + 1, 0);

  if (only == "all" || only == "fma") {
    for (int t : counts) {
      const std::vector<double> r = fma_rates(first_cpus(t), 0.3);
      double sum = 0, lo = 1e9, hi = 0;
      for (double v : r) {
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      all_rate[t] = sum;
      std::printf("fma pinned T=%2d: %.1f GFMA/s total, per thread %.1f (min %.1f max %.1f)\n", t,
                  sum, sum / t, lo, hi);
    }
    const double alone = fma_rates({0}, 0.2)[0];
    std::printf("fma pairs (cpu0 alone %.1f): ", alone);
    for (int j = 1; j < max_threads; ++j) {
      const std::vector<double> r = fma_rates({0, j}, 0.15);
      std::printf("%d:%.2f ", j, (r[0] + r[1]) / (2 * alone));
    }
    std::printf(" (pair total / 2x alone; ~0.5 = SMT siblings)\n");
  }

  if (only == "all" || only == "spawn") {
    for (int t : counts) {
      std::vector<double> start(t);
      std::vector<double> call, last;
      for (int r = 0; r < 200; ++r) {
        const auto t0 = Clock::now();
        core::parallel_for(t, t,
                           [&](int64_t b, int64_t e, int) {
                             for (int64_t i = b; i < e; ++i)
                               start[i] = since(t0);
                           },
                           {});
        call.push_back(since(t0) * 1e6);
        last.push_back(*std::max_element(start.begin(), start.end()) * 1e6);
      }
      std::sort(call.begin(), call.end());
      std::sort(last.begin(), last.end());
      Pool pool(t);
      std::vector<double> pcall, plast;
      for (int r = 0; r < 200; ++r) {
        const auto t0 = Clock::now();
        pool.run([&](int w) { start[w] = since(t0); });
        pcall.push_back(since(t0) * 1e6);
        plast.push_back(*std::max_element(start.begin(), start.end()) * 1e6);
      }
      std::sort(pcall.begin(), pcall.end());
      std::sort(plast.begin(), plast.end());
      std::printf(
          "parallel_for T=%2d, %d empty items: call %.1f us (median), last item starts %.1f us; "
          "a persistent pool: call %.1f us, last starts %.1f us\n",
          t, t, call[100], last[100], pcall[100], plast[100]);
    }
  }

  if (only == "all" || only == "dense") {
    DenseCase c = make_case();
    const detail::CorrelationProblem p = c.problem();
    auto run = [&](int threads, cpu_backend::Tuning tuning, const char* label) {
      Options o;
      o.backend = Backend::Cpu;
      o.threads = threads;
      RunReport rep;
      double med, mn, faults;
      median_ms([&] { cpu_backend::run_dense(p, o, rep, tuning); }, 9, med, mn, faults);
      std::printf(
          "dense T=%2d %-22s median %.3f ms min %.3f ms  %.1f GFMA/s  faults/call %.0f  [%s]\n",
          threads, label, med, mn, kDenseFmas / med * 1e-6, faults,
          rep.notes.empty() ? "" : rep.notes[0].c_str());
    };
    for (int t : counts)
      run(t, {}, "rule");
    const int T = max_threads;
    // Splits forced (runs of m1, columns along the last axis), then the model's with other tails;
    // rounds of all of them in turn so that a slow moment of the host hits every variant.
    const std::pair<int64_t, int64_t> splits[] = {{3, 160}, {2, 160}, {5, 160}, {5, 80},
                                                  {8, 80},  {7, 54},  {5, 40},  {10, 80}};
    for (int round = 0; round < 2; ++round) {
      for (auto [r, col] : splits) {
        cpu_backend::Tuning tu;
        tu.ring_run = r;
        tu.ring_column = col;
        const std::string label = "run " + std::to_string(r) + " col " + std::to_string(col);
        run(T, tu, label.c_str());
      }
      for (double tail : {0.25, 0.5, 1.0}) {
        cpu_backend::Tuning tu;
        tu.ring_tail = tail;
        const std::string label = "tail " + std::to_string(tail).substr(0, 4);
        run(T, tu, label.c_str());
      }
    }
    for (int t : {1, T})
      ring_timeline(t, t == 1 ? 160 : 7, t == 1 ? 160 : 54, "rule's split");
    ring_timeline(T, 3, 160, "main's split");
    const double fma_all = all_rate[T] > 0 ? all_rate[T] : 1;
    for (int t : counts)
      if (t == 1 || t == T)
        ring_parts(t, 10, 16, t == T ? fma_all : (all_rate[1] > 0 ? all_rate[1] : 1));
  }

  if (only == "all" || only == "bw") {
    // Memory bandwidth of this many threads: each copies its slice of 256 MiB and writes its
    // slice of another (first touched before), best of 5.
    const int64_t n = int64_t{64} << 20;
    std::vector<float> a(n, 1.0f), b(n, 0.0f);
    for (int t : counts) {
      std::vector<int> unpinned(t, -1);
      double copy = 1e9, fill = 1e9;
      for (int r = 0; r < 5; ++r) {
        copy = std::min(copy, on_cpus(unpinned, [&](int w) {
                          const int64_t begin = n * w / t, end = n * (w + 1) / t;
                          std::copy(a.data() + begin, a.data() + end, b.data() + begin);
                        }));
        fill = std::min(fill, on_cpus(unpinned, [&](int w) {
                          const int64_t begin = n * w / t, end = n * (w + 1) / t;
                          std::fill(b.data() + begin, b.data() + end, float(r));
                        }));
      }
      std::printf("memory T=%2d: copy %.1f GB/s (read + written), fill %.1f GB/s\n", t,
                  2.0 * n * 4 / copy * 1e-9, n * 4.0 / fill * 1e-9);
    }
  }

  if (only == "all" || only == "bank") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> in(kN * kN * kN), taps(12 * kK * kK * kK);
    for (float& v : in)
      v = u(rng);
    for (float& v : taps)
      v = u(rng);
    std::vector<std::vector<float>> outs(12, std::vector<float>(in.size()));
    std::vector<VolumeView> views;
    for (auto& o : outs)
      views.push_back(make_view(o.data(), 3, Index{kN, kN, kN, 1}));
    FilterBank bank;
    bank.dims = 3;
    bank.extent = {kK, kK, kK, 1};
    bank.count = 12;
    bank.taps = taps.data();
    const ConstVolumeView iv =
        make_view(static_cast<const float*>(in.data()), 3, Index{kN, kN, kN, 1});
    auto run = [&](int t, int b) {
      Options o;
      o.backend = Backend::Cpu;
      o.operation = Operation::Correlation;
      o.boundary = Boundary::Zero;
      o.threads = t;
      o.expert.outputs_per_thread = b;
      RunReport rep;
      double med, mn, faults;
      median_ms([&] { rep = filter_bank(iv, bank, views, o); }, 5, med, mn, faults);
      std::printf(
          "bank T=%2d B=%d median %.2f ms min %.2f ms  %.1f GFMA/s  faults/call %.0f  [%s]\n", t,
          rep.outputs_per_thread, med, mn, 12 * kDenseFmas / med * 1e-6, faults,
          rep.notes.empty() ? "" : rep.notes.back().c_str());
    };
    for (int t : counts)
      run(t, 0);
    run(max_threads, 2);
    run(max_threads, 4);
    // The same work with every output plane along z written to one plane (z stride 0), which
    // stays in the cache: the bank without its 12 x 16 MiB of output traffic to memory.
    std::vector<VolumeView> full = views;
    for (VolumeView& v : views)
      v.stride[2] = 0;
    std::printf("bank, outputs' z stride 0 (one plane per filter, in cache):\n");
    run(max_threads, 0);
    if (max_threads > 1)
      run(max_threads / 2, 0);
    views = full;
  }
  return 0;
}
