// When a dense filter takes the tensor cores (tensor_dense_kernel.cuh): a member of
// cuda_backend::Tuning, read by run_dense_stored (cuda_backend.cu) through tensor_dense.h.
#pragma once

namespace ndconv::cuda_backend {

struct TensorCoreDensePolicy {
  /// false: the FP32 dense kernels always.
  bool allowed = true;
  /// The oldest devices with mma.sync m16n8k32 on 8-bit operands (compute capability 8.0).
  int min_compute_capability = 80;
  /// Output planes along z per block: of n2, n2 / 2, n2 / 4, ... (at least min_planes_per_block)
  /// the one with the least waves x planes a block reads (its outputs and the T - 1 more), the
  /// waves from the blocks the SMs hold at once (the kernel's occupancy): deeper blocks read fewer
  /// extra planes, and too few blocks leave SMs idle (H200, 256^3: 7^3 on 4 blocks an SM 0.1301 /
  /// 0.1186 / 0.1209 ms at 256 / 128 / 64 planes, the rule's 128; 11^3 on 2 blocks an SM 0.2843 /
  /// 0.2906 / 0.3073 ms, the rule's 256).
  int min_planes_per_block = 32;
  /// A fixed depth instead (the probe's and the tests' shapes); 0: the rule above.
  int planes_per_block = 0;
};

}  // namespace ndconv::cuda_backend
