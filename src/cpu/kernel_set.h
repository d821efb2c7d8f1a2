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

/// Longest SIMD vector of any kernel set, in floats. Input rows must be readable (and finite) up
/// to round_up(nx, kMaxLanes) + kx - 1 elements; drivers pad their rows to that length.
inline constexpr int64_t kMaxLanes = 16;

/// One block of B output rows.
///   dst[b][x] = sum_{r < row_count} sum_{j < kx} weights[(r * kx + j) * B + b] * rows[r][x + j]
/// for x in [0, nx). A row that feeds only some of the B outputs has zero weights for the others.
struct RowBlock {
  const float* const* rows = nullptr;  ///< row_count input rows, x contiguous
  int64_t row_count = 0;
  const float* weights = nullptr;  ///< [row_count][kx][B]
  int64_t kx = 1;                  ///< taps along x
  int64_t nx = 0;                  ///< outputs along x
  float* const* dst = nullptr;     ///< B output rows, x contiguous, nx elements each
};

using RowBlockFn = void (*)(const RowBlock&);

/// The kernels of one instruction set.
struct KernelSet {
  const char* isa = "";                          ///< "avx512", "avx2" or "generic"
  int lanes = 0;                                 ///< floats per SIMD vector
  int registers = 0;                             ///< SIMD registers the compiler can allocate
  RowBlockFn block[kBlockingFactorCount] = {};   ///< indexed like kBlockingFactors
  int strip_vectors[kBlockingFactorCount] = {};  ///< vectors along x per accumulator strip
};

}  // namespace ndconv::cpu
