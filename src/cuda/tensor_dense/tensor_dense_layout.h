// One dense T^3 filter (T = 7 or 11) on an 8-bit 3D volume on the tensor cores (mma.sync, u8 x s8
// -> s32, sm_80 and later; issue 49): the mapping, the operands' layouts and the host side shared
// by the kernel (tensor_dense_kernel.cuh), its launch (tensor_dense.cu) and the host emulation that
// CI runs without a GPU (tests/gpu/tensor_dense_emulation_test.cpp).
//
// Precision: core/int8_digits.h, as the tensor-core bank's: the taps as 4 signed 8-bit digits with
// one scale, one exact int32 sum per digit (255 x 127 x 1331 < 2^31), combine_slices in a fixed
// order; the result is deterministic and the emulation gives it bit for bit.
//
// The GEMM (a banded Toeplitz along y, the data as the A operand, the weights as B):
//   M = 16 consecutive outputs along x;
//   N = 2 consecutive outputs along y (j) x 4 digits (s): 8, one n8 tile, column n = 4 j + s;
//   K = one input plane's window: T + 1 rows along y (w) x G = ceil(T / 4) groups of 4 bytes along
//       x (a_x = 4 a + i), group gp = w G + a: 16 groups (2 k32 chunks) for 7, 36 (4 k32 chunks and
//       one k16) for 11; B[(w, a_x)][(j, s)] = digit s of tap (a_x, w - j, c), zero outside the
//       band (w - j in 0 .. T - 1) and past a_x = T - 1.
// Along z the volume streams through the block plane by plane: input plane z' meets output planes
// z' - c for the T tap planes c, so each A fragment (built once from shared memory) feeds T MMAs,
// into T rolling accumulators (slot = output plane mod T), with every tap plane's B fragments held
// in registers for the whole launch (4 or 9 registers a tap plane). Useful share of the MMAs'
// work: T^2 taps of the window's K per column and digit: 49 / 64 / 4 = 19.1% (7), 121 / 144 / 4 =
// 21.0% (11).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.h"
#include "core/int8_digits.h"
#include "ndconv/stored.h"
#include "ndconv/types.h"

