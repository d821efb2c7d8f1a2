// The blocked kernel's launcher (blocked_thread.h): its KO choice (the rule of cuda/ko_rule.h over
// the compiled instantiations' resources), dense launches, and the passes that separable filters
// run on it (separable/separable_launch.cu calls these; it instantiates none of this family's
// kernels).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "cuda/ko_rule.h"
#include "cuda/launch.h"
#include "cuda/uploaded_taps.h"
#include "core/problem.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

/// Chooses KO for an axis of n outputs and k taps, forced (validated: InvalidArgument when not
/// compiled) or by the rule. `rows` is the number of tap rows (1 for a separable pass).
KoChoice choose_blocked_ko(int device, int forced, int64_t n, int64_t k, int64_t rows);

/// The blocked kernel on a dense problem at `outputs_per_thread` (0 = the KO rule).
LaunchPlan launch_blocked_dense(const detail::CorrelationProblem& p, int outputs_per_thread,
                                int device, cudaStream_t stream);

/// Copies taps (at most kernels::kConstantTapFloats) into this family's constant memory on
/// `stream`, for launch_blocked_pass with `constant`; skipped when they are there already. Hold
/// the lease until the passes that read them are launched (uploaded_taps.h).
TapLease blocked_upload_constant_taps(int device, const std::vector<float>& taps,
                                      cudaStream_t stream);

/// Launches one pass of the blocked kernel at a compiled `ko` on g, its taps in constant memory
/// (blocked_upload_constant_taps) or at `global_taps`; a plan of several passes describes its first
/// (shape and resources).
void launch_blocked_pass(int device, int ko, bool constant, const kernels::Geometry& g,
                         const float* in, float* out, const float* global_taps, cudaStream_t stream,
                         LaunchPlan& plan);

/// Every compiled instantiation of this family, both tap flavours (dense_kernel_variants' first
/// part).
std::vector<DenseKernelVariant> blocked_kernel_variants(int device);

}  // namespace ndconv::cuda_backend
