// The filter bank on the tensor cores for 8-bit inputs: mma.sync m16n8k32 (u8 x s8 -> s32,
// sm_80 and later), the implicit GEMM and the precision scheme of tensor_core_layout.h.
//
// A block of kWarps warps owns kWarpX outputs along x, kWarps rows along axis 1 (a warp each) and
// one position along axes 2 and 3, for one pass of kFilters filters (blockIdx.y). It stages the
// (kWarps + k1 - 1) x k3 input rows its outputs meet (kStagedRowBytes bytes each, 16-byte
// asynchronous copies; the next tile's rows in flight while this one is used) and keeps the pass's
// weights, laid out as B fragments, in shared memory all along. Per K chunk (4 tap rows of 8 taps)
// a warp builds the A fragments of its kMTiles M tiles from the staged bytes (the 4-byte windows
// start at any byte: two aligned words and a funnel shift), loads each of the kNTiles B fragments
// once and runs kMTiles x kNTiles MMAs: each A fragment feeds kNTiles MMAs, each B fragment
// kMTiles. The epilogue trades half of each lane's columns with its neighbour (the four digits of
// one filter at one output in one lane), combines them (combine_slices) and writes the responses
// where the FP32 bank writes them: contiguous canonical volumes, filter f at out + f * stride.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <cstdint>

#include "cuda/bank/tensor_core_tile.h"

namespace ndconv::cuda_bank {

namespace tensor_core_steps {

__device__ __forceinline__ void mma_u8s8(int32_t (&c)[4], const uint32_t (&a)[4], uint2 b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
#else
  __trap();  // dispatched only to compute capability 8.0 and later
#endif
}

}  // namespace tensor_core_steps

// Registers: at most 170 (3 blocks per SM) hold the 96 accumulators without spills with the K
// chunks in a loop; the chunks unrolled spill (ptxas, sm_90: 368 bytes at 168 registers, 304 at
// 255).
__global__ void __launch_bounds__(TensorCoreShape::kThreads, 3)
    tensor_core_bank_kernel(TensorCoreArgs a) {
  using S = TensorCoreShape;
  using namespace tensor_core_tile;
  extern __shared__ uint4 shared16[];
  int32_t* const fragments = reinterpret_cast<int32_t*>(shared16);
  uint8_t* const tiles = reinterpret_cast<uint8_t*>(shared16) + S::kFragmentWords * 4;
  const int pass = blockIdx.y;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  auto stage = [&](const Origin& o, uint8_t* buffer) {
    for (int i = threadIdx.x; i < kStagedRows * kRowChunks; i += S::kThreads) {
      const int64_t source = staged_source(a, o, i);
      __pipeline_memcpy_async(buffer + staged_offset(i), a.padded + (source < 0 ? 0 : source), 16,
                              source < 0 ? 16 : 0);
    }
  };

  int64_t tile = blockIdx.x;
  if (tile >= pass_tiles)
    return;
  for (int i = threadIdx.x; i < S::kFragmentWords / 4; i += S::kThreads)
    __pipeline_memcpy_async(fragments + 4 * i,
                            a.fragments + int64_t{pass} * S::kFragmentWords + 4 * i, 16);
  Origin o = tile_origin(a, tile);
  stage(o, tiles);
  __pipeline_commit();
  int buffer = 0;
  const int shift = lane_shift(lane);
  for (; tile < pass_tiles; tile += gridDim.x) {
    const bool more = tile + gridDim.x < pass_tiles;
    if (more)
      stage(tile_origin(a, tile + gridDim.x), tiles + (buffer ^ 1) * kTileBytes);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    const uint32_t* words =
        reinterpret_cast<const uint32_t*>(tiles + buffer * kTileBytes + warp * S::kPitch) +
        lane_word(lane);
    int32_t acc[S::kMTiles][S::kNTiles][4];
#pragma unroll
    for (int m = 0; m < S::kMTiles; ++m)
#pragma unroll
      for (int n = 0; n < S::kNTiles; ++n)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          acc[m][n][q] = 0;
#pragma unroll 1
    for (int c = 0; c < S::kChunks; ++c) {
      uint32_t frag[S::kMTiles][4];
#pragma unroll
      for (int m = 0; m < S::kMTiles; ++m)
        a_fragment(words, c, m, lane, shift, frag[m]);
#pragma unroll
      for (int n = 0; n < S::kNTiles; ++n) {
        const uint2 b = *reinterpret_cast<const uint2*>(fragments + fragment_word(c, n, lane, 0));
#pragma unroll
        for (int m = 0; m < S::kMTiles; ++m)
          tensor_core_steps::mma_u8s8(acc[m][n], frag[m], b);
      }
    }

    const int64_t m1 = o.y0 + warp;
    const int64_t first = ((o.m3 * a.n2 + o.m2) * a.n1 + m1) * a.n0;
#pragma unroll
    for (int m = 0; m < S::kMTiles; ++m)
#pragma unroll
      for (int n = 0; n < S::kNTiles; ++n) {
        int32_t s0, s1, digits[4];
        sent_pair(acc[m][n], lane, s0, s1);
        const int32_t r0 = __shfl_xor_sync(0xffffffffu, s0, 1);
        const int32_t r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
        kept_digits(acc[m][n], lane, r0, r1, digits);
        const int f = pass * S::kFilters + kept_filter(lane, n);
        const int64_t x = o.x0 + 16 * m + kept_x(lane);
        if (f < a.count && x < a.n0 && m1 < a.n1)
          a.out[f * a.stride + first + x] = combine_slices(digits, S::kSlices, a.scales[f]);
      }
    __syncthreads();  // every warp is done with this buffer before the next tile's copies
    buffer ^= 1;
    if (more)
      o = tile_origin(a, tile + gridDim.x);
  }
}

}  // namespace ndconv::cuda_bank
