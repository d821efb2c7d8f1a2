// The CUDA backend (src/cuda/, kernels/). When ndconv is built without CUDA,
// src/cuda/cuda_unavailable.cpp implements these so that probe() says why and run_* throw.
#pragma once

#include "engine/problem.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// Never throws: no driver (cudaErrorInsufficientDriver) or no device is a normal state.
CudaStatus probe();

/// Host views in, host views out; uploads, filters (in slabs when the volume does not fit in the
/// device memory or under the cap) and downloads. Throws CudaError / InvalidArgument.
void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report);
void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report);

}  // namespace ndconv::cuda_backend