namespace ndconv::cuda_tensor_dense {

/// The K shape of a T^3 filter.
template <int T>
struct TensorDenseShape {
  static constexpr int kTaps = T;
  static constexpr int kJ = 2;                     ///< outputs along y per n8 tile
  static constexpr int kSlices = 4;                ///< weight digits
  static constexpr int kW = T + kJ - 1;            ///< window rows along y
  static constexpr int kG = (T + 3) / 4;           ///< groups of 4 bytes along x per row
  static constexpr int kGroups = kW * kG;          ///< K groups per input plane
  static constexpr int kFull = kGroups / 8;        ///< k32 chunks
  static constexpr bool kHalf = kGroups % 8 != 0;  ///< and one k16
  static_assert(kGroups % 8 == 0 || kGroups % 8 == 4, "whole k32 chunks and at most one k16");
  static constexpr int kBRegs = 2 * kFull + (kHalf ? 1 : 0);  ///< per tap plane per lane
  /// K of one input plane (what the MMAs execute per output and digit).
  static constexpr int kPlaneK = 32 * kFull + (kHalf ? 16 : 0);
  static_assert(int64_t{255} * 127 * kPlaneK * T < (int64_t{1} << 31), "exact int32 sums");
};

/// Group gp of a plane's K: its row w along y and its group a along x (bytes 4a .. 4a + 3).
template <int T>
constexpr NDCONV_HD int group_row(int gp) {
  return gp / TensorDenseShape<T>::kG;
}
template <int T>
constexpr NDCONV_HD int group_col(int gp) {
  return gp % TensorDenseShape<T>::kG;
}

/// A block: WX x WY warps, each MT M tiles along x (16 MT outputs) by 2 outputs along y, streaming
/// its output planes along z with the input planes' rows staged in a ring of kRing planes;
/// MinBlocks: the blocks per SM its registers must allow (__launch_bounds__).
template <int T, int MT, int WX, int WY, int MinBlocks = 1>
struct TensorDenseTile {
  using S = TensorDenseShape<T>;
  static constexpr int kTaps = T, kMTiles = MT, kWarpsX = WX, kWarpsY = WY;
  static constexpr int kMinBlocks = MinBlocks;
  static constexpr int kThreads = 32 * WX * WY;
  static constexpr int kBX = 16 * MT * WX, kBY = 2 * WY;  ///< outputs along x, y
  static constexpr int kRows = kBY + T - 1;               ///< staged rows per plane
  /// Staged words per row: the outputs' windows and the funnel shift's next word, 16-byte chunks.
  static constexpr int kWords = ((kBX + 4 * S::kG + 4) / 4 + 3) / 4 * 4;
  /// Words between staged rows: a lane's two rows in distinct banks.
  static constexpr int kStride = kWords % 32 == 0 ? kWords + 4 : kWords;
  static constexpr int kPlaneWords = kRows * kStride;
  /// Planes staged at once (one in use, T - 1 in flight): T, so that the plane loop, unrolled by
  /// T, finds each plane's buffer at a constant offset.
  static constexpr int kRing = T;
  /// 16-byte copies a plane takes and a thread's share of them.
  static constexpr int kStageItems = kRows * (kWords / 4);
  static constexpr int kStageIters = (kStageItems + kThreads - 1) / kThreads;
  static constexpr int kSharedBytes = kRing * kPlaneWords * 4;
};

/// The compiled tiles (the fastest of dev/dense_tc_probe.cu's shapes on the H200;
/// docs/performance.md, "dense filters on the tensor cores").
using TensorDenseTile7 = TensorDenseTile<7, 2, 1, 4>;
using TensorDenseTile11 = TensorDenseTile<11, 2, 1, 4>;

/// The word (from the staged plane's first) where A register q of M tile m of K chunk ch (ch ==
/// kFull: the k16, q < 2) of lane `lane` in warp (wx, wy) starts: group gp = 8 ch + 4 (q >> 1) + t
/// (the k16's: 8 kFull + t), its row 2 wy + w, byte 16 (MT wx + m) + g + 8 (q & 1) + 4 a; the 4
/// bytes are this word and the next funnel-shifted right by a_shift(lane) bits (the PTX ISA's
/// fragment: row g + 8 (q & 1), K 16 (q >> 1) + 4 t + i). As 16 (..) + 8 (q & 1) is a multiple
/// of 4, the word splits into the lane's part for (ch, h = q >> 1), a_lane_offset (held in
/// registers all along), and a constant, a_fixed_offset: 4 m + 2 (q & 1) (the k16: 4 m + 2 q).
template <class Tile>
NDCONV_HD int a_lane_offset(int lane, int wx, int wy, int ch, int h) {
  using S = typename Tile::S;
  const int g = lane / 4, t = lane % 4;
  const int gp = ch < S::kFull ? 8 * ch + 4 * h + t : 8 * S::kFull + t;
  return (2 * wy + group_row<Tile::kTaps>(gp)) * Tile::kStride + 4 * Tile::kMTiles * wx +
         (g + 4 * group_col<Tile::kTaps>(gp)) / 4;
}
template <class Tile>
NDCONV_HD int a_fixed_offset(int ch, int q, int m) {
  return 4 * m + 2 * (ch < Tile::S::kFull ? q & 1 : q);
}
template <class Tile>
NDCONV_HD int a_offset(int lane, int wx, int wy, int ch, int q, int m) {
  const int h = ch < Tile::S::kFull ? q >> 1 : 0;
  return a_lane_offset<Tile>(lane, wx, wy, ch, h) + a_fixed_offset<Tile>(ch, q, m);
}
NDCONV_HD int a_shift(int lane) {
  return 8 * (lane / 4 % 4);
}

/// The output (from the block's first) a lane writes for M tile m after the epilogue's exchange:
/// x 16 (MT wx + m) + g + 8 (t & 1), y 2 wy + t / 2.
template <class Tile>
NDCONV_HD int out_x(int lane, int wx, int m) {
  return 16 * (Tile::kMTiles * wx + m) + lane / 4 + 8 * (lane % 4 & 1);
}
NDCONV_HD int out_y(int lane, int wy) {
  return 2 * wy + lane % 4 / 2;
}

/// The epilogue's exchange between lanes t and t ^ 1 of a quad (one shuffle per value): lane t
/// holds C columns 2t, 2t + 1 (digits 2 (t % 2), + 1 of output j = t / 2) at rows g and g + 8; an
/// even lane keeps row g and sends its row g + 8 values, an odd lane the reverse, so each ends
/// with all four digits of one output. sent(): the value i (0, 1) a lane sends; lane_digits(): its
/// digits from its C registers and the two it received.
NDCONV_HD int32_t sent(const int32_t* c, bool odd, int i) {
  return odd ? c[i] : c[2 + i];
}
NDCONV_HD void lane_digits(const int32_t* c, int32_t r0, int32_t r1, bool odd, int32_t (&d)[4]) {
  d[0] = odd ? r0 : c[0];
  d[1] = odd ? r1 : c[1];
  d[2] = odd ? c[2] : r0;
  d[3] = odd ? c[3] : r1;
}

/// combine_slices (core/int8_digits.h) of one output's four digit sums: for T = 7 the join
/// acc[3] + 2^7 acc[2] is below 2^31 (each |acc| <= 255 x 127 x 343 < 2^24), so it is formed in
/// int32 and converted once: the same integer, the same correctly rounded float as combine_slices'
/// int64 join, without 64-bit arithmetic in the kernel's epilogue; else combine_slices itself.
template <int T>
NDCONV_HD float combine_digits(const int32_t (&d)[4], float scale) {
  constexpr int64_t kLargest = int64_t{255} * 127 * T * T * T;
  if constexpr (kLargest * ((1 << detail::kDigitBits) + 1) < (int64_t{1} << 31)) {
    constexpr float kStep = 1.0f / (1 << detail::kDigitBits);
    float t = static_cast<float>(d[3] + d[2] * (1 << detail::kDigitBits)) * kStep;
    t = fmaf(t, kStep, static_cast<float>(d[1]));
    t = fmaf(t, kStep, static_cast<float>(d[0]));
    return t * scale;
  } else {
    return detail::combine_slices(d, 4, scale);
  }
}

/// The 8-bit padded volume a launch reads: plane z, row y, byte x is the input (the boundary
/// applied) at (x, y, z) + offset, for x < outputs[0] + T - 1 and likewise along y and z; zeros
/// past those (the last tiles' outputs past the volume are computed, not stored).
struct TensorDenseGeometry {
  int taps = 0;                    ///< T
  int64_t outputs[3] = {0, 0, 0};  ///< output extents x, y, z
  int64_t row_bytes = 0, rows = 0, planes = 0;
  int64_t padded_bytes() const { return row_bytes * rows * planes; }
  int64_t voxels() const { return outputs[0] * outputs[1] * outputs[2]; }
};

/// The geometry for `outputs` and a T^3 filter under the tile of T (TensorDenseTile7, 11 below).
TensorDenseGeometry tensor_dense_geometry(int taps, const int64_t (&outputs)[3]);

/// Why the kernel cannot run a filter of `dims` axes and these extents (empty when it can): a 3D
/// filter of 7^3 or 11^3 taps.
std::string tensor_dense_cannot_implement(int dims, const Index& filter_extent);

/// A filter's taps (T^3, correlation order, x fastest) as the kernel's B fragments, [c][r][lane]
/// (c the tap plane, r < kBRegs), and the scale of its digits.
struct TensorDenseWeights {
  std::vector<int32_t> fragments;
  float scale = 0;
};
TensorDenseWeights tensor_dense_weights(int taps, const float* filter);

/// The padded volume of `g` from an 8-bit input (input.type UInt8; strides in values): output o
/// reads input o + offset + j under `boundary` (Zero for outside; Constant is the engine's).
std::vector<uint8_t> tensor_dense_padded(const TensorDenseGeometry& g,
                                         const StoredVolumeView& input, const Index& offset,
                                         Boundary boundary, int threads = 1);

/// The kernel's arithmetic on the host, lane by lane: the blocks, the staged planes, the A
/// fragments from a_offset and the funnel shifts, the MMAs as the PTX ISA lays out their
/// fragments, the rolling slots and the epilogue's exchange, for `planes_per_block` output planes
/// a block; `out` (g.voxels() floats, x fastest). The same values as the GPU bit for bit.
void emulate_tensor_dense(const TensorDenseGeometry& g, const uint8_t* padded,
                          const TensorDenseWeights& w, int planes_per_block, float* out);

/// The same outputs from the digits' integer sums straight from the taps (no fragments): what
/// the emulation and the kernel must equal.
void tensor_dense_exact(const TensorDenseGeometry& g, const uint8_t* padded, const float* filter,
                        float* out);

}  // namespace ndconv::cuda_tensor_dense
