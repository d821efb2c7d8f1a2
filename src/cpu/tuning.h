// The CPU backend's tuning values, with the defaults the engine uses; tests set them to reach
// paths that only large volumes take by default. Nothing here is read from the environment.
#pragma once

#include <cstdint>

#include "core/problem.h"
#include "ndconv/types.h"

namespace ndconv::detail {
struct BankProblem;  // core/bank_problem.h
}

namespace ndconv::cpu_backend {

struct Tuning {
  /// Largest boundary-padded copy the dense driver's blocks make at once; larger volumes are
  /// processed in slabs along the last axis: 256 MiB bounds the copy's extra memory while leaving
  /// most volumes in one slab.
  int64_t pad_limit_bytes = int64_t{256} << 20;
  /// Largest window of boundary-padded rows a thread keeps for the dense ring kernels (dense.cpp):
  /// about a core's L2 cache, which their column walk reads several times; longer columns are
  /// cut into pieces.
  int64_t ring_window_bytes = int64_t{1} << 20;
  /// The rings' padding cost in the work split's model (cpu/slab_rows.h, ring_split): one
  /// padded float costs as much time as this many of the ring kernel's multiply-adds (160^3, 7^3:
  /// 15 us a row-column of 166 rows against 121 us a column of the kernel on one thread of the
  /// GPU machine's Xeon, 10 against 91 us on the development machine; 16 threads padding at once
  /// pay more, dev/cpu_rows_probe.cpp).
  double ring_pad_cost = 40;
  /// The share of the largest ring item the split's model adds for the last thread to finish
  /// (slab_rows.h, ring_split): 0.25, 0.5 and 1 gave 2.8-3.4 ms alike on 16 Xeon threads
  /// (160^3, 7^3); 0.5 keeps 2 threads on whole columns (runs of 16 x 160, level with the rule
  /// before on the development machine).
  double ring_tail = 0.5;
  /// The rings' work split forced (0: the model's): m1 outputs per run, outputs per column along
  /// the last axis. Tests set them.
  int64_t ring_run = 0;
  int64_t ring_column = 0;
  /// Multiply-adds a worker thread must have before the run starts one more: a thread costs about
  /// 20 us to start and join, which 2^18 multiply-adds (about 25 us on one core) repay; small
  /// volumes (a 16^3 Gaussian) then run on one thread, 8x faster than on two (Python package,
  /// 2-core machine: docs/python.md).
  double min_multiply_adds_per_thread = double(1 << 18);
  /// false: the filter bank's FP32 kernels always, never the 8-bit path (cpu/bank_int8.h).
  bool bank_int8 = true;
  /// The 8-bit bank's largest run of planes as bytes per thread (the run's output planes and their
  /// halo): larger volumes are cut into more runs than threads.
  int64_t bank_int8_slab_bytes = int64_t{4} << 20;
  /// The 8-bit bank's slice test, as the GPU's tensor-core bank (cuda/tensor_core_policy.h): the
  /// weight digits' largest loss on any tap, relative to the filter's largest tap: 2^-26, below
  /// the float rounding of the largest tap.
  double bank_int8_max_split_error = 1.0 / (1 << 26);
};

/// The worker threads for `multiply_adds` of work: the requested count (0: every hardware thread),
/// fewer where each would have less than Tuning::min_multiply_adds_per_thread.
int threads_for_work(int requested, double multiply_adds, const Tuning& tuning = {});

/// cpu_backend::run_dense (cpu/cpu_backend.h) with these tuning values.
void run_dense(const detail::CorrelationProblem& problem, const Options& options, RunReport& report,
               const Tuning& tuning);

/// cpu_backend::run_bank (cpu/cpu_backend.h) with these tuning values.
void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report,
              const Tuning& tuning);

}  // namespace ndconv::cpu_backend
