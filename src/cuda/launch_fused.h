// The fused separable kernel's launcher (src/cuda/launch_fused.cu), called by
// launch_separable_device: its can_implement check and its launch in one call, so that the caller
// either gets a launched kernel or the reason it runs the pass-by-pass path instead.
#pragma once

#include <string>

#include "engine/cuda_backend.h"
#include "engine/problem.h"

namespace ndconv::cuda_backend {

/// Enqueues the fused x/y/z kernel for `p` (device pointers) on `stream` and fills `plan` when it
/// can implement the problem: 2D, 3D or 4D without a t filter (fused_plan.h), shared memory within
/// the device's opt-in limit, at least one resident block, no spills. Otherwise enqueues nothing,
/// sets `why_not` and returns false. CUDA failures throw CudaError.
bool launch_fused_separable(const detail::SeparableProblem& p, int device, void* stream,
                            LaunchPlan& plan, std::string& why_not);

}  // namespace ndconv::cuda_backend
