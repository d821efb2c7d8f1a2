// The tensor-core filter bank on Hopper's warpgroup MMA (wgmma, sm_90a; wgmma_kernel.cuh): the
// operands' layouts, host and device, shared by the kernel, its host set-up and the host
// emulation that CI runs without a GPU (tests/gpu/wgmma_emulation_test.cpp).
//
// The same GEMM as the mma.sync kernel (tensor_core_layout.h: M outputs along x, N = a pass's
// kFilters filters x kSlices digits, K = 4 tap rows x 8 taps per chunk, u8 data x s8 digits, int32
// accumulators, exact) as wgmma.m64nNk32.s32.u8.s8 with N = kColumns (48), or 96 where each warp
// has two output rows (each row its own 48 columns of B): a warpgroup of 4 warps multiplies 64
// rows of A by one chunk's B. A comes from registers, each warp's 16 rows in the
// mma.sync A fragment's layout (a_fragment_row, a_fragment_k: the PTX ISA gives the wgmma A
// fragment of warp w of the warpgroup as mma.m16n8k32's for rows 16 w to 16 w + 15), so each warp
// builds its A fragments from the staged rows as the mma.sync kernel does and the 16 rows of each
// warp may be any 16 outputs (its own output row). B (the weights) stays in shared memory, read by
// the tensor cores through a matrix descriptor (checked on the GPU by dev/wgmma_probe.cu); the
// accumulators come back in registers, each warp's 16 rows in the mma.sync C fragments' layout per
// n8 tile (wgmma_accumulator_row/_column), so that the mma.sync kernel's epilogue
// (tensor_core_epilogue) serves both.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/bank/tensor_core_layout.h"

