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

/// Stores a strip of W vectors at `out`, of the last vector only the first `valid` <= kLanes
/// (the row's end).
template <int W>
inline void store_strip(float* out, const Vec (&acc)[W], int64_t valid) {
#pragma GCC unroll 4
  for (int v = 0; v + 1 < W; ++v)
    store(out + v * kLanes, acc[v]);
  out += (W - 1) * kLanes;
  if (valid == kLanes) {
    store(out, acc[W - 1]);
  } else {
    float tail[kLanes];
    store(tail, acc[W - 1]);
    for (int64_t i = 0; i < valid; ++i)
      out[i] = tail[i];
  }
}

/// A strip width as a type, for cover_row's callbacks.
template <int N>
struct Width {
  static constexpr int value = N;
};

/// One strip of `width` <= W vectors from x (as a compile-time width), `valid` outputs in its last
/// vector.
template <int W, class Run>
inline void strip_of_width(int64_t width, int64_t x, int64_t valid, const Run& run) {
  if constexpr (W > 1) {
    if (width < W) {
      strip_of_width<W - 1>(width, x, valid, run);
      return;
    }
  }
  run(Width<W>{}, x, valid);
}

/// Covers a row of nx outputs with as few strips of at most W vectors as it takes, of widths that
/// differ by one at most (10 vectors with W = 3: 3, 3, 2, 2; a strip of one vector's loads and
/// broadcasts would outrun its multiply-adds): run(Width<w>{}, x, valid) for each, `valid` being
/// the outputs in its last vector.
template <int W, class Run>
inline void cover_row(int64_t nx, const Run& run) {
  const int64_t vectors = (nx + kLanes - 1) / kLanes;
  const int64_t strips = (vectors + W - 1) / W;
  int64_t done = 0;  // vectors
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t width = (vectors - done + strips - s - 1) / (strips - s);
    const int64_t x = done * kLanes;
    done += width;
    const int64_t end = done * kLanes < nx ? done * kLanes : nx;
    strip_of_width<W>(width, x, end - x - (width - 1) * kLanes, run);
  }
}

/// B x W accumulators over every segment for the outputs [x, x + W * kLanes), stored into each
/// destination row (store_strip).
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
  for (int b = 0; b < B; ++b)
    store_strip<W>(a.dst[b] + x, acc[b], valid);
}

/// A whole block: strips along x (cover_row).
template <int B>
void block(const RowBlock& a) {
  cover_row<strip_vectors(B)>(a.nx, [&](auto width, int64_t x, int64_t valid) {
    strip<B, decltype(width)::value>(a, x, valid);
  });
}

/// Vectors along x per ring strip for a ring of K: room for the K*W accumulators, W inputs, a
/// broadcast weight and (without fused multiply-add) a product, at most 4.
constexpr int ring_strip_vectors(int k) {
  const int w = (NDCONV_CPU_REGISTERS - 2) / (k + 1);
  return w < 1 ? 1 : (w > 4 ? 4 : w);
}

/// How far ahead along the blocked axis a ring strip prefetches its rows.
constexpr int64_t kRingPrefetchPositions = 2;

/// One padded position p of a ring column (p = R mod K): output p starts in slot R, the
/// position's taps feed the outputs p - j (slot (R - j) mod K) for every j < K, and output
/// p - K + 1, now complete, is stored from slot (R + 1) mod K. Returns false past the column.
template <int K, int W, int R>
[[gnu::always_inline]] inline bool ring_step(Vec (&acc)[K][W], const RingColumn& a, int64_t x,
                                             int64_t valid, int64_t& p) {
  if (p == a.outputs + K - 1)
    return false;
#pragma GCC unroll 4
  for (int v = 0; v < W; ++v)
    acc[R][v] = Vec{};
  const float* plane = a.planes + p * a.plane_stride + x;
  const float* ahead = plane + kRingPrefetchPositions * a.plane_stride;
  for (int64_t r = 0; r < a.rows; ++r) {
#pragma GCC unroll 5
    for (int v = 0; v <= W; ++v)  // W vectors and the x taps' reach past them
      __builtin_prefetch(ahead + a.row_offsets[r] + v * kLanes);
  }
  const float* w = a.weights;
  for (int64_t t = 0; t < a.taps; ++t, w += K) {
    const float* row = plane + a.tap_offsets[t];
    Vec in[W];
#pragma GCC unroll 4
    for (int v = 0; v < W; ++v)
      in[v] = load(row + v * kLanes);
#pragma GCC unroll 8
    for (int j = 0; j < K; ++j) {
      const float s = w[j];
#pragma GCC unroll 4
      for (int v = 0; v < W; ++v)
        acc[(R - j + K) % K][v] += in[v] * s;
    }
  }
  const int64_t done = p - (K - 1);
  if (done >= 0)
    store_strip<W>(a.dst + done * a.dst_stride + x, acc[(R + 1) % K], valid);
  ++p;
  return true;
}

/// K ring steps, R = 0..K-1; false once the column is done.
template <int K, int W, int R = 0>
[[gnu::always_inline]] inline bool ring_round(Vec (&acc)[K][W], const RingColumn& a, int64_t x,
                                              int64_t valid, int64_t& p) {
  if constexpr (R == K) {
    return true;
  } else {
    if (!ring_step<K, W, R>(acc, a, x, valid, p))
      return false;
    return ring_round<K, W, R + 1>(acc, a, x, valid, p);
  }
}

/// The column's outputs [x, x + W * kLanes): the slots of the outputs before the column
/// (p - j < 0) and past it collect sums that are never stored.
template <int K, int W>
void ring_strip(const RingColumn& a, int64_t x, int64_t valid) {
  Vec acc[K][W];
#pragma GCC unroll 8
  for (int j = 0; j < K; ++j) {
#pragma GCC unroll 4
    for (int v = 0; v < W; ++v)
      acc[j][v] = Vec{};
  }
  int64_t p = 0;
  while (ring_round<K, W>(acc, a, x, valid, p)) {
  }
}

/// A whole column: ring strips along x (cover_row).
template <int K>
void ring_column(const RingColumn& a) {
  cover_row<ring_strip_vectors(K)>(a.nx, [&](auto width, int64_t x, int64_t valid) {
    ring_strip<K, decltype(width)::value>(a, x, valid);
  });
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
  s.ring[2] = &ring_column<2>;
  s.ring[3] = &ring_column<3>;
  s.ring[4] = &ring_column<4>;
  s.ring[5] = &ring_column<5>;
  s.ring[6] = &ring_column<6>;
  s.ring[7] = &ring_column<7>;
  s.ring[8] = &ring_column<8>;
  static_assert(kMinRingTaps == 2 && kMaxRingTaps == 8, "make_kernel_set lists every ring");
  for (int k = kMinRingTaps; k <= kMaxRingTaps; ++k)
    s.ring_strip_vectors[k] = ring_strip_vectors(k);
  return s;
}

}  // namespace ndconv::cpu::NDCONV_CPU_ISA
