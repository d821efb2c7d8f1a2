// The filter bank on the tensor cores for 8-bit inputs (tensor_core_kernel.cuh): the precision
// scheme and the operands' layouts, shared by the kernel, its host set-up (tensor_core_layout.cpp)
// and the host emulation that CI runs without a GPU (tests/gpu/tensor_core_emulation_test.cpp).
//
// Precision: core/int8_digits.h (the taps as kSlices signed 8-bit digits per filter, one scale per
// filter, an exact int32 accumulator per digit, combined in a fixed order), shared with the other
// backends; the accumulators stay exact here since K is below 2^9 (the static_assert below), and
// the host emulation gives the GPU's values bit for bit.
//
// The GEMM (mma.sync m16n8k32, u8 x s8 -> s32): M = 16 consecutive outputs along x; N = the pass's
// kFilters filters x kSlices digits (column_filter, column_digit); K = tap rows (j1, j3) (canonical
// axes; a 3D volume's (y, z)) of 8 taps along x each (the filter's k0 <= 8 taps, zeros after), 4
// tap rows per 32-wide K chunk, tap row r = j3 * k1 + j1, rows past k1 * k3 zero.
//
// One N-D mapping: the filter's taps along canonical axis 2 (a 4D volume's z; 1 in 3D) are tap
// frames, an outer loop over K: frame j2 is the 3D bank's GEMM on the input planes m2 + j2, its
// own weight chunks after the previous frame's, summed into the same int32 accumulators (exact).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.h"
#include "core/int8_digits.h"
#include "ndconv/types.h"

