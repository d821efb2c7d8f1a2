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

#include "cuda/bank/tensor_core_layout.h"

namespace ndconv::cuda_bank {

struct TensorCoreArgs {
  const uint8_t* padded;  ///< the 8-bit padded volume (tensor_core_layout.h)
  int64_t row_bytes, e1, e2, e3;
  int64_t n0, n1, n2, n3;
  int64_t tiles_x, tiles_y;  ///< tiles along x and axis 1; then n2, n3 positions
  int count;                 ///< filters
  const int32_t* fragments;  ///< TensorCoreWeights::fragments
  const float* scales;       ///< TensorCoreWeights::scales
  float* out;
  int64_t stride;  ///< floats between the filters' output volumes
};

namespace tensor_core_steps {

using S = TensorCoreShape;

/// Input rows a block stages per tile, and the shared bytes of one tile's rows.
constexpr int kStagedRows = (S::kWarps + S::kK1 - 1) * S::kK3;
constexpr int kTileBytes = kStagedRows * S::kPitch;
/// Shared bytes of a launch: the pass's fragments and two tiles' rows.
constexpr int kSharedBytes = S::kFragmentWords * 4 + 2 * kTileBytes;

/// The staged row that tap row r (j3 * k1 + j1) of warp 0 reads, in bytes from the tile's start;
/// rows past the filter read row 0 (their weights are zero).
__host__ __device__ constexpr int tap_row_offset(int r) {
  return r >= S::kTapRows ? 0 : ((r / S::kK1) * (S::kWarps + S::kK1 - 1) + r % S::kK1) * S::kPitch;
}

/// The 4 bytes at byte `byte_offset` of shared memory, from the two aligned words around them.
__device__ __forceinline__ uint32_t unaligned_word(const uint32_t* words, int word, int shift) {
  return __funnelshift_r(words[word], words[word + 1], shift);
}

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

__global__ void __launch_bounds__(TensorCoreShape::kThreads, 3)
    tensor_core_bank_kernel(TensorCoreArgs a) {
  using S = TensorCoreShape;
  using namespace tensor_core_steps;
  extern __shared__ uint4 shared16[];
  int32_t* const fragments = reinterpret_cast<int32_t*>(shared16);
  uint8_t* const tiles = reinterpret_cast<uint8_t*>(shared16) + S::kFragmentWords * 4;
  const int pass = blockIdx.y;
  const int64_t pass_tiles = a.tiles_x * a.tiles_y * a.n2 * a.n3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;

  struct Origin {
    int64_t x0, y0, m2, m3;
  };
  auto origin_of = [&](int64_t i) {
    Origin o;
    o.x0 = (i % a.tiles_x) * S::kWarpX;
    i /= a.tiles_x;
    o.y0 = (i % a.tiles_y) * S::kWarps;
    i /= a.tiles_y;
    o.m2 = i % a.n2;
    o.m3 = i / a.n2;
    return o;
  };
  // The tile's rows: staged row (j3, yy) is padded row (y0 + yy, m2, m3 + j3); rows past e1 zeros.
  auto stage = [&](const Origin& o, uint8_t* buffer) {
    constexpr int kChunks = S::kStagedRowBytes / 16, kRowsY = S::kWarps + S::kK1 - 1;
    for (int i = threadIdx.x; i < kStagedRows * kChunks; i += S::kThreads) {
      const int row = i / kChunks, chunk = i % kChunks;
      const int j3 = row / kRowsY, yy = row % kRowsY;
      const bool inside = o.y0 + yy < a.e1;
      const uint8_t* src =
          a.padded + (((o.m3 + j3) * a.e2 + o.m2) * a.e1 + o.y0 + yy) * a.row_bytes + o.x0 +
          16 * chunk;
      __pipeline_memcpy_async(buffer + row * S::kPitch + 16 * chunk, inside ? src : a.padded, 16,
                              inside ? 0 : 16);
    }
  };

  int64_t tile = blockIdx.x;
  if (tile >= pass_tiles)
    return;
  for (int i = threadIdx.x; i < S::kFragmentWords / 4; i += S::kThreads)
    __pipeline_memcpy_async(fragments + 4 * i,
                            a.fragments + int64_t{pass} * S::kFragmentWords + 4 * i, 16);
  Origin o = origin_of(tile);
  stage(o, tiles);
  __pipeline_commit();
  int buffer = 0;
  // The lane's window in a staged row: bytes from 4 (t % 2) + g of the M tile (word part and shift).
  const int lane_word = (a_fragment_dx(lane) + (g & ~3)) / 4, shift = 8 * (g & 3);
  for (; tile < pass_tiles; tile += gridDim.x) {
    const bool more = tile + gridDim.x < pass_tiles;
    if (more)
      stage(origin_of(tile + gridDim.x), tiles + (buffer ^ 1) * kTileBytes);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    const uint32_t* words = reinterpret_cast<const uint32_t*>(tiles + buffer * kTileBytes +
                                                              warp * S::kPitch) + lane_word;
    int32_t acc[S::kMTiles][S::kNTiles][4];
#pragma unroll
    for (int m = 0; m < S::kMTiles; ++m)
#pragma unroll
      for (int n = 0; n < S::kNTiles; ++n)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          acc[m][n][q] = 0;
    const bool upper = t >= 2;  // the lane's tap row within each half chunk
#pragma unroll 1
    for (int c = 0; c < S::kChunks; ++c) {
      // Tap rows 4c + t / 2 (registers 0, 1) and 4c + 2 + t / 2 (registers 2, 3).
      const int row_lo = (upper ? tap_row_offset(4 * c + 1) : tap_row_offset(4 * c)) / 4;
      const int row_hi = (upper ? tap_row_offset(4 * c + 3) : tap_row_offset(4 * c + 2)) / 4;
      uint32_t frag[S::kMTiles][4];
#pragma unroll
      for (int m = 0; m < S::kMTiles; ++m) {
        frag[m][0] = unaligned_word(words, row_lo + 4 * m, shift);
        frag[m][1] = unaligned_word(words, row_lo + 4 * m + 2, shift);
        frag[m][2] = unaligned_word(words, row_hi + 4 * m, shift);
        frag[m][3] = unaligned_word(words, row_hi + 4 * m + 2, shift);
      }
#pragma unroll
      for (int n = 0; n < S::kNTiles; ++n) {
        const uint2 b = *reinterpret_cast<const uint2*>(fragments + fragment_word(c, n, lane, 0));
#pragma unroll
        for (int m = 0; m < S::kMTiles; ++m)
          mma_u8s8(acc[m][n], frag[m], b);
      }
    }

    // The epilogue: even lanes hold digits 0, 1 of filter 2n + t / 2 and keep output row g; odd
    // lanes digits 2, 3 and keep row g + 8; each sends the pair the other keeps.
    const bool odd = (t & 1) != 0;
    const int64_t m1 = o.y0 + warp;
    const int64_t first = ((o.m3 * a.n2 + o.m2) * a.n1 + m1) * a.n0;
#pragma unroll
    for (int m = 0; m < S::kMTiles; ++m)
#pragma unroll
      for (int n = 0; n < S::kNTiles; ++n) {
        const int32_t r0 = __shfl_xor_sync(0xffffffffu, odd ? acc[m][n][0] : acc[m][n][2], 1);
        const int32_t r1 = __shfl_xor_sync(0xffffffffu, odd ? acc[m][n][1] : acc[m][n][3], 1);
        int32_t digits[4];
        digits[0] = odd ? r0 : acc[m][n][0];
        digits[1] = odd ? r1 : acc[m][n][1];
        digits[2] = odd ? acc[m][n][2] : r0;
        digits[3] = odd ? acc[m][n][3] : r1;
        const int f = pass * S::kFilters + 2 * n + t / 2;
        const int64_t x = o.x0 + 16 * m + g + (odd ? 8 : 0);
        if (f < a.count && x < a.n0 && m1 < a.n1)
          a.out[f * a.stride + first + x] = combine_slices(digits, S::kSlices, a.scales[f]);
      }
    __syncthreads();  // every warp is done with this buffer before the next tile's copies
    buffer ^= 1;
    if (more)
      o = origin_of(tile + gridDim.x);
  }
}

}  // namespace ndconv::cuda_bank
