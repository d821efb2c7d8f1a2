// The GPU filter bank (bank.cu), called by the bank's front end (src/engine/adaptive/
// bank_front.cpp) when the CUDA backend is chosen. Declared for builds with CUDA only.
#pragma once

#include <string>

#include "engine/adaptive/bank_problem.h"

namespace ndconv::cuda_bank {

/// Runs the bank problem on the GPU options.cuda_device; fills the report's timings.
void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report);

/// The rule for KO (outputs per thread along the last axis): `requested` (1 or 2) or automatic (0).
int bank_outputs_per_thread(int requested, int64_t outputs_along_axis);

/// Why the GPU bank cannot run filters of this extent (empty when it can): the front end then
/// takes the CPU bank.
std::string bank_cannot_implement(const Index& filter_extent, int dims);

}  // namespace ndconv::cuda_bank
