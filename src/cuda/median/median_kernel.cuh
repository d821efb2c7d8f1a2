// The GPU median kernels: a block stages its input box in shared memory as keys, then each thread
// selects the medians of kOutputs voxels along the last axis, by counting passes or, for small
// isotropic windows, by forgetful selection in registers (median_select.h says why); the 3D
// radius-1 window stages sorted columns instead and selects by sorted planes (median_columns.h).
#pragma once

#include "cuda/median/median_columns.h"
#include "cuda/median/median_select.h"

namespace ndconv::cuda_median {

/// Threads per block at most (threads_x × threads_y of the grid).
inline constexpr int kMaxThreads = 128;

/// Blocks per SM the kernel is compiled for (its register budget): 4, or the selection's own.
template <typename Select, typename = void>
struct MinBlocksPerSm {
  static constexpr int value = 4;
};
template <typename Select>
struct MinBlocksPerSm<Select, decltype(void(Select::kMinBlocksPerSm))> {
  static constexpr int value = Select::kMinBlocksPerSm;
};

template <typename Select>
__global__ void __launch_bounds__(kMaxThreads, MinBlocksPerSm<Select>::value)
    median_kernel(const float* __restrict__ in, float* __restrict__ out, MedianGrid g) {
  extern __shared__ uint32_t tile[];
  int64_t origin[4];
  block_origin(g, blockIdx.x, origin);
  load_tile(g, origin, tile, threadIdx.x, blockDim.x, threadIdx.y, blockDim.y,
            [in](int64_t i) { return __ldg(in + i); });
  __syncthreads();
  store_thread_medians<Select>(g, origin, tile, threadIdx.x, threadIdx.y,
                               [out](int64_t i, float v) { out[i] = v; });
}

/// The 3 x 3 x 3 median by sorted columns: Shape::kThreads threads, 8 blocks per SM (at most 64
/// registers a thread; its min/max and logic on the ALU pipe bound it, not memory).
template <typename Shape>
__global__ void __launch_bounds__(Shape::kThreads, 8)
    median_columns_kernel(const float* __restrict__ in, float* __restrict__ out, MedianGrid g) {
  extern __shared__ uint32_t columns[];
  int64_t origin[4];
  block_origin(g, blockIdx.x, origin);
  load_columns<Shape>(g, origin, columns, threadIdx.x + Shape::kX * threadIdx.y,
                      [in](int64_t i) { return __ldg(in + i); });
  __syncthreads();
  store_column_medians<Shape>(g, origin, columns, threadIdx.x, threadIdx.y,
                              [out](int64_t i, float v) { out[i] = v; });
}

}  // namespace ndconv::cuda_median
