// When the filter bank takes the tensor cores (tensor_core_kernel.cuh): a member of
// cuda_backend::Tuning, read by the bank's driver (bank.cu) through tensor_core_bank.h.
#pragma once

namespace ndconv::cuda_backend {

struct TensorCoreBankPolicy {
  /// false: the FP32 bank kernels always.
  bool allowed = true;
  /// The oldest devices with mma.sync m16n8k32 on 8-bit operands (compute capability 8.0).
  int min_compute_capability = 80;
  /// Hopper's warpgroup MMA (wgmma, wgmma_kernel.cuh) where the device is compute capability 9.0
  /// and the binary holds its sm_90a code; false: mma.sync there too (the reference kernel).
  bool wgmma = true;
  /// The wgmma block shape (wgmma.cu's kShapes3d, kShapes4d, timed in dev/wgmma_bank_sweep.cu)
  /// for one tap frame (3D) and several (4D).
  int wgmma_shape_3d = 0;
  int wgmma_shape_4d = 0;
  /// The slice test: the weight digits' largest loss on any tap, relative to the filter's largest
  /// tap, that the tensor cores may take: 2^-26, below the float rounding of the largest tap
  /// (2^-24 of it), so the split adds less than the FP32 path's own rounding of its taps. Four
  /// 7-bit digits lose at most 2^-22 / 127 (about 2^-29); three 2^-15 / 127, which fails.
  double max_split_error = 1.0 / (1 << 26);
};

}  // namespace ndconv::cuda_backend
