// Internal additions to the low-level API of engine/cuda_backend.h, used by the backend's host
// orchestration (cuda_backend.cu).
#pragma once

#include <vector>

#include "engine/cuda_backend.h"

namespace ndconv::cuda_backend {

/// launch_separable_device with a forced KO for the passes along non-x axes (0 = the rule).
LaunchPlan launch_separable_device(const detail::SeparableProblem& p, float* scratch, int device,
                                   void* stream, int outputs_per_thread);

/// The blocked kernel's instantiations that read taps from global memory (large dense filters).
std::vector<KernelVariant> dense_variants_global_taps(int device);

}  // namespace ndconv::cuda_backend
