// One dense T^3 filter on an 8-bit 3D volume on the tensor cores: the kernel of
// tensor_dense_layout.h's mapping (mma.sync m16n8k32 and m16n8k16, u8 x s8 -> s32, sm_80+).
//
// A block (TensorDenseTile) owns kBX x kBY outputs along x and y and `planes_per_block` output
// planes along z. Each lane loads every tap plane's B fragments into registers once; then the
// block streams its input planes through a ring of T staged planes (16-byte asynchronous copies,
// T - 1 planes in flight while one is used; each thread's copies and each lane's A words are
// offsets computed once, so that a plane costs its MMAs, its shared loads and funnel shifts, one
// copy address and the epilogue). Per input plane a warp builds each K chunk's A
// fragments (two aligned words and a funnel shift per register) and runs T MMAs with them, one per
// tap plane, into the accumulators of the T output planes that input plane meets (slot = plane
// mod T, the plane loop unrolled by T so that every slot is a register). An output plane is
// complete after its last tap plane: the epilogue exchanges digits within lane pairs (two
// shuffles), combines them (combine_slices) and stores one float per lane per M tile.
#pragma once

#include <cuda_pipeline_primitives.h>

#include <cstdint>

#include "cuda/tensor_dense/tensor_dense_layout.h"

namespace ndconv::cuda_tensor_dense {

struct TensorDenseArgs {
  const uint8_t* padded;  ///< tensor_dense_padded's volume
  int64_t row_bytes, plane_bytes;
  int n0, n1, n2;            ///< output extents
  int planes_per_block;      ///< output planes along z per block
  const int32_t* fragments;  ///< TensorDenseWeights::fragments
  float scale;
  float* out;  ///< n0 x n1 x n2 floats, x fastest
};

namespace tensor_dense_steps {

__device__ __forceinline__ void mma_k32(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();  // dispatched only to compute capability 8.0 and later
#endif
}

__device__ __forceinline__ void mma_k16(int32_t (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a0), "r"(a1), "r"(b0));
#else
  __trap();
#endif
}

}  // namespace tensor_dense_steps

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks)
    tensor_dense_kernel(TensorDenseArgs a) {
  using S = typename Tile::S;
  constexpr int T = Tile::kTaps, MT = Tile::kMTiles, WX = Tile::kWarpsX, R = Tile::kRing;
  constexpr int kChunks = S::kFull + (S::kHalf ? 1 : 0);
  static_assert(R == T, "each plane's buffer at a constant offset in the unrolled plane loop");
  using tensor_dense_steps::mma_k16;
  using tensor_dense_steps::mma_k32;
  extern __shared__ uint4 shared16[];
  uint32_t* const ring = reinterpret_cast<uint32_t*>(shared16);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wx = warp % WX, wy = warp / WX;
  const int x_b = blockIdx.x * Tile::kBX, y_b = blockIdx.y * Tile::kBY;
  const int z_b = blockIdx.z * a.planes_per_block;
  const int planes = min(a.planes_per_block, a.n2 - z_b) + T - 1;

  uint32_t b[T][S::kBRegs];
#pragma unroll
  for (int c = 0; c < T; ++c)
#pragma unroll
    for (int r = 0; r < S::kBRegs; ++r)
      b[c][r] = static_cast<uint32_t>(__ldg(a.fragments + (c * S::kBRegs + r) * 32 + lane));

  // The thread's share of a plane's 16-byte copies (the same for every plane): source bytes from
  // the block's first in the plane, destination words from the plane's buffer.
  int stage_src[Tile::kStageIters], stage_dst[Tile::kStageIters];
#pragma unroll
  for (int k = 0; k < Tile::kStageIters; ++k) {
    const int i = threadIdx.x + k * Tile::kThreads;
    const int row = i / (Tile::kWords / 4), chunk = i % (Tile::kWords / 4);
    stage_src[k] = row * static_cast<int>(a.row_bytes) + 16 * chunk;
    stage_dst[k] = row * Tile::kStride + 4 * chunk;
  }
  const uint8_t* const block_src = a.padded + int64_t{y_b} * a.row_bytes + x_b;
  // Plane p into buffer `slot` (p mod T).
  auto stage = [&](int p, int slot) {
    const uint8_t* src = block_src + (z_b + p) * a.plane_bytes;
#pragma unroll
    for (int k = 0; k < Tile::kStageIters; ++k)
      if (Tile::kStageItems % Tile::kThreads == 0 ||
          threadIdx.x + k * Tile::kThreads < Tile::kStageItems)
        __pipeline_memcpy_async(ring + slot * Tile::kPlaneWords + stage_dst[k], src + stage_src[k],
                                16);
  };

  // The lane's A words (a_lane_offset) per chunk and half, and its funnel shift.
  int lane_off[kChunks][2];
#pragma unroll
  for (int ch = 0; ch < kChunks; ++ch)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      lane_off[ch][h] = a_lane_offset<Tile>(lane, wx, wy, ch, ch < S::kFull ? h : 0);
  const int shift = a_shift(lane);

  // The lane's outputs (plane z_b, then one plane on per completed output plane) and whether
  // they are inside the volume.
  const int64_t plane_stride = int64_t{a.n0} * a.n1;
  const int y = y_b + out_y(lane, wy);
  float* out_plane = a.out + int64_t{z_b} * plane_stride + int64_t{y} * a.n0 + x_b;
  bool inside[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m)
    inside[m] = y < a.n1 && x_b + out_x<Tile>(lane, wx, m) < a.n0;
  const bool odd = lane & 1;

  int32_t acc[T][MT][4];
#pragma unroll
  for (int u = 0; u < T; ++u)
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        acc[u][m][q] = 0;

#pragma unroll
  for (int p = 0; p < R - 1; ++p) {
    if (p < planes)
      stage(p, p);
    __pipeline_commit();
  }

#pragma unroll 1
  for (int base = 0; base < planes; base += T) {
#pragma unroll
    for (int u = 0; u < T; ++u) {
      const int p = base + u;
      if (p < planes) {
        __pipeline_wait_prior(R - 2);
        __syncthreads();  // plane p visible; every warp done with plane p - 1's buffer
        if (p + R - 1 < planes)
          stage(p + R - 1, (u + R - 1) % R);
        __pipeline_commit();
        const uint32_t* const words = ring + u * Tile::kPlaneWords;
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int q = 0; q < 4; ++q)
            acc[u][m][q] = 0;  // output plane p starts (slot p mod T)
#pragma unroll
        for (int ch = 0; ch < S::kFull; ++ch) {
          uint32_t fa[MT][4];
#pragma unroll
          for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const uint32_t* w = words + lane_off[ch][q >> 1] + a_fixed_offset<Tile>(ch, q, m);
              fa[m][q] = __funnelshift_r(w[0], w[1], shift);
            }
#pragma unroll
          for (int c = 0; c < T; ++c)
#pragma unroll
            for (int m = 0; m < MT; ++m)
              mma_k32(acc[(u - c + T) % T][m], fa[m], b[c][2 * ch], b[c][2 * ch + 1]);
        }
        if constexpr (S::kHalf) {
          uint32_t fa[MT][2];
#pragma unroll
          for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int q = 0; q < 2; ++q) {
              const uint32_t* w =
                  words + lane_off[S::kFull][0] + a_fixed_offset<Tile>(S::kFull, q, m);
              fa[m][q] = __funnelshift_r(w[0], w[1], shift);
            }
#pragma unroll
          for (int c = 0; c < T; ++c)
#pragma unroll
            for (int m = 0; m < MT; ++m)
              mma_k16(acc[(u - c + T) % T][m], fa[m][0], fa[m][1], b[c][2 * S::kFull]);
        }
        // Output plane p - T + 1 is complete (slot (u + 1) mod T).
        if (p >= T - 1) {
          const int e = (u + 1) % T;
#pragma unroll
          for (int m = 0; m < MT; ++m) {
            const int32_t* c = acc[e][m];
            const int32_t r0 = __shfl_xor_sync(0xffffffffu, sent(c, odd, 0), 1);
            const int32_t r1 = __shfl_xor_sync(0xffffffffu, sent(c, odd, 1), 1);
            int32_t d[4];
            lane_digits(c, r0, r1, odd, d);
            const float v = combine_digits<T>(d, a.scale);
            if (inside[m])
              out_plane[out_x<Tile>(lane, wx, m)] = v;
          }
          out_plane += plane_stride;
        }
      }
    }
  }
}

}  // namespace ndconv::cuda_tensor_dense
