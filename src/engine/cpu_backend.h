// The multi-threaded CPU backend (src/cpu/). It is the fallback on machines without a GPU and the
// backend CI exercises.
#pragma once

#include "engine/problem.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cpu_backend {

/// Outputs computed per inner iteration along the last axis that the CPU backend supports.
const std::vector<int>& supported_blocking_factors();

void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report);
/// run_dense on stored values (ndconv/stored.h; `problem.input` gives only the geometry),
/// converted to float on all cores first: the padded copy the dense driver makes needs them all.
void run_dense_stored(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, RunReport& report);
void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report);
/// run_separable on stored values (ndconv/stored.h; `problem.input` gives only the geometry),
/// converted to float slab by slab as the passes reach them rather than all at once.
void run_separable_stored(const detail::SeparableProblem& problem, const StoredVolumeView& input,
                          const Options& options, RunReport& report);

}  // namespace ndconv::cpu_backend