namespace ndconv::cuda_bank {

struct WgmmaShape {
  using S = TensorCoreShape;
  static constexpr int kK = S::kChunkRows * S::kRowTaps;  ///< 32 bytes of K per instruction
  /// B of one K chunk in shared memory, K-major without swizzle: core matrices of 8 columns x 16
  /// bytes of K (128 contiguous bytes, column n % 8 at 16 (n % 8)); the chunk's two core matrices
  /// along K kKCoreBytes apart, its groups of 8 columns kNCoreBytes apart.
  static constexpr int kKCoreBytes = 128;
  static constexpr int kNCoreBytes = 256;
  /// The wgmma N of a kernel of `rows` output rows per warp: the pass's columns for each row (a
  /// warp's two rows share its A fragments, each row its own B columns, TensorCoreTile's Rows 2).
  static constexpr int n(int rows) { return S::kColumns * rows; }
  /// int32 accumulator registers per thread per M block of 64.
  static constexpr int accumulators(int rows) { return n(rows) / 2; }
  static constexpr int chunk_bytes(int rows) { return kK * n(rows); }
  /// K chunks per tap frame (TensorCoreTile's kChunks) and a pass's B bytes for one tap frame.
  static constexpr int chunks(int rows) { return rows == 1 ? S::kChunks : 2 * S::kK3; }
  static constexpr int frame_bytes(int rows) { return chunks(rows) * chunk_bytes(rows); }
};
static_assert(WgmmaShape::n(2) <= 256 && WgmmaShape::n(1) % 8 == 0, "wgmma N");
static_assert(WgmmaShape::kKCoreBytes * 2 == WgmmaShape::kNCoreBytes, "a chunk's core matrices");

/// Byte of a chunk's B (above) that holds K index k (0..31) of column n.
NDCONV_HD int wgmma_b_offset(int k, int n) {
  using W = WgmmaShape;
  return n / 8 * W::kNCoreBytes + k / 16 * W::kKCoreBytes + n % 8 * 16 + k % 16;
}

/// The matrix descriptor (PTX ISA, "matrix descriptor format") of an operand at shared-memory byte
/// address `address` (a multiple of 16): bits 0-13 the address / 16, 16-29 the leading dimension
/// byte offset / 16, 32-45 the stride dimension byte offset / 16, 62-63 the swizzle mode (0: none).
NDCONV_HD uint64_t wgmma_descriptor(uint32_t address, int leading_bytes, int stride_bytes) {
  return uint64_t{(address >> 4) & 0x3fffu} | uint64_t{(leading_bytes >> 4) & 0x3fffu} << 16 |
         uint64_t{(stride_bytes >> 4) & 0x3fffu} << 32;
}
/// The byte, from the descriptor's address, that the tensor cores read for K index k (0..31) of
/// column n of a K-major operand without swizzle (8-bit elements): core matrix (k / 16, n / 8) at
/// (k / 16) leading + (n / 8) stride bytes, its column n % 8 the 16 bytes at 16 (n % 8). The host
/// emulation reads B through this; dev/wgmma_probe.cu checks it on the GPU.
NDCONV_HD int64_t wgmma_descriptor_byte(uint64_t descriptor, int k, int n) {
  const int leading = static_cast<int>(descriptor >> 16 & 0x3fffu) * 16;
  const int stride = static_cast<int>(descriptor >> 32 & 0x3fffu) * 16;
  return int64_t{k / 16} * leading + int64_t{n / 8} * stride + n % 8 * 16 + k % 16;
}
/// A chunk's B at `address` in the layout of wgmma_b_offset: leading offset the step along K,
/// stride offset the step between groups of 8 columns. `swap` exchanges the two offsets: the
/// probe's other reading of the format (dev/wgmma_probe.cu), never the product's.
NDCONV_HD uint64_t wgmma_b_descriptor(uint32_t address, bool swap = false) {
  using W = WgmmaShape;
  return swap ? wgmma_descriptor(address, W::kNCoreBytes, W::kKCoreBytes)
              : wgmma_descriptor(address, W::kKCoreBytes, W::kNCoreBytes);
}

/// Accumulator register r (0 .. N / 2 - 1) of lane `lane` of warp w (0..3) of the warpgroup
/// (PTX ISA, wgmma .m64nNk32 D fragment): the row of the 64 and the column of the N.
NDCONV_HD int wgmma_accumulator_row(int w, int lane, int r) {
  return 16 * w + lane / 4 + 8 * (r % 4 / 2);
}
NDCONV_HD int wgmma_accumulator_column(int lane, int r) {
  return 8 * (r / 4) + 2 * (lane % 4) + r % 2;
}
/// A register q (0..3) of lane `lane` of warp w: the row of the 64 and its byte i's K index.
NDCONV_HD int wgmma_a_row(int w, int lane, int q) {
  return 16 * w + a_fragment_row(lane, q);
}

/// Paired tails (the warp-specialised kernel's PairTails, frames of one output row per warp): a 7^3
/// frame's 49 tap rows take 13 chunks, the last holding one tap row (K slots 0-7) and 24 zero
/// slots. Frames 2p and 2p + 1 share one such chunk, run first in frame 2p + 1 while both frames'
/// rows are staged: K 0-7 frame 2p's tail row, K 8-15 frame 2p + 1's; 2 kChunks - 1 chunks a pair
/// (a 7-frame tile: 88 instead of 91). B per pass: frame 2p's chunks 0 .. kChunks - 2, the pair's
/// tail chunk, frame 2p + 1's chunks 0 .. kChunks - 2; an odd last frame its kChunks; the pass's
/// stride as wgmma_weights' (zeros after). The first chunk of frame `frame` in that order:
NDCONV_HD int wgmma_pair_chunk(int frame) {
  constexpr int kC = TensorCoreShape::kChunks;
  return frame / 2 * (2 * kC - 1) + frame % 2 * (kC - 1);
}
/// The row table (TensorCoreTile::chunk_rows' words, from the warp's window in the staged rows) of
/// the second frame of a pair, whose buffer is the tile's buffers apart from the first frame's
/// (`other`: the first's words less the second's): chunk 0 the tail chunk (groups t = 0, 1 of the
/// low half from the first frame's tail row, t = 2, 3 from the second's; the high half reads row 0
/// under zero weights), chunk c > 0 the frame's chunk c - 1.
template <class Tile>
NDCONV_HD void wgmma_pair_chunk_rows(int other, int c, int t, int& lo, int& hi) {
  static_assert(Tile::kRows == 1 && Tile::kChunks == TensorCoreShape::kChunks &&
                    Tile::kChunks * 8 - Tile::TapShape::kTapGroups >= 6,
                "the tail chunk's one tap row in groups t = 0, 1 of its low half");
  constexpr int kTail = 8 * (Tile::kChunks - 1);
  if (c > 0) {
    Tile::chunk_rows(c - 1, t, lo, hi);
    return;
  }
  lo = t < 2 ? other + Tile::group_word(kTail + t) : Tile::group_word(kTail + t - 2);
  hi = 0;
}

/// The weights as the wgmma kernel of `rows` output rows per warp keeps them in shared memory: per
/// pass, per tap frame, per K chunk, its B (chunk_bytes(rows) bytes at wgmma_b_offset): column n
/// is column n % kColumns of the mma.sync weight chunk c rows + n / kColumns
/// (tensor_core_weights with `rows`, weight_tap_row); the scales as TensorCoreWeights'.
struct WgmmaWeights {
  std::vector<uint8_t> b;
  std::vector<float> scales;
};

/// `mma_sync`'s weights (tensor_core_weights(geometry, taps, rows)) laid out for the wgmma kernel
/// of `rows` rows per warp: the same digits in the same columns.
WgmmaWeights wgmma_weights(const TensorCoreGeometry& geometry, const TensorCoreWeights& mma_sync,
                           int rows);

/// wgmma_weights' B (one row per warp) in the paired tails' order (wgmma_pair_chunk), in place.
void wgmma_pair_tails(const TensorCoreGeometry& geometry, WgmmaWeights& w);

}  // namespace ndconv::cuda_bank
