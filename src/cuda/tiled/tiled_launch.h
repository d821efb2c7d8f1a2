// The tiled kernel's launcher (tiled_thread.h, tiled_halo.h): its dispatch tables, can_implement
// checks and load decisions for dense problems, and the x passes that separable filters run on it
// (separable/separable_launch.cu calls launch_tiled_pass; it instantiates none of this family's
// kernels).
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <vector>

#include "cuda/launch.h"
#include "cuda/tuning.h"
#include "core/problem.h"
#include "kernels/geometry.h"

namespace ndconv::cuda_backend {

/// The automatic plan's tiled launch: the tiled kernel when it can implement the problem
/// (instantiation compiled for the forced KO, taps and two planes within the shared memory, no
/// spills, enough blocks per SM), else nothing launched (std::nullopt: the blocked kernel's turn).
/// A forced KO means outputs along the last axis, which the tiled kernel does not block in 2D.
std::optional<LaunchPlan> launch_auto_tiled(const detail::CorrelationProblem& p,
                                            int outputs_per_thread, int device, cudaStream_t stream,
                                            const Tuning& tuning);

/// The tiled kernel as requested (DenseKernel::Tiled), or InvalidArgument saying why it cannot
/// serve the problem.
LaunchPlan launch_requested_tiled(const detail::CorrelationProblem& p, const DenseKernelRequest& r,
                                  int device, cudaStream_t stream, const Tuning& tuning);

/// Launches a separable x pass of geometry g (tiled_pass_order's, tiled_pass_rows' `block_rows`)
/// at KO 1 with its taps at `global_taps` (upload_global_taps, at g.tap_base); a plan of several
/// passes describes its first (shape and resources).
void launch_tiled_pass(int device, int block_rows, const kernels::Geometry& g, const float* in,
                       float* out, const float* global_taps, cudaStream_t stream,
                       const Tuning& tuning, LaunchPlan& plan);

/// The tiled entries of dense_kernel_variants (its second part).
std::vector<DenseKernelVariant> tiled_kernel_variants(int device);

}  // namespace ndconv::cuda_backend
