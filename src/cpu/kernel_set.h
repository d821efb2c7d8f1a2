// The CPU backend's hot loop as seen from the drivers: one function per blocking factor B that
// computes B output rows (B consecutive positions along the blocked axis) from a list of input
// rows and a weight table. The same loop is compiled once per instruction set (row_kernel.h,
// kernels_*.cpp) and chosen at run time (isa_dispatch.cpp), so that one portable binary runs
// AVX-512 or AVX2+FMA code where the CPU has it and SSE2 code elsewhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ndconv::cpu {

/// The blocking factors every instruction set is compiled for.
inline constexpr int kBlockingFactors[] = {1, 2, 4, 8};
inline constexpr int kBlockingFactorCount = 4;

/// Longest SIMD vector of any kernel set, in floats. Each source must be readable (and finite)
/// up to round_up(nx, kMaxLanes) elements; drivers pad their rows to that length.
inline constexpr int64_t kMaxLanes = 16;

inline int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

/// Length to allocate for a row that must feed `outputs` outputs with `taps` taps along x.
inline int64_t padded_row_length(int64_t outputs, int64_t taps) {
  return round_up(round_up(outputs, kMaxLanes) + taps - 1, kMaxLanes);
}

/// A run of consecutive taps of a block that all feed the same outputs first..last of the B
/// (the rows of one position along the blocked axis feed only the outputs whose footprint holds
/// it: the first and last rows of a block feed fewer than B).
struct TapSegment {
  int64_t end = 0;  ///< one past the segment's last tap; it starts where the previous one ends
  int first = 0;
  int last = 0;
};

/// The segments of a block of `factor` outputs along an axis with a filter of `k` taps along it,
/// its taps ordered by position along that axis, `taps_per_position` taps per position: position
/// j < k + factor - 1 feeds the outputs b with 0 <= j - b < k.
inline std::vector<TapSegment> block_segments(int64_t k, int factor, int64_t taps_per_position) {
  std::vector<TapSegment> segments;
  for (int64_t j = 0; j < k + factor - 1; ++j) {
    const int first = static_cast<int>(std::max<int64_t>(0, j - k + 1));
    const int last = static_cast<int>(std::min<int64_t>(factor - 1, j));
    if (segments.empty() || segments.back().first != first || segments.back().last != last)
      segments.push_back({0, first, last});
    segments.back().end = (j + 1) * taps_per_position;
  }
  return segments;
}

/// One block of B output rows.
///   dst[b][x] = sum over the taps t of the segments that feed b of weights[t * B + b] *
///   sources[t][x]
/// for x in [0, nx), summed in tap order. Each "tap" is an input row already shifted by the tap's
/// offset along x, so the kernel runs one flat loop over the taps of each segment (no short
/// inner loop along x taps whose exit costs more than its body for small filters). Taps outside
/// the segments that feed an output are skipped, not multiplied by zero: each output sums exactly
/// its filter's taps, in the order a block of one output sums them.
struct RowBlock {
  const float* const* sources = nullptr;  ///< the segments' taps: rows, x contiguous
  /// Floats added to every source: a driver whose next block reads the same rows one row stride
  /// further reuses its list of sources.
  int64_t source_offset = 0;
  const TapSegment* segments = nullptr;
  int segment_count = 0;
  const float* weights = nullptr;  ///< [tap][B]
  int64_t nx = 0;                  ///< outputs along x
  float* const* dst = nullptr;     ///< B output rows, x contiguous, nx elements each
};

using RowBlockFn = void (*)(const RowBlock&);

/// The filters along the blocked axis that the ring kernels are compiled for: 2 to 8 taps (with
/// AVX-512's 32 registers, longer rings leave strips of 2 vectors or fewer; a ring of 11 measured
/// 2.6x slower than blocks of 8 on 11^3, in one run).
inline constexpr int kMinRingTaps = 2;
inline constexpr int kMaxRingTaps = 8;

/// A column of outputs along the blocked axis computed by a ring of K = k3 accumulator strips,
/// one per output whose footprint holds the current position: each padded position is read once
/// and feeds all K outputs it belongs to, and an output is stored as soon as its last position
/// is done (register blocking along the blocked axis without a block's partial ends).
///   dst[o * dst_stride + x] = sum over j < K, then t < taps, of
///                             weights[t * K + j] * planes[(o + j) * plane_stride + tap_offsets[t]
///                             + x]
/// for o < outputs and x < nx: each output sums its taps in the order a block of one sums them.
struct RingColumn {
  const float* planes = nullptr;  ///< the column's first padded position
  int64_t plane_stride = 0;       ///< floats from one position along the blocked axis to the next
  const int64_t* tap_offsets = nullptr;  ///< per tap of a position (j2, j1, jx): its offset
  int64_t taps = 0;
  /// The offsets of a position's rows (j2, j1), prefetched a few positions ahead: positions lie
  /// k2 x k1 rows apart, often past a page, where the hardware prefetchers stop.
  const int64_t* row_offsets = nullptr;
  int64_t rows = 0;
  const float* weights = nullptr;  ///< [taps][K]
  int64_t nx = 0;                  ///< outputs along x
  int64_t outputs = 0;             ///< outputs along the blocked axis
  float* dst = nullptr;            ///< output row 0, x contiguous
  int64_t dst_stride = 0;          ///< floats from one output row to the next
};

using RingColumnFn = void (*)(const RingColumn&);

/// The kernels of one instruction set.
struct KernelSet {
  const char* isa = "";                           ///< "avx512", "avx2" or "generic"
  int lanes = 0;                                  ///< floats per SIMD vector
  int registers = 0;                              ///< SIMD registers the compiler can allocate
  bool fma = false;                               ///< fused multiply-add instructions
  RowBlockFn block[kBlockingFactorCount] = {};    ///< indexed like kBlockingFactors
  int strip_vectors[kBlockingFactorCount] = {};   ///< vectors along x per accumulator strip
  RingColumnFn ring[kMaxRingTaps + 1] = {};       ///< indexed by K (2..kMaxRingTaps)
  int ring_strip_vectors[kMaxRingTaps + 1] = {};  ///< vectors along x per ring strip, by K
};

}  // namespace ndconv::cpu
