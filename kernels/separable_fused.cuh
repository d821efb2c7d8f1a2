// The __global__ entry of the fused separable kernel (kernels/separable_fused.h): the plane loop
// with its cp.async pipeline and barriers around the per-thread phases. Included by
// src/cuda/launch_fused.cu only (taps come from global memory, staged once per block in shared
// memory, so this header needs none of kernels.cuh's constant memory).
#pragma once

#include <cuda_runtime.h>

#include "kernels/geometry.h"
#include "kernels/separable_fused.h"

namespace ndconv::kernels {

/// __launch_bounds__(threads, S::kMinBlocks = 512 / threads): a cap of 128 registers, so that the
/// register file allows the blocks per SM that the shared memory of a 17-tap Gaussian allows (32 x
/// 32: 2 of ~102 KiB, 32 x 16: 4 of ~56 KiB); ptxas uses 121 without spilling.
template <typename S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    fused_separable_kernel(Geometry g, FusedLayout l, const float* __restrict__ in,
                           float* __restrict__ out, const float* __restrict__ taps) {
  extern __shared__ float4 fused_shared_words[];
  float* shared = reinterpret_cast<float*>(fused_shared_words);
  const int tid = threadIdx.x;
  fused_load_taps<S>(g, l, taps, shared, tid);  // published by the first barrier below
  int64_t counts[3];
  fused_block_counts<S>(g, l, counts);
  for (int64_t by = blockIdx.y; by < counts[1]; by += gridDim.y) {
    for (int64_t bz = blockIdx.z; bz < counts[2]; bz += gridDim.z) {
      const TileOrigin t = fused_origin<S>(g, l, blockIdx.x, by, bz);
      const int planes = fused_planes(g, l, t);
      // Planes 0 .. kStages - 2 in flight; one commit group per plane (empty past the last), so
      // that "plane p has landed" is always "at most kStages - 1 groups pending".
#pragma unroll
      for (int p = 0; p + 1 < S::kStages; ++p) {
        if (p < planes)
          fused_load_plane<S>(g, l, in, shared, t, p, tid);
        tiled_commit();
      }
      for (int p = 0; p < planes; ++p) {
        // Buffer of plane p + kStages - 1 was last read by the x pass of plane p - 1, which the
        // barrier after it closed.
        if (p + S::kStages - 1 < planes)
          fused_load_plane<S>(g, l, in, shared, t, p + S::kStages - 1, tid);
        tiled_commit();
        fused_wait<S::kStages - 1>();  // this thread's copies of plane p are done
        __syncthreads();  // ... and every thread's; the x buffer's readers (plane p - 1) are done
        fused_x_pass<S>(g, l, shared, p, tid);
        __syncthreads();  // the x buffer holds plane p
        fused_yz_step<S>(g, l, shared, out, t, p, tid);
      }
    }
  }
}

}  // namespace ndconv::kernels
