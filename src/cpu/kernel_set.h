// The CPU backend's hot loop as seen from the drivers: one function per blocking factor B that
// computes B output rows (B consecutive positions along the blocked axis) from a list of input
// rows and a weight table. The same loop is compiled once per instruction set (row_kernel.h,
// kernels_*.cpp) and chosen at run time (isa_dispatch.cpp), so that one portable binary runs
// AVX-512 or AVX2+FMA code where the CPU has it and SSE2 code elsewhere.
#pragma once

#include <cstdint>

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

/// One block of B output rows.
///   dst[b][x] = sum_{t < tap_count} weights[t * B + b] * sources[t][x]
/// for x in [0, nx). Each "tap" is an input row already shifted by the tap's offset along x, so
/// the kernel runs one flat loop over all taps of the filter (no short inner loop along x taps
/// whose exit costs more than its body for small filters). A source that feeds only some of the
/// B outputs has zero weights for the others.
struct RowBlock {
  const float* const* sources = nullptr;  ///< tap_count rows, x contiguous
  int64_t tap_count = 0;
  const float* weights = nullptr;  ///< [tap_count][B]
  int64_t nx = 0;                  ///< outputs along x
  float* const* dst = nullptr;     ///< B output rows, x contiguous, nx elements each
};

using RowBlockFn = void (*)(const RowBlock&);

/// The kernels of one instruction set.
struct KernelSet {
  const char* isa = "";                          ///< "avx512", "avx2" or "generic"
  int lanes = 0;                                 ///< floats per SIMD vector
  int registers = 0;                             ///< SIMD registers the compiler can allocate
  bool fma = false;                              ///< fused multiply-add instructions
  RowBlockFn block[kBlockingFactorCount] = {};   ///< indexed like kBlockingFactors
  int strip_vectors[kBlockingFactorCount] = {};  ///< vectors along x per accumulator strip
};

}  // namespace ndconv::cpu
