// The tensor-core filter bank's launch-level API (tensor_core.cu): the plan of a launch from the
// FP32 bank's, the check that a bank may take it, the launch on data already on the device (the
// bench and the GPU tests) and the run the bank's driver (bank.cu) hands an 8-bit input to.
// Declared for builds with CUDA only.
#pragma once

#include <string>
#include <vector>

#include "core/bank_problem.h"
#include "cuda/bank/bank_gpu.h"
#include "cuda/bank/tensor_core_layout.h"
#include "cuda/tuning.h"

namespace ndconv::cuda_bank {

/// The tensor-core launch over the rows of `launch`'s padded input.
TensorCoreGeometry tensor_core_geometry(const BankLaunch& launch);

/// Why the tensor-core kernel cannot run `launch` on `device` under `policy` (empty when it can):
/// the policy, the device's compute capability, the filter's shape, or the slice test on `taps`
/// (the filters contiguous, correlation order). The input's values are checked by
/// pack_padded_bytes.
std::string tensor_core_unfit(const BankLaunch& launch, const float* taps, int device,
                              const cuda_backend::TensorCoreBankPolicy& policy);

/// Enqueues the bank on `stream` (a cudaStream_t; null = the default stream) of `device` (the
/// current one), all pointers on it: `padded` (geometry.padded_bytes() bytes), `fragments` and
/// `scales` (tensor_core_weights for tensor_core_tile_rows(geometry) rows) and `outputs`
/// (geometry.count contiguous canonical volumes of geometry.voxels() floats). Checks the launch.
void launch_tensor_core_bank(const TensorCoreGeometry& geometry, int device, const uint8_t* padded,
                             const int32_t* fragments, const float* scales, float* outputs,
                             void* stream);

/// The bank's responses on the tensor cores when `launch` (no weighted sum) may take them and the
/// host's `padded` input (launch.padded_count() floats, pad_bank_input) is 8-bit: uploads, runs and
/// downloads into problem.outputs, fills the report's timings and notes and returns true.
/// Otherwise returns false, having done nothing but say why in `why_not`.
bool run_tensor_core_bank(const detail::BankProblem& problem, const BankLaunch& launch,
                          const float* padded, const Options& options, RunReport& report,
                          std::string& why_not);

}  // namespace ndconv::cuda_bank
