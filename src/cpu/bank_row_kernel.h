// The filter bank's hot loop, written once and compiled once per instruction set: each
// bank_kernels_<isa>.cpp defines NDCONV_CPU_ISA, NDCONV_CPU_LANES and NDCONV_CPU_REGISTERS and
// includes this file (row_kernel.h, whose vector type it uses, explains why only compiler
// builtins are used).
//
// Register blocking along x (W vectors), along the blocked axis (B outputs) and across filters
// (FP filters): an accumulator block of FP x B x W vectors stays in registers while one flat loop
// walks every tap row. Each input vector is loaded once per tap and feeds all FP * B outputs, so
// a tap costs W loads and FP * B weight broadcasts per FP * B * W fused multiply-adds.
#pragma once

#include "cpu/bank_kernel_set.h"
#include "cpu/row_kernel.h"  // the instruction set's Vec, load and store

namespace ndconv::cpu::NDCONV_CPU_ISA::bank {

static_assert(kBankRowMultiple % (2 * kLanes) == 0, "rows must hold whole strips");

/// Whether FP x B x W accumulators, W inputs and a broadcast weight fit the register file.
constexpr bool fits(int fp, int b, int w) {
  return fp * b * w + w + 1 <= NDCONV_CPU_REGISTERS;
}

template <int FP, int B, int W>
void block(const BankBlock& a) {
  constexpr int64_t wide = static_cast<int64_t>(W) * kLanes;
  for (int64_t x = 0; x < a.nx; x += wide) {
    Vec acc[FP][B][W] = {};
    const float* w = a.weights;
    for (int64_t t = 0; t < a.tap_count; ++t, w += FP * B) {
      const float* row = a.sources[t] + x;
      Vec in[W];
#pragma GCC unroll 2
      for (int v = 0; v < W; ++v)
        in[v] = load(row + v * kLanes);
#pragma GCC unroll 16
      for (int f = 0; f < FP; ++f)
#pragma GCC unroll 4
        for (int b = 0; b < B; ++b) {
          const float s = w[f * B + b];
#pragma GCC unroll 2
          for (int v = 0; v < W; ++v)
            acc[f][b][v] += in[v] * s;
        }
    }
    if (a.sum_weights == nullptr) {
#pragma GCC unroll 16
      for (int f = 0; f < FP; ++f)
#pragma GCC unroll 4
        for (int b = 0; b < B; ++b)
#pragma GCC unroll 2
          for (int v = 0; v < W; ++v)
            store(a.dst[f * B + b] + x + v * kLanes, acc[f][b][v]);
      continue;
    }
#pragma GCC unroll 4
    for (int b = 0; b < B; ++b)
#pragma GCC unroll 2
      for (int v = 0; v < W; ++v) {
        float* out = a.sum_dst[b] + x + v * kLanes;
        Vec sum = a.accumulate ? load(out) : Vec{};
#pragma GCC unroll 16
        for (int f = 0; f < FP; ++f)
          sum += acc[f][b][v] * load(a.sum_weights[f * B + b] + x + v * kLanes);
        store(out, sum);
      }
  }
}

/// Independent chains of fma_rounds: as many as the register file holds besides the two
/// constants, far more than the FMA latency times the FMA pipes needs.
constexpr int kPeakChains = NDCONV_CPU_REGISTERS - 4;

inline float fma_rounds(int64_t rounds, float seed) {
  Vec acc[kPeakChains];
  const Vec step = Vec{} + seed * 1e-7f, scale = Vec{} + 0.999999f;
#pragma GCC unroll 32
  for (int c = 0; c < kPeakChains; ++c)
    acc[c] = Vec{} + seed + static_cast<float>(c);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 32
    for (int c = 0; c < kPeakChains; ++c)
      acc[c] = acc[c] * scale + step;
  }
  float sum = 0;
  for (int c = 0; c < kPeakChains; ++c)
    for (int l = 0; l < kLanes; ++l)
      sum += acc[c][l];
  return sum;
}

template <int FP, int B, int W>
constexpr BankBlockFn entry() {
  if constexpr (fits(FP, B, W))
    return &block<FP, B, W>;
  else
    return nullptr;
}

template <int FP>
void fill_filters(BankKernelSet& s, int fi) {
  s.block[fi][0][0] = entry<FP, 1, 1>();
  s.block[fi][0][1] = entry<FP, 1, 2>();
  s.block[fi][1][0] = entry<FP, 2, 1>();
  s.block[fi][1][1] = entry<FP, 2, 2>();
  s.block[fi][2][0] = entry<FP, 4, 1>();
  s.block[fi][2][1] = entry<FP, 4, 2>();
}

inline BankKernelSet make_bank_kernel_set(const char* isa) {
  static_assert(
      kBankFiltersPerPassCount == 9 && kBankBlockFactorCount == 3 && kBankStripVectorCount == 2,
      "make_bank_kernel_set lists every shape");
  BankKernelSet s;
  describe_instruction_set(s, isa);
  fill_filters<1>(s, 0);
  fill_filters<2>(s, 1);
  fill_filters<3>(s, 2);
  fill_filters<4>(s, 3);
  fill_filters<6>(s, 4);
  fill_filters<7>(s, 5);
  fill_filters<8>(s, 6);
  fill_filters<11>(s, 7);
  fill_filters<12>(s, 8);
  s.fma_rounds = &fma_rounds;
  s.peak_chains = kPeakChains;
  return s;
}

}  // namespace ndconv::cpu::NDCONV_CPU_ISA::bank
