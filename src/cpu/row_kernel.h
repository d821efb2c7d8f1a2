// The CPU backend's hot loop, written once and compiled once per instruction set: each
// kernels_<isa>.cpp includes this file with NDCONV_CPU_ISA (a namespace name, so that the copies
// never collide under the one-definition rule), NDCONV_CPU_LANES (floats per vector) and
// NDCONV_CPU_REGISTERS defined by src/cpu/sources.cmake. Only compiler builtins are used here: an
// inline function from a standard header instantiated in an AVX-512 translation unit could be
// picked by the linker for the whole program.
//
// Design (the CPU twin of the GPU kernels' register blocking): an accumulator strip of
// B x W vectors stays in registers while one flat loop walks the taps of each segment (input
// rows shifted by the tap's x offset). Each input vector is loaded once and feeds every output
// of the block (B consecutive positions along the blocked axis) that its segment feeds, so a tap
// of a full segment costs W loads and B weight broadcasts per B*W fused multiply-adds; the rows
// at a block's ends feed fewer outputs and cost fewer multiply-adds, none of them on a zero.
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
/// for the B*W accumulators, W inputs and a broadcast weight (and, without fused multiply-add, a
/// product), at most 4 (wider strips only add padding waste at the end of short rows).
constexpr int strip_vectors(int b) {
#ifdef __FMA__
  const int w = (NDCONV_CPU_REGISTERS - 4) / b;
#else
  const int w = (NDCONV_CPU_REGISTERS - 2) / (b + 1);
#endif
  return w < 1 ? 1 : (w > 4 ? 4 : w);
}

/// Adds the taps [t, end) of one segment, which feed the outputs LO..HI of the block, to the
/// accumulators of the strip at x.
template <int B, int W, int LO, int HI>
[[gnu::always_inline]] inline void add_taps(Vec (&acc)[B][W], const RowBlock& a, int64_t t,
                                            int64_t end, int64_t x) {
  const float* w = a.weights + t * B;
  for (; t < end; ++t, w += B) {
    const float* row = a.sources[t] + x;  // x includes the block's source_offset
    Vec in[W];
#pragma GCC unroll 4
    for (int v = 0; v < W; ++v)
      in[v] = load(row + v * kLanes);
#pragma GCC unroll 8
    for (int b = LO; b <= HI; ++b) {
      const float s = w[b];
#pragma GCC unroll 4
      for (int v = 0; v < W; ++v)
        acc[b][v] += in[v] * s;
    }
  }
}

/// add_taps with the segment's outputs as compile-time bounds (the accumulators stay in
/// registers): one test per pair LO <= HI < B until the segment's.
template <int B, int W, int PAIR = 0>
[[gnu::always_inline]] inline void add_segment(Vec (&acc)[B][W], const RowBlock& a,
                                               const TapSegment& segment, int64_t t, int64_t x) {
  if constexpr (PAIR < B * B) {
    constexpr int lo = PAIR / B, hi = PAIR % B;
    if constexpr (lo <= hi) {
      if (segment.first == lo && segment.last == hi) {
        add_taps<B, W, lo, hi>(acc, a, t, segment.end, x);
        return;
      }
    }
    add_segment<B, W, PAIR + 1>(acc, a, segment, t, x);
  }
}

/// B x W accumulators over every segment for the outputs [x, x + W * kLanes); stores them into
/// each destination row, of the last vector only the first `valid` <= kLanes (the row's end).
template <int B, int W>
void strip(const RowBlock& a, int64_t x, int64_t valid) {
  Vec acc[B][W];
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
#pragma GCC unroll 4
    for (int v = 0; v < W; ++v)
      acc[b][v] = Vec{};
  }
  int64_t t = 0;
  for (int i = 0; i < a.segment_count; ++i) {
    add_segment<B, W>(acc, a, a.segments[i], t, a.source_offset + x);
    t = a.segments[i].end;
  }
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
    float* out = a.dst[b] + x;
#pragma GCC unroll 4
    for (int v = 0; v + 1 < W; ++v)
      store(out + v * kLanes, acc[b][v]);
    out += (W - 1) * kLanes;
    if (valid == kLanes) {
      store(out, acc[b][W - 1]);
    } else {
      float tail[kLanes];
      store(tail, acc[b][W - 1]);
      for (int64_t i = 0; i < valid; ++i)
        out[i] = tail[i];
    }
  }
}

/// The row's last `remaining` <= W * kLanes outputs from x: one strip of as few vectors as hold
/// them (a narrower strip, not several single vectors, whose loads and broadcasts would outrun
/// their multiply-adds).
template <int B, int W>
void last_strip(const RowBlock& a, int64_t x, int64_t remaining) {
  if constexpr (W > 1) {
    if (remaining <= (W - 1) * kLanes) {
      last_strip<B, W - 1>(a, x, remaining);
      return;
    }
  }
  strip<B, W>(a, x, remaining - (W - 1) * kLanes);
}

/// A whole block: wide strips along x, then one narrower strip for the rest of the row.
template <int B>
void block(const RowBlock& a) {
  constexpr int W = strip_vectors(B);
  constexpr int64_t wide = static_cast<int64_t>(W) * kLanes;
  int64_t x = 0;
  for (; x + wide <= a.nx; x += wide)
    strip<B, W>(a, x, kLanes);
  if (x < a.nx)
    last_strip<B, W>(a, x, a.nx - x);
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
