// The tensor-core dense filter's launch-level API (tensor_dense.cu): the check that a problem may
// take it, the launch on data already on the device (the bench and the GPU tests) and the run that
// run_dense_stored (cuda_backend.cu) hands an 8-bit input to. Declared for builds with CUDA only.
#pragma once

#include <string>

#include "core/problem.h"
#include "cuda/tensor_dense/tensor_dense_layout.h"
#include "cuda/tuning.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cuda_tensor_dense {

/// Why the tensor-core dense kernel cannot run a filter of `dims` axes and `filter_extent` on
/// `device` under `policy` (empty when it can): the policy, the device's compute capability, the
/// shape (tensor_dense_cannot_implement). The input's type is the caller's test.
std::string tensor_dense_unfit(int dims, const Index& filter_extent, int device,
                               const cuda_backend::TensorCoreDensePolicy& policy);

/// The output planes per block `policy` gives `g` on `device`.
int tensor_dense_planes_per_block(const TensorDenseGeometry& g, int device,
                                  const cuda_backend::TensorCoreDensePolicy& policy);

/// Enqueues the filter on `stream` (a cudaStream_t; null = the default stream) of `device` (the
/// current one), all pointers on it: `padded` (g.padded_bytes() bytes, tensor_dense_padded),
/// `fragments` (tensor_dense_weights' fragments), `out` (g.voxels() floats, x fastest), with
/// `planes_per_block` output planes a block (tensor_dense_planes_per_block). Checks the launch.
void launch_tensor_dense(const TensorDenseGeometry& g, const uint8_t* padded,
                         const int32_t* fragments, float scale, float* out, int planes_per_block,
                         void* stream);

/// What a run's notes say of the kernel: the instruction, the digits, the GEMM's N and K.
std::string tensor_dense_note(const TensorDenseGeometry& g, int planes_per_block);

/// The dense correlation `problem` on the tensor cores when its input (`input`: 8-bit, no scale or
/// offset) and filter may take them under `policy` and the device holds the whole volume: pads,
/// uploads, runs and downloads into problem.output, fills the report's timings and notes and
/// returns true. Otherwise returns false, having done nothing but say why in `why_not`.
bool run_tensor_dense(const detail::CorrelationProblem& problem, const StoredVolumeView& input,
                      const Options& options, const cuda_backend::TensorCoreDensePolicy& policy,
                      RunReport& report, std::string& why_not);

}  // namespace ndconv::cuda_tensor_dense
