// When a dense filter takes the tensor cores (tensor_dense_kernel.cuh): a member of
// cuda_backend::Tuning, read by run_dense_stored (cuda_backend.cu) through tensor_dense.h.
#pragma once

namespace ndconv::cuda_backend {

struct TensorCoreDensePolicy {
  /// false: the FP32 dense kernels always.
  bool allowed = true;
  /// The oldest devices with mma.sync m16n8k32 on 8-bit operands (compute capability 8.0).
  int min_compute_capability = 80;
  /// Output planes along z per block: the largest of n2, n2 / 2, n2 / 4, ... (at least
  /// min_planes_per_block) that still gives every SM blocks_per_sm blocks; a block reads T - 1
  /// planes more than it emits, so deeper blocks waste less, and too few blocks leave SMs idle.
  int blocks_per_sm = 2;
  int min_planes_per_block = 32;
  /// A fixed depth instead (the probe's and the tests' shapes); 0: the rule above.
  int planes_per_block = 0;
};

}  // namespace ndconv::cuda_backend
