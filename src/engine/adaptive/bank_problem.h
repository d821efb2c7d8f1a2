// The contract between the filter bank's front end (bank_front.cpp) and the CPU bank driver
// (src/cpu/bank.cpp): as problem.h's CorrelationProblem, with F filters and either F outputs or
// one weighted sum.
#pragma once

#include <vector>

#include "engine/problem.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"

namespace ndconv::detail {

struct BankProblem {
  ConstVolumeView input;
  Index filter_extent{1, 1, 1, 1};
  int count = 0;
  const float* taps = nullptr;  ///< count filters, correlation order, contiguous, x fastest
  Index offset{0, 0, 0, 0};
  Boundary boundary = Boundary::Zero;
  Index output_extent{1, 1, 1, 1};
  std::vector<VolumeView> outputs;       ///< one per filter, or empty for the weighted sum
  std::vector<ConstVolumeView> weights;  ///< one per filter for the weighted sum
  VolumeView sum_output;                 ///< the weighted sum
};

/// The problem of filtering `input` with `bank` under `options`, checked as filter_bank checks it
/// (the taps flipped into `flipped` for a convolution), without outputs or weights.
BankProblem prepare_bank(const ConstVolumeView& input, const FilterBank& bank,
                         const Options& options, std::vector<float>& flipped);

/// Chooses the backend as the engine does (Options::backend, cuda_status()): fills the report's
/// backend, reason and device name; throws InvalidArgument when CUDA is requested but unusable.
/// With a `filter_extent` (of a `dims`-dimensional bank), a GPU that cannot run that bank
/// (cuda_bank::bank_cannot_implement) gives the CPU, or the error where CUDA is requested.
void choose_bank_backend(const Options& options, RunReport& report,
                         const Index* filter_extent = nullptr, int dims = 0);

/// Runs `problem` on the backend choose_bank_backend picks: the GPU bank when one is usable and
/// the build has CUDA, else the CPU bank.
RunReport run_bank_problem(const BankProblem& problem, const Options& options);

}  // namespace ndconv::detail

namespace ndconv::cpu_backend {

void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report);

}  // namespace ndconv::cpu_backend
