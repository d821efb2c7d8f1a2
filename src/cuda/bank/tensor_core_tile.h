// The tensor-core bank kernel's indexing (tensor_core_kernel.cuh), host and device: the tiles, the
// rows a block stages, the A fragments' unaligned words and the epilogue's exchange of digits. The
// host emulation (tests/gpu/tensor_core_emulation_test.cpp) runs these very functions lane by lane
// in CI, so that a mistake in the kernel's index arithmetic shows without a GPU.
#pragma once

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

namespace tensor_core_tile {

using S = TensorCoreShape;

/// Input rows a block stages per tile: kRowsY along axis 1 for each of the k3 planes.
constexpr int kRowsY = S::kWarps + S::kK1 - 1;
constexpr int kStagedRows = kRowsY * S::kK3;
constexpr int kRowChunks = S::kStagedRowBytes / 16;  ///< 16-byte copies per staged row
constexpr int kTileBytes = kStagedRows * S::kPitch;
/// Shared bytes of a launch: the pass's fragments and two tiles' rows.
constexpr int kSharedBytes = S::kFragmentWords * 4 + 2 * kTileBytes;

/// A tile's first output.
struct Origin {
  int64_t x0, y0, m2, m3;
};

/// Tile i (< tiles_x * tiles_y * n2 * n3) of a pass, x fastest.
NDCONV_HD Origin tile_origin(const TensorCoreArgs& a, int64_t i) {
  Origin o;
  o.x0 = (i % a.tiles_x) * S::kWarpX;
  i /= a.tiles_x;
  o.y0 = (i % a.tiles_y) * S::kWarps;
  i /= a.tiles_y;
  o.m2 = i % a.n2;
  o.m3 = i / a.n2;
  return o;
}

/// The padded bytes that 16-byte copy `i` (< kStagedRows * kRowChunks) of a tile reads (staged row
/// (j3, yy) is padded row (y0 + yy, m2, m3 + j3)), or -1 for a row past e1 (zeros); it lands at
/// staged_offset(i) of the tile's buffer.
NDCONV_HD int64_t staged_source(const TensorCoreArgs& a, const Origin& o, int i) {
  const int row = i / kRowChunks, chunk = i % kRowChunks;
  const int j3 = row / kRowsY, yy = row % kRowsY;
  if (o.y0 + yy >= a.e1)
    return -1;
  return (((o.m3 + j3) * a.e2 + o.m2) * a.e1 + o.y0 + yy) * a.row_bytes + o.x0 + 16 * chunk;
}
NDCONV_HD int staged_offset(int i) {
  return i / kRowChunks * S::kPitch + 16 * (i % kRowChunks);
}

/// The staged row, in 32-bit words from the tile's start, that tap row r (j3 * k1 + j1) of warp 0
/// reads; rows past the filter read row 0 (their weights are zero).
NDCONV_HD int tap_row_word(int r) {
  return r >= S::kTapRows ? 0 : ((r / S::kK1) * kRowsY + r % S::kK1) * (S::kPitch / 4);
}

/// A lane's window within a staged row of its M tile 0: bytes 4 (t % 2) + g on, as the aligned
/// word it starts in and the shift (bits) into it.
NDCONV_HD int lane_word(int lane) {
  return (a_fragment_dx(lane) + (lane / 4 & ~3)) / 4;
}
NDCONV_HD int lane_shift(int lane) {
  return 8 * (lane / 4 & 3);
}

/// The 4 bytes that start `shift` bits into word `word`: two aligned loads and a funnel shift.
NDCONV_HD uint32_t unaligned_word(const uint32_t* words, int word, int shift) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(words[word], words[word + 1], shift);
#else
  return static_cast<uint32_t>(((uint64_t{words[word + 1]} << 32 | words[word]) >> shift) &
                               0xffffffffu);
#endif
}

/// The A fragment of M tile m in K chunk c: `words` at the warp's row of the staged tile plus the
/// lane's word, registers 0, 1 from tap row 4c + t / 2 (outputs g, g + 8), 2, 3 from 4c + 2 + t
/// / 2.
NDCONV_HD void a_fragment(const uint32_t* words, int c, int m, int lane, int shift,
                          uint32_t (&a)[4]) {
  const bool upper = lane % 4 >= 2;
  const int lo = upper ? tap_row_word(4 * c + 1) : tap_row_word(4 * c);
  const int hi = upper ? tap_row_word(4 * c + 3) : tap_row_word(4 * c + 2);
  a[0] = unaligned_word(words, lo + 4 * m, shift);
  a[1] = unaligned_word(words, lo + 4 * m + 2, shift);
  a[2] = unaligned_word(words, hi + 4 * m, shift);
  a[3] = unaligned_word(words, hi + 4 * m + 2, shift);
}

/// The epilogue's exchange: a lane holds digits 2 (t % 2), 2 (t % 2) + 1 of filter 2n + t / 2 at
/// output rows g (c[0], c[1]) and g + 8 (c[2], c[3]) of the M tile; even lanes keep row g, odd
/// lanes row g + 8. sent_pair: what the lane sends its neighbour (lane ^ 1); from the neighbour's
/// pair (r0, r1) the lane's four digits, 0 first.
NDCONV_HD void sent_pair(const int32_t (&c)[4], int lane, int32_t& s0, int32_t& s1) {
  const bool odd = (lane & 1) != 0;
  s0 = odd ? c[0] : c[2];
  s1 = odd ? c[1] : c[3];
}
NDCONV_HD void kept_digits(const int32_t (&c)[4], int lane, int32_t r0, int32_t r1,
                           int32_t (&digits)[4]) {
  const bool odd = (lane & 1) != 0;
  digits[0] = odd ? r0 : c[0];
  digits[1] = odd ? r1 : c[1];
  digits[2] = odd ? c[2] : r0;
  digits[3] = odd ? c[3] : r1;
}
/// The filter (within the pass) and the output along x (from the M tile's first) a lane writes for
/// n tile n.
NDCONV_HD int kept_filter(int lane, int n) {
  return 2 * n + lane % 4 / 2;
}
NDCONV_HD int kept_x(int lane) {
  return lane / 4 + 8 * (lane & 1);
}

static_assert(S::kSlices == 4 && S::kColumns == 8 * S::kNTiles,
              "the exchange gives each lane the four digits of one filter");

}  // namespace tensor_core_tile

}  // namespace ndconv::cuda_bank
