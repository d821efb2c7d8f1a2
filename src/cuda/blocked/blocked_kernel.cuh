// The blocked kernel's __global__ entry point: a thin wrapper that hands CUDA's built-in
// coordinates to blocked_block_thread (blocked_thread.h). Include from exactly one translation unit
// (blocked_launch.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/blocked/blocked_thread.h"
#include "kernels/geometry.h"
#include "kernels/tap_memory.cuh"

namespace ndconv::kernels {

/// CUDA's built-in coordinates (blockIdx, blockDim, threadIdx, gridDim) as plain integers.
template <typename XYZ>
__device__ __forceinline__ void xyz_to(int64_t (&v)[3], const XYZ& u) {
  v[0] = u.x;
  v[1] = u.y;
  v[2] = u.z;
}

__device__ __forceinline__ ThreadCoord thread_coord() {
  ThreadCoord c;
  xyz_to(c.block, blockIdx);
  xyz_to(c.block_dim, blockDim);
  xyz_to(c.thread, threadIdx);
  xyz_to(c.grid_dim, gridDim);
  return c;
}

/// The register-blocked kernel; kConstantTaps selects the tap memory. Launched with 128 threads
/// per block, but deliberately without __launch_bounds__: with it, ptxas (CUDA 13, sm_90) capped
/// the registers at 48-64 and spilled 16-60 bytes in 8 of the 10 instantiations; without it none
/// spills (`ndconv-perf sweep` reports each instantiation's resources).
template <int KO, bool kConstantTaps>
__global__ void blocked_kernel(Geometry g, const float* __restrict__ in, float* __restrict__ out,
                               const float* __restrict__ global_taps) {
  if constexpr (kConstantTaps) {
    blocked_block_thread<KO>(g, in, out, ConstantTaps{}, thread_coord());
  } else {
    blocked_block_thread<KO>(g, in, out, GlobalTaps{global_taps}, thread_coord());
  }
}

}  // namespace ndconv::kernels
