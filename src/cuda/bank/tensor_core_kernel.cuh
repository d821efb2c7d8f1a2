// The filter bank on the tensor cores for 8-bit inputs: mma.sync m16n8k32 (u8 x s8 -> s32,
// sm_80 and later), the implicit GEMM and the precision scheme of tensor_core_layout.h.
//
// A block (TensorCoreTile: Warps warps of Rows output rows, MTiles M tiles per warp) owns 16 MTiles
// outputs along x, Warps x Rows rows along axis 1 and one position along axes 2 and 3, for one pass
// of kFilters filters (blockIdx.y). It stages the (Warps Rows + k1 - 1) x k3 input rows its outputs
// meet (16-byte asynchronous copies; the next tile's rows in flight while this one is used) and
// keeps the pass's weights, laid out as B fragments, in shared memory all along. Per K chunk (4
// tap rows of 8 taps; with two rows a warp, 4 staged rows of one plane) a warp builds the A
// fragments of its M tiles from the staged bytes (the 4-byte windows start at any byte: one word of
// a shifted copy of the row, or two aligned words and a funnel shift), loads the chunk's B
// fragments once per row and runs Rows x MTiles x kNTiles MMAs: each A fragment feeds Rows x
// kNTiles MMAs, each B fragment MTiles. In the epilogue each lane holds the four digits of one
// filter at two outputs per M tile (the columns' order, column_filter), combines them
// (combine_slices) and writes the responses where the FP32 bank writes them: contiguous canonical
// volumes, filter f at out + f * stride.
//
// Tap frames (a 4D filter's taps along canonical axis 2; one in 3D): a tile runs the same GEMM once
// per frame on the frame's staged rows with the frame's weights (all frames' in shared memory, or
// for a StreamWeights tile the frame's, copied with its rows), into the same accumulators; the
// copies of the next (tile, frame) are in flight during each.
//
// Weighted (the adaptive filter's reconstruction, one pass): the epilogue forms the weighted sum
// instead of the responses: each lane's filters' responses times their per-voxel weights, summed
// over the quad's lanes (which hold the pass's other filters at the same outputs) by two
// shuffles, one store per output (lane_weighted_sum, quad_sum: the host emulation's order).
#pragma once

#include <cuda_pipeline_primitives.h>

#include <algorithm>
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

