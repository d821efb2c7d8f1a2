// The __global__ entry points: thin wrappers that hand CUDA's built-in coordinates to the
// per-thread functions of blocked_thread.h and row_tile.h, plus the tap readers. Include from
// exactly one translation unit (src/cuda/launch.cu): the __constant__ tap buffer lives here.
//
// Taps are warp-uniform: every thread of a warp reads the same tap in the same FMA. They sit in
// __constant__ memory (served by the constant cache as a broadcast) when they fit, else in global
// memory read through the read-only path (__ldg).
#pragma once

#include <cuda_runtime.h>

#include "kernels/blocked_thread.h"
#include "kernels/geometry.h"
#include "kernels/row_tile.h"
#include "kernels/tiled_thread.h"

namespace ndconv::kernels {

/// 64 KiB of constant memory, all of it for taps.
inline constexpr int kConstantTapFloats = 16384;

__constant__ float c_taps[kConstantTapFloats];

struct ConstantTaps {
  __device__ __forceinline__ float operator()(int i) const { return c_taps[i]; }
};

struct GlobalTaps {
  const float* __restrict__ taps;
  __device__ __forceinline__ float operator()(int i) const { return __ldg(taps + i); }
};

__device__ __forceinline__ ThreadCoord thread_coord() {
  ThreadCoord c;
  c.block[0] = blockIdx.x;
  c.block[1] = blockIdx.y;
  c.block[2] = blockIdx.z;
  c.block_dim[0] = blockDim.x;
  c.block_dim[1] = blockDim.y;
  c.block_dim[2] = blockDim.z;
  c.thread[0] = threadIdx.x;
  c.thread[1] = threadIdx.y;
  c.thread[2] = threadIdx.z;
  c.grid_dim[0] = gridDim.x;
  c.grid_dim[1] = gridDim.y;
  c.grid_dim[2] = gridDim.z;
  return c;
}

/// The register-blocked kernel; kConstantTaps selects the tap memory. Launched with 128 threads
/// per block, but deliberately without __launch_bounds__: with it, ptxas (CUDA 13, sm_90) capped
/// the registers at 48-64 and spilled 16-60 bytes in 8 of the 10 instantiations; without it none
/// spills (docs/gpu-validation.md has the resource report).
template <int KO, bool kConstantTaps>
__global__ void blocked_kernel(Geometry g, const float* __restrict__ in, float* __restrict__ out,
                               const float* __restrict__ global_taps) {
  if constexpr (kConstantTaps) {
    blocked_block_thread<KO>(g, in, out, ConstantTaps{}, thread_coord());
  } else {
    blocked_block_thread<KO>(g, in, out, GlobalTaps{global_taps}, thread_coord());
  }
}

/// The tiled kernel (tiled_thread.h): per block tile, for each tap slice j2 stage the taps, then
/// for each input plane stage the (x, axis 1) tile and let every thread accumulate its TX x KO
/// outputs. Taps come from global memory (read once per block into shared memory).
template <typename S>
__global__ void __launch_bounds__(S::kThreads, 1)
    tiled_kernel(Geometry g, TiledLayout l, const float* __restrict__ in, float* __restrict__ out,
                 const float* __restrict__ taps) {
  extern __shared__ float4 shared_words[];
  float* taps_s = reinterpret_cast<float*>(shared_words);
  float* tile = taps_s + l.tap_floats;
  const int tid = threadIdx.x;
  const int tx = tid % S::BX, ty = tid / S::BX;
  int64_t counts[3];
  tiled_block_counts<S>(g, counts);
  const int planes = S::KO + g.filter_extent[3] - 1;
  for (int64_t by = blockIdx.y; by < counts[1]; by += gridDim.y) {
    for (int64_t bz = blockIdx.z; bz < counts[2]; bz += gridDim.z) {
      const TileOrigin t = tiled_origin<S>(g, blockIdx.x, by, bz);
      float acc[S::KO][S::TX];
#pragma unroll
      for (int q = 0; q < S::KO; ++q)
#pragma unroll
        for (int x = 0; x < S::TX; ++x)
          acc[q][x] = 0.0f;
      for (int j2 = 0; j2 < g.filter_extent[2]; ++j2) {
        __syncthreads();  // the previous slice's taps and plane are no longer read
        tiled_load_taps<S>(g, l, taps, taps_s, j2, tid);
        for (int s = 0; s < planes; ++s) {
          __syncthreads();
          tiled_load_plane<S>(g, l, in, tile, t, j2, s, tid);
          __syncthreads();
          tiled_compute_plane<S>(g, l, taps_s, tile, acc, s, tx, ty);
        }
      }
      tiled_store<S>(g, out, t, acc, tx, ty);
    }
  }
}

/// The x-row kernel of separable filters (taps always in constant memory: at most 1023).
__global__ void __launch_bounds__(256)
    row_kernel(Geometry g, const float* __restrict__ in, float* __restrict__ out) {
  extern __shared__ float tile[];
  const int threads = blockDim.x;
  const int64_t x0 = static_cast<int64_t>(blockIdx.x) * threads;
  const int64_t rows = row_count(g);
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    int64_t in_offset = 0, out_offset = 0;
    row_offsets(g, row, in_offset, out_offset);
    row_tile_load(g, in + in_offset, tile, x0, threadIdx.x, threads);
    __syncthreads();
    row_tile_compute(g, tile, out + out_offset, ConstantTaps{}, x0, threadIdx.x);
    __syncthreads();  // the next row's load must not overwrite a tile still being read
  }
}

}  // namespace ndconv::kernels
