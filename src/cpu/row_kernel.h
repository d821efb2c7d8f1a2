// The CPU backend's hot loop, written once and compiled once per instruction set: each
// kernels_<isa>.cpp includes this file with NDCONV_CPU_ISA (a namespace name, so that the copies
// never collide under the one-definition rule), NDCONV_CPU_LANES (floats per vector) and
// NDCONV_CPU_REGISTERS defined by src/cpu/sources.cmake. Only compiler builtins are used here: an
// inline function from a standard header instantiated in an AVX-512 translation unit could be
// picked by the linker for the whole program.
//
// Design (the CPU twin of the GPU kernels' register blocking): an accumulator strip of
// B x W vectors stays in registers while one flat loop walks every tap (an input row shifted by
// the tap's x offset). Each input vector is loaded once and feeds all B outputs of the block (B
// consecutive positions along the blocked axis), so a tap costs W loads and B weight broadcasts
// per B*W fused multiply-adds.
// The loop has no boundary checks: the drivers hand it rows that are already padded.
#pragma once

#include "cpu/kernel_set.h"

#if !defined(NDCONV_CPU_ISA) || !defined(NDCONV_CPU_LANES) || !defined(NDCONV_CPU_REGISTERS)
#error \
    "row_kernel.h needs NDCONV_CPU_ISA, NDCONV_CPU_LANES and NDCONV_CPU_REGISTERS (sources.cmake)"
#endif

namespace ndconv::cpu::NDCONV_CPU_ISA {

constexpr int kLanes = NDCONV_CPU_LANES;
static_assert(kLanes <= kMaxLanes, "rows are padded for at most kMaxLanes floats per vector");

typedef float Vec __attribute__((vector_size(NDCONV_CPU_LANES * sizeof(float))));

inline Vec load(const float* p) {
  Vec v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline void store(float* p, const Vec& v) {
  __builtin_memcpy(p, &v, sizeof v);
}

/// Vectors along x per strip for blocking factor B: as many as leave room in the register file
/// for the B*W accumulators, W inputs and a broadcast weight, at most 4 (wider strips only add
/// padding waste at the end of short rows).
constexpr int strip_vectors(int b) {
  const int w = (NDCONV_CPU_REGISTERS - 4) / b;
  return w < 1 ? 1 : (w > 4 ? 4 : w);
}

/// B x W accumulators over all rows and taps for the outputs [x, x + W * kLanes); stores them
/// into each destination row (only the first `valid` < kLanes when W is 1, at the row's end).
template <int B, int W>
inline void strip(const RowBlock& a, int64_t x, int64_t valid) {
  Vec acc[B][W];
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
#pragma GCC unroll 4
    for (int v = 0; v < W; ++v)
      acc[b][v] = Vec{};
  }
  const float* w = a.weights;
  for (int64_t t = 0; t < a.tap_count; ++t, w += B) {
    const float* row = a.sources[t] + x;
    Vec in[W];
#pragma GCC unroll 4
    for (int v = 0; v < W; ++v)
      in[v] = load(row + v * kLanes);
#pragma GCC unroll 8
    for (int b = 0; b < B; ++b) {
      const float s = w[b];
#pragma GCC unroll 4
      for (int v = 0; v < W; ++v)
        acc[b][v] += in[v] * s;
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
    float* out = a.dst[b] + x;
    if (W > 1 || valid == kLanes) {
#pragma GCC unroll 4
      for (int v = 0; v < W; ++v)
        store(out + v * kLanes, acc[b][v]);
    } else {
      float tail[kLanes];
      store(tail, acc[b][0]);
      for (int64_t i = 0; i < valid; ++i)
        out[i] = tail[i];
    }
  }
}

/// A whole block: wide strips along x, then single vectors for the rest of the row.
template <int B>
void block(const RowBlock& a) {
  constexpr int W = strip_vectors(B);
  constexpr int64_t wide = static_cast<int64_t>(W) * kLanes;
  int64_t x = 0;
  for (; x + wide <= a.nx; x += wide)
    strip<B, W>(a, x, wide);
  for (; x < a.nx; x += kLanes)
    strip<B, 1>(a, x, a.nx - x < kLanes ? a.nx - x : kLanes);
}

/// Fills the instruction-set facts a kernel table reports (KernelSet, BankKernelSet).
template <class Table>
void describe_instruction_set(Table& table, const char* isa) {
  table.isa = isa;
  table.lanes = kLanes;
  table.registers = NDCONV_CPU_REGISTERS;
#ifdef __FMA__
  table.fma = true;
#endif
}

inline KernelSet make_kernel_set(const char* isa) {
  KernelSet s;
  describe_instruction_set(s, isa);
  s.block[0] = &block<1>;
  s.block[1] = &block<2>;
  s.block[2] = &block<4>;
  s.block[3] = &block<8>;
  s.strip_vectors[0] = strip_vectors(1);
  s.strip_vectors[1] = strip_vectors(2);
  s.strip_vectors[2] = strip_vectors(4);
  s.strip_vectors[3] = strip_vectors(8);
  return s;
}

}  // namespace ndconv::cpu::NDCONV_CPU_ISA