template <class Tile, int MinBlocks, bool PrefetchA, int ChunkUnroll = 1, bool Weighted = false>
__global__ void __launch_bounds__(Tile::kThreads, MinBlocks)
    tensor_core_bank_kernel(TensorCoreArgs a) {
  using S = TensorCoreShape;
  using namespace tensor_core_epilogue;
  extern __shared__ uint4 shared16[];
  const int frames = a.frames;
  int32_t* const fragments = reinterpret_cast<int32_t*>(shared16);
  int2* const row_table =
      reinterpret_cast<int2*>(fragments + Tile::weight_frames(frames) * Tile::kFragmentWords);
  uint8_t* const tiles = reinterpret_cast<uint8_t*>(row_table) + Tile::kRowTableBytes;
  const int pass = blockIdx.y;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  auto stage = [&](const TensorCoreOrigin& o, int frame, uint8_t* buffer) {
    for (int i = threadIdx.x; i < Tile::kStageItems; i += Tile::kThreads) {
      const int64_t source = Tile::staged_source(a, o, frame, i);
      __pipeline_memcpy_async(buffer + Tile::staged_offset(i), a.padded + (source < 0 ? 0 : source),
                              16, source < 0 ? 16 : 0);
    }
  };

  // Tap frame `frame`'s B fragments into weight buffer `buffer` (streamed) or their own place.
  auto stage_weights = [&](int frame, int buffer) {
    for (int i = threadIdx.x; i < Tile::kFragmentWords / 4; i += Tile::kThreads)
      __pipeline_memcpy_async(fragments + Tile::weight_offset(frame, buffer, i),
                              a.fragments + Tile::weight_source(pass, frames, frame, i), 16);
  };

  int64_t tile = blockIdx.x;
  if (tile >= pass_tiles)
    return;
  if constexpr (Tile::kStreamWeights)
    stage_weights(0, 0);
  else
    for (int frame = 0; frame < frames; ++frame)
      stage_weights(frame, 0);
  // The chunks' staged rows: per chunk one 64-bit load instead of the divisions of tap_row_word.
  for (int i = threadIdx.x; i < Tile::kRowTableEntries; i += Tile::kThreads)
    Tile::chunk_rows(i / 4, i % 4, row_table[i].x, row_table[i].y);
  TensorCoreOrigin o = Tile::origin(a, tile);
  stage(o, 0, tiles);
  __pipeline_commit();
  int buffer = 0;
  const int shift = Tile::lane_shift(lane);
  for (; tile < pass_tiles; tile += gridDim.x) {
    const bool more = tile + gridDim.x < pass_tiles;
    // Per output row of the warp's (v), M tile, n tile: the MMA's accumulators.
    int32_t acc[Tile::kRows][Tile::kMTiles][S::kNTiles][4];
#pragma unroll
    for (int v = 0; v < Tile::kRows; ++v)
#pragma unroll
      for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
        for (int n = 0; n < S::kNTiles; ++n)
#pragma unroll
          for (int q = 0; q < 4; ++q)
            acc[v][m][n][q] = 0;
#pragma unroll 1
    for (int frame = 0; frame < frames; ++frame) {
      // The next (tile, frame)'s rows in flight while this one's are used.
      if (frame + 1 < frames)
        stage(o, frame + 1, tiles + (buffer ^ 1) * Tile::kTileBytes);
      else if (more)
        stage(Tile::origin(a, tile + gridDim.x), 0, tiles + (buffer ^ 1) * Tile::kTileBytes);
      if constexpr (Tile::kStreamWeights)
        if (frame + 1 < frames || more)
          stage_weights(frame + 1 < frames ? frame + 1 : 0, buffer ^ 1);
      __pipeline_commit();
      __pipeline_wait_prior(1);
      __syncthreads();
      uint32_t* const tile_words = reinterpret_cast<uint32_t*>(tiles + buffer * Tile::kTileBytes);
      if constexpr (Tile::kBuildItems > 0) {
        for (int i = threadIdx.x; i < Tile::kBuildItems; i += Tile::kThreads)
          Tile::build_shifted(tile_words, i);
        __syncthreads();
      }
      const uint32_t* words = tile_words + Tile::warp_word(warp) + Tile::lane_word(lane);
      const int32_t* const frame_fragments = fragments + Tile::weight_offset(frame, buffer, 0);
      // A chunk's A fragments (kMTiles x 4 registers) and its MMAs, each B fragment loaded once.
      using Fragments = uint32_t[Tile::kMTiles][4];
      const int t = lane % 4;
      auto load_a = [&](Fragments& frag, int c) {
        const int2 rows = row_table[4 * c + t];
#pragma unroll
        for (int m = 0; m < Tile::kMTiles; ++m)
          Tile::a_fragment(words, rows.x, rows.y, m, shift, frag[m]);
      };
      auto multiply = [&](const Fragments& frag, int c) {
#pragma unroll
        for (int v = 0; v < Tile::kRows; ++v)
#pragma unroll
          for (int n = 0; n < S::kNTiles; n += 2) {
            const uint4 b = *reinterpret_cast<const uint4*>(
                frame_fragments + fragment_word(c * Tile::kRows + v, n, lane, 0));
#pragma unroll
            for (int m = 0; m < Tile::kMTiles; ++m)
              tensor_core_steps::mma_u8s8(acc[v][m][n], frag[m], make_uint2(b.x, b.y));
#pragma unroll
            for (int m = 0; m < Tile::kMTiles; ++m)
              tensor_core_steps::mma_u8s8(acc[v][m][n + 1], frag[m], make_uint2(b.z, b.w));
          }
      };
      // The K chunks in a loop: unrolled, they spill (ptxas sm_90, 4 M tiles: 368 bytes at 168
      // registers, 304 at 255); in a loop, 166 registers and none. PrefetchA: the next chunk's A
      // fragments loaded while this chunk's MMAs run (two sets of registers); ChunkUnroll: the loop
      // unrolled that many times, the compiler free to schedule one chunk's loads under another's
      // MMAs.
      if constexpr (PrefetchA) {
        Fragments fa, fb;
        load_a(fa, 0);
#pragma unroll 1
        for (int c = 0; c < Tile::kChunks; c += 2) {
          const bool second = c + 1 < Tile::kChunks;
          if (second)
            load_a(fb, c + 1);
          multiply(fa, c);
          if (second) {
            if (c + 2 < Tile::kChunks)
              load_a(fa, c + 2);
            multiply(fb, c + 1);
          }
        }
      } else {
#pragma unroll ChunkUnroll
        for (int c = 0; c < Tile::kChunks; ++c) {
          Fragments frag;
          load_a(frag, c);
          multiply(frag, c);
        }
      }
      __syncthreads();  // every warp is done with this buffer before the next copies into it
      buffer ^= 1;
    }

#pragma unroll
    for (int v = 0; v < Tile::kRows; ++v) {
      const int64_t m1 = o.y0 + Tile::kRows * warp + v;
      const int64_t first = ((o.m3 * a.n2 + o.m2) * a.n1 + m1) * a.n0;
      if constexpr (Weighted) {
        // Every lane runs the shuffles; the quad's lanes share their output, so its bounds.
#pragma unroll
        for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int64_t x = o.x0 + 16 * m + kept_x(lane, half);
            const bool inside = m1 < a.n1 && x < a.n0;
            float s = 0.0f;
#pragma unroll
            for (int p = 0; p < S::kNTiles / 2; ++p) {
              const int f = pass * S::kFilters + kept_filter(lane, p);
              if (inside && f < a.count) {
                int32_t digits[4];
                lane_digits(acc[v][m][2 * p], acc[v][m][2 * p + 1], half, digits);
                s = lane_weighted_sum(s, __ldg(a.weights + f * a.stride + first + x),
                                      detail::combine_slices(digits, S::kSlices, a.scales[f]));
              }
            }
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            s += __shfl_xor_sync(0xffffffffu, s, 2);
            if (inside && stores_sum(lane, m, half))
              a.sum[first + x] = s;
          }
      } else {
#pragma unroll
        for (int p = 0; p < S::kNTiles / 2; ++p) {
          const int f = pass * S::kFilters + kept_filter(lane, p);
          if (f < a.count && m1 < a.n1) {
            const float scale = a.scales[f];
            float* const out = a.out + f * a.stride + first;
#pragma unroll
            for (int m = 0; m < Tile::kMTiles; ++m)
#pragma unroll
              for (int half = 0; half < 2; ++half) {
                int32_t digits[4];
                lane_digits(acc[v][m][2 * p], acc[v][m][2 * p + 1], half, digits);
                const int64_t x = o.x0 + 16 * m + kept_x(lane, half);
                if (x < a.n0)
                  out[x] = detail::combine_slices(digits, S::kSlices, scale);
              }
          }
        }
      }
    }
    if (more)
      o = Tile::origin(a, tile + gridDim.x);
  }
}

