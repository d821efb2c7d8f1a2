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
#include "cuda/device_memory.h"
#include "cuda/tuning.h"

namespace ndconv::cuda_bank {

/// The tensor-core launch over the rows of `launch`'s padded input.
TensorCoreGeometry tensor_core_geometry(const BankLaunch& launch);

/// Why the tensor-core kernel cannot run `launch` on `device` under `policy` (empty when it can):
/// the policy, the device's compute capability, the filter's shape, or the slice test on `taps`
/// (the filters contiguous, correlation order); `weighted`: the weighted sum (one pass, the wide
/// tile's filters, tensor_core_cannot_implement). The input's values are checked by
/// pack_padded_bytes.
std::string tensor_core_unfit(const BankLaunch& launch, const float* taps, int device,
                              const cuda_backend::TensorCoreBankPolicy& policy,
                              bool weighted = false);

/// tensor_core_unfit under the backend's policy for options.cuda_device, or why not where
/// options.expert.tensor_cores is false.
std::string tensor_core_unfit(const BankLaunch& launch, const float* taps, const Options& options,
                              bool weighted = false);

/// Whether the bank `geometry` (its responses, not the weighted sum) runs Hopper's warpgroup MMA
/// (wgmma_bank.h) on `device` under `policy`, else mma.sync: the quadrature banks' shape (tap rows
/// of up to 8 taps, 7 x 7 of them a frame) on a device that runs the wgmma kernels. What
/// launch_tensor_core_bank runs and tensor_core_kernel_weights lays the weights out for.
bool tensor_core_takes_wgmma(const TensorCoreGeometry& geometry, int device,
                             const cuda_backend::TensorCoreBankPolicy& policy);

/// `taps` (the filters contiguous, correlation order; tensor_core_unfit empty) laid out for the
/// kernel launch_tensor_core_bank runs on `device` under the backend's policy: wgmma_weights'
/// bytes (as int32 words) for wgmma, tensor_core_weights for the mma.sync tile otherwise.
TensorCoreWeights tensor_core_kernel_weights(const TensorCoreGeometry& geometry, const float* taps,
                                             int device);
/// The same for the kernel `policy` takes (the GPU tests run both kernels on one device).
TensorCoreWeights tensor_core_kernel_weights(const TensorCoreGeometry& geometry, const float* taps,
                                             int device,
                                             const cuda_backend::TensorCoreBankPolicy& policy);
/// Bytes of tensor_core_kernel_weights(geometry, taps, device): the weights and the scales.
int64_t tensor_core_kernel_weights_bytes(const TensorCoreGeometry& geometry, int device);

/// Enqueues the bank on `stream` (a cudaStream_t; null = the default stream) of `device` (the
/// current one), all pointers on it: `padded` (geometry.padded_bytes() bytes), `fragments` and
/// `scales` (tensor_core_kernel_weights for `device`) and `outputs` (geometry.count contiguous
/// canonical volumes of geometry.voxels() floats). Checks the launch.
void launch_tensor_core_bank(const TensorCoreGeometry& geometry, int device, const uint8_t* padded,
                             const int32_t* fragments, const float* scales, float* outputs,
                             void* stream);
/// The same with the kernel `policy` takes, the weights laid out for it.
void launch_tensor_core_bank(const TensorCoreGeometry& geometry, int device,
                             const cuda_backend::TensorCoreBankPolicy& policy,
                             const uint8_t* padded, const int32_t* fragments, const float* scales,
                             float* outputs, void* stream);

/// Enqueues the weighted sum of a one-pass bank of the reconstruction's shape
/// (tensor_core_unfit(..., true) empty) on `stream`: sum (geometry.voxels() floats) = sum_f
/// weights[f * geometry.voxels() + v] times filter f's response; the other pointers as
/// launch_tensor_core_bank's, the weights laid out for tensor_core_tile_rows(geometry).
void launch_tensor_core_weighted_sum(const TensorCoreGeometry& geometry, int device,
                                     const uint8_t* padded, const int32_t* fragments,
                                     const float* scales, const float* weights, float* sum,
                                     void* stream);

/// A bank's tensor-core operands on the device, for the launches of every slab of one bank (the
/// same filters): the weights as the tile that runs the bank reads them, room for the largest
/// slab's 8-bit padded input, and the flag pack_padded_bytes_device raises.
struct DeviceTensorCoreOperands {
  cuda_backend::DeviceBuffer fragments, scales, bytes, flag;
};

/// Uploads the weights of `taps` (the filters contiguous, correlation order; tensor_core_unfit
/// empty for `launch`) laid out for the kernel that runs `launch` on `device` (`weighted`: the
/// weighted sum's, else tensor_core_kernel_weights) on `stream`, returning when done, and
/// allocates room for `max_padded_bytes` bytes of 8-bit padded input.
DeviceTensorCoreOperands upload_tensor_core_operands(const BankLaunch& launch, const float* taps,
                                                     int64_t max_padded_bytes, int device,
                                                     bool weighted, void* stream);

/// Converts the FP32 bank's padded input on the device (`padded`, launch.padded_count() floats)
/// into the 8-bit padded volume of tensor_core_geometry(launch) in operands.bytes on `stream` and
/// returns, once done, whether every value is an integer in 0..255 (pack_padded_bytes's test; if
/// not, the bytes are unspecified and the tensor cores cannot take this input).
bool pack_padded_bytes_device(const BankLaunch& launch, const float* padded,
                              DeviceTensorCoreOperands& operands, void* stream);

/// Enqueues `launch`'s responses on the tensor cores from `operands` (packed for `launch`) into
/// `outputs` (launch.count contiguous canonical volumes of launch.voxels floats) on `stream`.
void launch_tensor_core_slab(const BankLaunch& launch, int device,
                             const DeviceTensorCoreOperands& operands, float* outputs,
                             void* stream);

/// launch_tensor_core_weighted_sum of `launch` from `operands` (packed for `launch`): the weights
/// (launch.count volumes of launch.voxels floats) and `sum` on the device.
void launch_tensor_core_weighted_slab(const BankLaunch& launch, int device,
                                      const DeviceTensorCoreOperands& operands,
                                      const float* weights, float* sum, void* stream);

/// What a run's notes say of a bank on the tensor cores of `device`: the instruction, the digits,
/// the passes and tap frames of `launch`.
std::string tensor_core_note(const BankLaunch& launch, int device);

/// The structure tensor's quadrature bank over its slabs (bank_tensor.cu): on the tensor cores
/// while they can take it (tensor_core_unfit empty, each slab's padded input 8-bit), else on the
/// FP32 kernels; what ran, for the run's notes.
struct SlabBank {
  const float* taps = nullptr;  ///< bank_device_taps of the slabs' launches, on the device
  DeviceTensorCoreOperands tensor_cores;  ///< used while tensor_cores_not is empty
  std::string tensor_cores_not;           ///< why the tensor cores do not (or no longer) take it
  int on_tensor_cores = 0, on_fp32 = 0;   ///< slabs so far
  int device = 0;                         ///< options.cuda_device: the notes' instruction
};

/// A SlabBank for `slabs` of `problem` (taps on the device): tensor_core_unfit under `options`,
/// and the tensor cores' operands (the weights uploaded on `stream`, room for the largest slab's
/// 8-bit input) where it is empty.
SlabBank plan_slab_bank(const TensorSlabs& slabs, const detail::BankProblem& problem,
                        const float* taps, const Options& options, void* stream);

/// Bytes of device memory a SlabBank for `slabs` adds to the FP32 path's (0 where
/// tensor_core_unfit under `options` says the tensor cores cannot take the bank).
int64_t slab_bank_extra_bytes(const TensorSlabs& slabs, const detail::BankProblem& problem,
                              const Options& options);

/// One slab's structure tensor as launch_tensor_slab, the bank's responses on the tensor cores
/// where `bank` still takes them and the slab's padded input (`padded`, on the device) is 8-bit
/// (checked on the device, waiting for `stream`), else on the FP32 kernels.
void launch_tensor_slab(const BankLaunch& launch, int device, const float* padded, SlabBank& bank,
                        float* responses, const std::vector<double>& duals, int components,
                        float* tensor, int64_t component_stride, void* stream);

/// The notes of what ran the bank's slabs: on the tensor cores in how many, on the FP32 kernels in
/// how many and why.
std::vector<std::string> slab_bank_notes(const SlabBank& bank, const BankLaunch& launch);

/// The bank's responses on the tensor cores when `launch` (no weighted sum) may take them and the
/// host's `padded` input (launch.padded_count() floats, pad_bank_input) is 8-bit: uploads, runs and
/// downloads into problem.outputs, fills the report's timings and notes and returns true.
/// Otherwise returns false, having done nothing but say why in `why_not`.
bool run_tensor_core_bank(const detail::BankProblem& problem, const BankLaunch& launch,
                          const float* padded, const Options& options, RunReport& report,
                          std::string& why_not);

}  // namespace ndconv::cuda_bank
