// The GPU filter bank (bank.cu), called by the bank's front end (src/engine/adaptive/
// bank_front.cpp) when the CUDA backend is chosen. Declared for builds with CUDA only.
#pragma once

#include "engine/adaptive/bank_problem.h"

namespace ndconv::cuda_bank {

/// Runs the bank problem on the GPU options.cuda_device; fills the report's timings.
void run_bank(const detail::BankProblem& problem, const Options& options, RunReport& report);

/// The rule for KO (outputs per thread along the last axis) given FP filters per pass.
int bank_outputs_per_thread(int filters_per_pass, int requested, int64_t outputs_along_axis);

}  // namespace ndconv::cuda_bank
