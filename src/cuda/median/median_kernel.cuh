// The GPU median kernel: one thread per output voxel (grid-stride), its window in per-thread
// storage of kWindow keys (the launcher picks the smallest of 27, 125, 343 that holds it).
#pragma once

#include "cuda/median/median_select.h"

namespace ndconv::cuda_median {

template <int kWindow>
__global__ void median_kernel(const float* __restrict__ in, float* __restrict__ out,
                              MedianShape shape, int64_t voxels) {
  uint32_t keys[kWindow];
  for (int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; v < voxels;
       v += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[v] = median_of_voxel(shape, v, keys, [in](int64_t i) { return __ldg(in + i); });
}

}  // namespace ndconv::cuda_median
