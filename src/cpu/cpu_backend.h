// The multi-threaded CPU backend (src/cpu/). It is the fallback on machines without a GPU and the
// backend CI exercises.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bank_problem.h"
#include "core/problem.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cpu_backend {

/// Outputs computed per inner iteration along the last axis that the CPU backend supports.
const std::vector<int>& supported_blocking_factors();

/// What the dense driver will run for a filter of `k` taps along the last axis and
/// `taps_per_position` per position along it, `outputs` outputs along it and `nx` along x
/// (`requested`: Options::expert.outputs_per_thread): the instruction set and the rows per
/// iteration (B, or k for a ring of accumulator strips) with the rule's reason, for contiguous
/// outputs whose columns are not cut (others may take another factor).
struct RowsPlan {
  std::string isa;
  int factor = 1;
  std::string reason;
};
RowsPlan plan_rows(int requested, int64_t k, int64_t outputs, int64_t nx,
                   int64_t taps_per_position);

void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report);
/// Host memory, in bytes, that run_dense takes beyond its input and output for an output of
/// `output_extent` and a filter of `filter_extent` (volume order, `dims` axes) on contiguous
/// views: the boundary-padded copy of blocks (at most Tuning::pad_limit_bytes) or the rings'
/// windows, one per thread.
double dense_scratch_bytes(int dims, const Index& output_extent, const Index& filter_extent,
                           const Options& options);

/// run_dense on stored values (ndconv/stored.h; `problem.input` gives only the geometry),
/// converted to float on all cores first: the padded copy the dense driver makes needs them all.
void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report);
void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report);
/// The separable passes' two intermediates, kept between the calls of a caller that runs many
/// slabs of the same shape, so that they are allocated and first touched once.
struct SeparableScratch {
  std::vector<float> buffers[2];
};
void run_separable_in(SeparableScratch& scratch, const detail::SeparableProblem& problem,
                      const Options& options, RunReport& report);
/// run_separable on stored values (ndconv/stored.h; `problem.input` gives only the geometry),
/// converted to float slab by slab as the passes reach them rather than all at once.
void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report);

/// The filter bank (core/bank_problem.h): F outputs, or their weighted sum.
void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report);

/// The FP32 multiply-add ceiling of `threads` threads (0: every hardware thread) with the kernels'
/// instruction set, measured for about `seconds` (fma_peak.cpp).
struct FmaPeak {
  double multiply_adds_per_second = 0;  ///< single-precision lanes, all threads together
  const char* isa = "";
  int threads = 0;
  float checksum = 0;  ///< the loops' result, so that they are not optimised away
};
FmaPeak measure_fma_peak(int threads, double seconds);

}  // namespace ndconv::cpu_backend
