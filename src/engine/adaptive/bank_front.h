// The filter bank's front end (bank_front.cpp), as the adaptive pipeline and the bench use it:
// the checked problem of a bank, the backend choice and the run.
#pragma once

#include <vector>

#include "core/bank_problem.h"
#include "ndconv/adaptive.h"
#include "ndconv/types.h"

namespace ndconv::detail {

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