namespace ndconv::cuda_bank {

struct TensorCoreShape {
  static constexpr int kSlices = 4;                    ///< weight digits the kernel is compiled for
  static constexpr int kFilters = 12;                  ///< per pass
  static constexpr int kColumns = kFilters * kSlices;  ///< N of a pass
  static constexpr int kNTiles = kColumns / 8;         ///< n8 tiles
  static constexpr int kRowTaps = 8;                   ///< K per tap row (k0 padded)
  static constexpr int kChunkRows = 4;                 ///< tap rows per K chunk of 32
  static constexpr int kChunkGroups = 8;  ///< groups of 4 taps per K chunk (TensorCoreTaps)
  static constexpr int kK1 = 7, kK3 = 7;  ///< the tap rows compiled: 7 x 7
  static constexpr int kTapRows = kK1 * kK3;
  static constexpr int kChunks = (kTapRows + kChunkRows - 1) / kChunkRows;
  static constexpr int kMaxTapRows = kChunks * kChunkRows;
  static constexpr int kMaxFrames = 7;  ///< tap frames (canonical axis 2): a 4D 7^4 filter
  /// The 8-bit padded rows' length: whole kRowAlign-byte tiles along x and kRowOverhang bytes of
  /// the last tile's overhang (its windows' last aligned words), so every tile of up to kRowAlign
  /// outputs along x stages whole 16-byte chunks inside its row.
  static constexpr int kRowAlign = 64;
  static constexpr int kRowOverhang = 16;
  /// 32-bit words of a pass's weight fragments per tap frame: [chunk][n tile pair][lane][4]
  /// (fragment_word); a pass holds its frames' one after another.
  static constexpr int kFragmentWords = kChunks * kNTiles * 32 * 2;
};

static_assert(TensorCoreShape::kColumns % 8 == 0, "whole n8 tiles");

/// A filter's K slots: its tap rows (j1, j3), each as `groups` groups of 4 taps along x (an A
/// register's 4-byte window; group q the input row 4q bytes on, one aligned word), 8 groups per K
/// chunk of 32 in the order group G = tap row * groups + q, groups past the filter zero: 2 groups
/// a tap row for up to 8 taps (7^3, 7^4: the 8 K slots of the MMA's layout), 3 for 9 to 12 (9^4:
/// 12 slots a tap row where two rows of 8 would take 16). The compiled shapes
/// (TensorCoreTapShape): the quadrature filters' 7 x 7 tap rows of 2 groups and the
/// reconstruction's 9 x 9 of 3.
struct TensorCoreTaps {
  int k1 = TensorCoreShape::kK1, k3 = TensorCoreShape::kK3, groups = 2;
  NDCONV_HD constexpr int tap_rows() const { return k1 * k3; }
  NDCONV_HD constexpr int tap_groups() const { return tap_rows() * groups; }
  NDCONV_HD constexpr int chunks() const {
    return (tap_groups() + TensorCoreShape::kChunkGroups - 1) / TensorCoreShape::kChunkGroups;
  }
  /// 32-bit words of a pass's B fragments per tap frame with one output row per warp.
  NDCONV_HD constexpr int fragment_words() const {
    return chunks() * TensorCoreShape::kNTiles * 32 * 2;
  }
};

/// A compiled K shape: K1 x K3 tap rows of Groups groups each, up to MaxFrames tap frames.
template <int K1, int K3, int Groups, int MaxFrames>
struct TensorCoreTapShape {
  static constexpr int kK1 = K1, kK3 = K3, kGroups = Groups, kMaxFrames = MaxFrames;
  static constexpr TensorCoreTaps kTaps{K1, K3, Groups};
  static constexpr int kTapRows = kTaps.tap_rows();
  static constexpr int kTapGroups = kTaps.tap_groups();
  static constexpr int kChunks = kTaps.chunks();
  /// The padded rows' bytes past the last tile's outputs: its last windows' words, 16 more for
  /// groups past the second.
  static constexpr int kRowOverhang = TensorCoreShape::kRowOverhang * (Groups > 2 ? 2 : 1);
  static_assert(Groups >= 2 && Groups <= 4, "tap rows of up to 16 taps");
  // The accumulators' bound (as for TensorCoreShape below): exact in int32 over every frame.
  static_assert(int64_t{255} * 127 * kChunks * 32 * MaxFrames < (int64_t{1} << 31),
                "accumulators of every frame exact in int32");
};
/// The quadrature bank's filters (up to 8 x 7 x 7 taps, 7 frames).
using TensorCoreQuadratureTaps =
    TensorCoreTapShape<TensorCoreShape::kK1, TensorCoreShape::kK3, 2, TensorCoreShape::kMaxFrames>;
/// The reconstruction's filters (9 to 12 taps along x, 3 groups a tap row): 11 x 11 tap rows and
/// up to 11 frames (the default 11^4, 11^3 in 3D), 9 x 9 and up to 9 (the echo preset's 9^4).
using TensorCoreReconstructionTaps11 = TensorCoreTapShape<11, 11, 3, 11>;
using TensorCoreReconstructionTaps9 = TensorCoreTapShape<9, 9, 3, 9>;
static_assert(TensorCoreQuadratureTaps::kChunks == TensorCoreShape::kChunks, "one narrow shape");
// The accumulators' bound: 255 x 127 per tap, kMaxTapRows x 8 taps per frame: below 2^24 for one
// frame (3D: exact in float), below 2^31 for kMaxFrames (4D: exact in int32; combine_slices rounds
// each conversion above 2^24, int8_digits.h).
static_assert(int64_t{255} * 127 * TensorCoreShape::kMaxTapRows * TensorCoreShape::kRowTaps <
                  (int64_t{1} << 24),
              "accumulators of one frame exact in float");
static_assert(int64_t{255} * 127 * TensorCoreShape::kMaxTapRows * TensorCoreShape::kRowTaps *
                      TensorCoreShape::kMaxFrames <
                  (int64_t{1} << 31),
              "accumulators of every frame exact in int32");

/// Where a padded 8-bit volume's rows are: as the FP32 bank's padded input (the same rows, the
/// boundary applied), each row `row_bytes` long (a multiple of 16; zeros past the float rows).
struct TensorCoreGeometry {
  Index outputs{1, 1, 1, 1};  ///< canonical output extents
  Index filter{1, 1, 1, 1};   ///< canonical filter extents
  int count = 0;              ///< filters
  Index padded_extent{0, 1, 1, 1};
  int64_t row_bytes = 0;
  int passes() const { return (count + TensorCoreShape::kFilters - 1) / TensorCoreShape::kFilters; }
  /// Tap frames: the filter's taps along canonical axis 2 (1 in 3D, 7 for a 4D 7^4 filter).
  int frames() const { return static_cast<int>(filter[2]); }
  /// The filter's K slots (TensorCoreTaps): 2 groups of 4 taps a tap row up to 8 taps along x,
  /// else one per 4 taps.
  TensorCoreTaps taps() const {
    return {static_cast<int>(filter[1]), static_cast<int>(filter[3]),
            filter[0] > TensorCoreShape::kRowTaps ? static_cast<int>(filter[0] + 3) / 4 : 2};
  }
  int64_t padded_bytes() const {
    return row_bytes * padded_extent[1] * padded_extent[2] * padded_extent[3];
  }
  int64_t voxels() const { return outputs[0] * outputs[1] * outputs[2] * outputs[3]; }
};

/// The padded row length in bytes for n0 outputs along x and tap rows of `groups` groups of 4
/// taps: every block's staged chunks inside it.
inline int64_t tensor_core_row_bytes(int64_t n0, int groups = 2) {
  using S = TensorCoreShape;
  return (n0 + S::kRowAlign - 1) / S::kRowAlign * S::kRowAlign +
         S::kRowOverhang * (groups > 2 ? 2 : 1);
}

/// Why the kernel cannot run this bank (empty when it can): the filter's canonical extents must
/// be k0 <= 8 by 7 x k2 x 7 with k2 from 1 to kMaxFrames (a 3D volume's 7^3, a 4D volume's 7^4,
/// and narrower along x); for the weighted sum (`weighted`), k0 from 9 to 12 by 11 x k2 x 11 with
/// k2 up to 11 or by 9 x k2 x 9 with k2 up to 9 (TensorCoreReconstructionTaps11, 9: the
/// reconstruction's 11^4 and 11^3, the echo preset's 9^4).
std::string tensor_core_cannot_implement(const Index& canonical_filter, bool weighted = false);

// ---- The fragments' layouts (PTX ISA, mma.m16n8k32 with 8-bit operands) ------------------------

/// A fragment register q (0..3) of lane (g = lane / 4, t = lane % 4): the output row m of the M
/// tile and the tap row within the K chunk (0..3); its 4 bytes are taps dx = 4 (t % 2) + 0..3.
NDCONV_HD int a_fragment_row(int lane, int q) {
  return lane / 4 + 8 * (q & 1);
}
NDCONV_HD int a_fragment_tap_row(int lane, int q) {
  return 2 * (q >> 1) + (lane % 4) / 2;
}
NDCONV_HD int a_fragment_dx(int lane) {
  return 4 * (lane % 4 % 2);
}
/// Its byte i's K index (tap row within the chunk * 8 + dx).
NDCONV_HD int a_fragment_k(int lane, int q, int i) {
  return 16 * (q >> 1) + 4 * (lane % 4) + i;
}

/// B fragment register q (0, 1) of a lane, its byte i: the K index (tap row within the chunk * 8 +
/// dx) and the column within the n tile.
NDCONV_HD int b_fragment_k(int lane, int q, int i) {
  return 16 * q + 4 * (lane % 4) + i;
}
NDCONV_HD int b_fragment_column(int lane) {
  return lane / 4;
}

/// The filter (within the pass) and the digit of column j of n tile n. The n tiles go in pairs:
/// pair p holds filters 4p to 4p + 3, tile 2p their digits 0 and 1, tile 2p + 1 digits 2 and 3,
/// column j filter 4p + j / 2. A lane's C fragments (columns 2t, 2t + 1 of each tile) then hold
/// all four digits of filter 4p + t at both its outputs, with no exchange between lanes.
NDCONV_HD int column_filter(int n, int j) {
  return 4 * (n / 2) + j / 2;
}
NDCONV_HD int column_digit(int n, int j) {
  return 2 * (n % 2) + j % 2;
}

/// C fragment register q (0..3): the output row of the M tile and the column of the n tile.
NDCONV_HD int c_fragment_row(int lane, int q) {
  return lane / 4 + 8 * (q >> 1);
}
NDCONV_HD int c_fragment_column(int lane, int q) {
  return 2 * (lane % 4) + (q & 1);
}

/// The weighted sum's order (the kernel's epilogue and the host emulation): a lane adds its
/// filters t, t + 4, t + 8 (n tile pairs p = 0, 1, 2) by fused multiply-adds from 0 in that order,
/// skipping filters past the bank's; the quad's four lanes then add their sums by two butterfly
/// shuffles (xor 1, then xor 2), which gives every lane (s0 + s1) + (s2 + s3).
NDCONV_HD float lane_weighted_sum(float sum, float weight, float response) {
#ifdef __CUDA_ARCH__
  return fmaf(weight, response, sum);
#else
  return std::fma(weight, response, sum);
#endif
}
NDCONV_HD float quad_sum(const float (&lane_sums)[4]) {
  return (lane_sums[0] + lane_sums[1]) + (lane_sums[2] + lane_sums[3]);
}

/// Word of the fragments array for (chunk, n tile, lane, register): n tiles in pairs, so that one
/// 128-bit load gives a lane both registers of two n tiles (n even: words 0, 1; n odd: 2, 3).
NDCONV_HD int fragment_word(int chunk, int ntile, int lane, int q) {
  return ((chunk * (TensorCoreShape::kNTiles / 2) + ntile / 2) * 32 + lane) * 4 + 2 * (ntile % 2) +
         q;
}
static_assert(TensorCoreShape::kNTiles % 2 == 0, "n tiles in pairs");

/// A pass's filters split (TensorCoreShape::kSlices digits) and laid out as B fragments, and the
/// filters' scales: fragments[(pass * frames + frame) * words + fragment_word(...)] with `words`
/// the fragment words of one frame (TensorCoreShape::kFragmentWords for one row per warp),
/// scales[filter].
struct TensorCoreWeights {
  std::vector<int32_t> fragments;
  std::vector<float> scales;
};

/// `taps` (geometry.count filters contiguous, correlation order, x fastest) as the kernel of `rows`
/// output rows per warp reads them (emulate_tensor_core_bank reads those of one row). Requires
/// tensor_core_cannot_implement(geometry.filter) to be empty.
TensorCoreWeights tensor_core_weights(const TensorCoreGeometry& geometry, const float* taps,
                                      int rows = 1);

/// Bytes of tensor_core_weights(geometry, taps, rows): the fragments and the scales.
int64_t tensor_core_weights_bytes(const TensorCoreGeometry& geometry, int rows);

/// The weights' K chunks per pass for a kernel of `rows` output rows per warp (TensorCoreTile's
/// kWeightChunks), and the group (tap row j3 * k1 + j1 times taps.groups, plus the group within
/// the row) that group j (0..7, K slots 4j .. 4j + 3) of weight chunk `chunk` meets, or -1 where
/// none (zero weights): with one row, chunk c holds groups 8c + j; with two (2 groups a tap row
/// only), weight chunk 2c + v is K chunk c (plane c / 2, staged rows 4 (c % 2) + j / 2 of the
/// warp's first) for its output row v, tap row j1 = 4 (c % 2) + j / 2 - v, group j % 2.
int weight_chunks(int rows, const TensorCoreTaps& taps = {});
int weight_group(int chunk, int j, int rows, const TensorCoreTaps& taps = {});

/// The largest split_error over the filters of `taps` with `slices` digits.
double worst_split_error(const TensorCoreGeometry& geometry, const float* taps, int slices);

/// Converts the FP32 bank's padded input (padded_extent rows of `float_row_length` floats) into the
/// 8-bit padded volume (geometry.padded_bytes() bytes) on `threads` threads. Returns false, leaving
/// `bytes` unspecified, when a value is not an integer in 0..255 (NaN included): the kernel cannot
/// take that input.
bool pack_padded_bytes(const TensorCoreGeometry& geometry, const float* padded,
                       int64_t float_row_length, uint8_t* bytes, int threads = 1);

/// Fills copies 1 to 3 of `bytes` (4 x geometry.padded_bytes() bytes, copy 0 the 8-bit padded
/// volume): copy s holds the volume from byte s on (zeros past its end).
void shift_padded_copies(const TensorCoreGeometry& geometry, uint8_t* bytes);

/// The kernel's input image from the FP32 bank's padded input: the 8-bit padded volume
/// (pack_padded_bytes) and, for `copies` 4 (a tile that stages shifted copies), its shifted copies
/// after it (shift_padded_copies). False when the input is not 8-bit.
bool padded_input_image(const TensorCoreGeometry& geometry, const float* padded,
                        int64_t float_row_length, int copies, int threads,
                        std::vector<uint8_t>& image);

/// The kernel's arithmetic on the host: filter f's response at every output (contiguous canonical
/// volumes, f at out + f * geometry.voxels()) from the 8-bit padded volume and the laid-out
/// weights, the products summed in int32 per column as the MMA does, then combine_slices. The same
/// values as the GPU bit for bit.
void emulate_tensor_core_bank(const TensorCoreGeometry& geometry, const uint8_t* padded,
                              const TensorCoreWeights& weights, float* out);

/// The weighted sum as the kernel forms it (tensor_core_kernel.cuh, Weighted): each filter's
/// response as emulate_tensor_core_bank's, then at each output sum (one volume of
/// geometry.voxels()) = the quad's sum (tensor_core_epilogue::quad_sum) of its lanes' sums
/// (lane_weighted_sum) of weights[f * geometry.voxels() + v] times response f. geometry.count <=
/// TensorCoreShape::kFilters (one pass).
void emulate_tensor_core_weighted_sum(const TensorCoreGeometry& geometry, const uint8_t* padded,
                                      const TensorCoreWeights& weights, const float* filter_weights,
                                      float* sum);

/// The same integer arithmetic with `slices` digits (2 to 4; the kernel is compiled for
/// TensorCoreShape::kSlices), straight from the taps, without the fragments: what the accuracy
/// test compares for each choice of the slice count.
void emulate_sliced_bank(const TensorCoreGeometry& geometry, const uint8_t* padded,
                         const float* taps, int slices, float* out);

}  // namespace ndconv::cuda_bank
