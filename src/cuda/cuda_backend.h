// What the engine's front end calls in the CUDA backend (src/cuda/): the backend interface the
// engine owns. When ndconv is built without CUDA, src/cuda/cuda_unavailable.cpp implements it so
// that probe() says why and run_* throw. The backend's own low-level API for benchmarks, sweeps
// and tests (launch_*_device, kernel variants, Tuning) is src/cuda/launch.h.
#pragma once

#include "core/problem.h"
#include "ndconv/types.h"

namespace ndconv::cuda_backend {

/// The devices and why CUDA is usable or not. With `free_memory` each device is asked for its
/// free memory, which starts CUDA on every device (device_info); without it no context is made
/// and free_memory is 0 (free_memory_of asks the one device a run takes). Never throws: no driver
/// (cudaErrorInsufficientDriver) or no device is a normal state.
CudaStatus probe(bool free_memory = true);

/// The free memory of `device` now (starts CUDA on it). Throws CudaError.
std::size_t free_memory_of(int device);

/// Host views in, host views out; uploads, filters (in slabs when the volume does not fit in the
/// device memory or under the cap) and downloads. Throws CudaError / InvalidArgument / Aborted.
void run_dense(const detail::CorrelationProblem& problem, const Options& options,
               RunReport& report);
void run_separable(const detail::SeparableProblem& problem, const Options& options,
                   RunReport& report);

}  // namespace ndconv::cuda_backend