/// Enqueues tensor_core_bank_kernel<Tile, MinBlocks, PrefetchA, ChunkUnroll, Weighted> over
/// `passes` passes (a.frames tap frames; Weighted: one) on `stream` with as many blocks as `sms`
/// SMs hold at once, shared among the passes (each block walks its pass's tiles). Returns false,
/// launching nothing, where a block does not fit on an SM.
template <class Tile, int MinBlocks, bool PrefetchA, int ChunkUnroll = 1, bool Weighted = false>
bool launch_tensor_core_kernel(const TensorCoreArgs& a, int passes, int sms, cudaStream_t stream) {
  const auto kernel = tensor_core_bank_kernel<Tile, MinBlocks, PrefetchA, ChunkUnroll, Weighted>;
  const int kShared = Tile::shared_bytes(a.frames);
  if (kShared > 48 * 1024 &&
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared) !=
          cudaSuccess) {
    cudaGetLastError();  // the device cannot give a block that much: clear the error
    return false;
  }
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Tile::kThreads, kShared) !=
          cudaSuccess ||
      per_sm < 1)
    return false;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  const int64_t per_pass = std::max<int64_t>(1, int64_t{per_sm} * sms / passes);
  const dim3 grid(static_cast<unsigned>(std::min(pass_tiles, per_pass)),
                  static_cast<unsigned>(passes));
  kernel<<<grid, Tile::kThreads, kShared, stream>>>(a);
  return true;
}

}  // namespace ndconv::cuda_bank
