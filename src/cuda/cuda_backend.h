// What the engine's front end calls in the CUDA backend (src/cuda/): the backend interface the
// engine owns. When ndconv is built without CUDA, src/cuda/cuda_unavailable.cpp implements it so
// that probe() says why and run_* throw. The backend's own low-level API for benchmarks, sweeps
// and tests (launch_*_device, kernel variants, Tuning) is src/cuda/launch.h.
#pragma once

#include "core/problem.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// Never throws: no driver (cudaErrorInsufficientDriver) or no device is a normal state.
CudaStatus probe();

/// Host views in, host views out; uploads, filters (in slabs when the volume does not fit in the
/// device memory or under the cap) and downloads. Throws CudaError / InvalidArgument / Aborted.
void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report);
void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report);

}  // namespace ndconv::cuda_backend
