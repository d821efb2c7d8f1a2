// The filter bank's hot loop as seen from its driver (bank.cpp): one function per shape
// (filters per pass FP, outputs per block B along the blocked axis, vectors per strip W) that
// computes FP x B output rows from one list of input rows. Like the single-filter kernels
// (kernel_set.h) it is compiled once per instruction set (bank_row_kernel.h, bank_kernels_*.cpp)
// and chosen at run time with the same instruction set as select_kernel_set().
#pragma once

#include <cstdint>

namespace ndconv::cpu {

/// The filters-per-pass values every instruction set is compiled for: the adaptive filter's banks
/// each in one pass where the registers allow (7 and 11 reconstruction filters in 3D and 4D, 12
/// and 24 quadrature filters), since a pass of few filters reloads the input for little work.
inline constexpr int kBankFiltersPerPass[] = {1, 2, 3, 4, 6, 7, 8, 11, 12};
inline constexpr int kBankFiltersPerPassCount = 9;
/// Outputs per block along the blocked axis.
inline constexpr int kBankBlockFactors[] = {1, 2, 4};
inline constexpr int kBankBlockFactorCount = 3;
/// Vectors along x per strip.
inline constexpr int kBankStripVectors[] = {1, 2};
inline constexpr int kBankStripVectorCount = 2;
/// Rows handed to the bank kernels are readable (and zero past their end) up to a multiple of
/// this many floats, the widest strip of any instruction set (2 x 16).
inline constexpr int64_t kBankRowMultiple = 32;

/// One block: for filter f < FP and output b < B,
///   acc[f][b][x] = sum_{t < tap_count} weights[(t * FP + f) * B + b] * sources[t][x]
/// for x in [0, nx) with nx a multiple of kBankRowMultiple. Then either
///   dst[f * B + b][x] = acc[f][b][x]                                  (sum_weights == nullptr)
/// or the weighted sum over the pass's filters
///   sum_dst[b][x] = (accumulate ? sum_dst[b][x] : 0) + sum_f sum_weights[f * B + b][x] *
///   acc[f][b][x].
struct BankBlock {
  const float* const* sources = nullptr;
  int64_t tap_count = 0;
  const float* weights = nullptr;  ///< [tap_count][FP][B]
  int64_t nx = 0;
  float* const* dst = nullptr;                ///< FP * B rows
  const float* const* sum_weights = nullptr;  ///< FP * B rows, or null
  float* const* sum_dst = nullptr;            ///< B rows
  bool accumulate = false;
};

using BankBlockFn = void (*)(const BankBlock&);

/// The bank kernels of one instruction set, [FP index][B index][W index]; null where FP * B * W
/// accumulators, W inputs and one broadcast weight do not fit the register file.
struct BankKernelSet {
  const char* isa = "";
  int lanes = 0;
  int registers = 0;
  bool fma = false;
  BankBlockFn block[kBankFiltersPerPassCount][kBankBlockFactorCount][kBankStripVectorCount] = {};
  /// The instruction set's FMA ceiling: `rounds` rounds of `peak_chains` independent vector
  /// multiply-adds, register-resident (no loads); returns a sum that depends on every one, so that
  /// none is optimised away. lanes * peak_chains * rounds multiply-adds in all.
  float (*fma_rounds)(int64_t rounds, float seed) = nullptr;
  int peak_chains = 0;
};

/// The bank kernel set for the instruction set named `isa` ("avx512", "avx2" or "generic").
const BankKernelSet& bank_kernel_set(const char* isa);

}  // namespace ndconv::cpu
