// The CPU median's selection, written once and compiled once per instruction set: each
// median_kernels_<isa>.cpp defines NDCONV_CPU_ISA and NDCONV_CPU_LANES (sources.cmake) and
// includes this file. Compiler vector builtins only, as in row_kernel.h.
//
// Why it is shaped so: a lane per output, kLanes neighbouring outputs along x at once, each
// selecting its median by counting passes over its window (the GPU median's method,
// src/cuda/median/median_select.h): a pass counts the keys below each lane's pivot and finds the
// nearest keys on both sides of it, which become the new ends of the interval that holds the
// median; the next pivot interpolates the ends' values by rank (a bisection of the keys when that
// did not halve the candidates). A pass is five integer vector operations per key and no branch,
// where a sort or std::nth_element per voxel mispredicts about every other compare; ties end the
// search at once (an interval of one distinct key), which suits 8-bit data.
#pragma once

#include <cstdint>
#include <cstring>

#include "cpu/median_kernel_set.h"

#if !defined(NDCONV_CPU_ISA) || !defined(NDCONV_CPU_LANES)
#error "median_row_kernel.h needs NDCONV_CPU_ISA and NDCONV_CPU_LANES (sources.cmake)"
#endif

namespace ndconv::cpu::NDCONV_CPU_ISA::median {

constexpr int kLanes = NDCONV_CPU_LANES;
typedef uint32_t Keys __attribute__((vector_size(kLanes * sizeof(uint32_t))));
typedef int32_t Ints __attribute__((vector_size(kLanes * sizeof(int32_t))));
typedef float Floats __attribute__((vector_size(kLanes * sizeof(float))));

inline Keys load(const uint32_t* p) {
  Keys k;
  std::memcpy(&k, p, sizeof k);
  return k;
}

inline bool any(Ints mask) {
  int32_t lanes[kLanes];
  std::memcpy(lanes, &mask, sizeof lanes);
  int32_t acc = 0;
  for (int i = 0; i < kLanes; ++i)
    acc |= lanes[i];
  return acc != 0;
}

// The vector forms of detail::median_key and detail::median_value (core/median_key.h).
inline Keys to_keys(Floats v) {
  const Keys bits = (Keys)v;  // a cast between vector types of one size keeps the bits
  const Keys ordered = (Ints)bits < 0 ? ~bits : bits | 0x80000000u;
  return (bits & 0x7fffffffu) > 0x7f800000u ? Keys{} + 0xffffffffu : ordered;
}

inline Floats to_values(Keys k) {
  const Keys bits = k == 0xffffffffu         ? Keys{} + 0x7fc00000u
                    : (k & 0x80000000u) != 0 ? k & 0x7fffffffu
                                             : ~k;
  return (Floats)bits;
}

/// The counts, nearest keys and (first pass) extremes of one counting pass.
struct Pass {
  Ints count;  ///< keys below the pivot
  Keys up;     ///< min of key - pivot (mod 2^32): pivot + up is the nearest key at or above it
  Keys down;   ///< max of key - pivot (mod 2^32): pivot + down is the nearest key below it
  Keys least, most;
};

template <bool kFirst>
Pass count_pass(const MedianRow& m, int64_t x, Keys pivot) {
  Pass p{Ints{}, Keys{} + 0xffffffffu, Keys{}, Keys{} + 0xffffffffu, Keys{}};
  for (int64_t r = 0; r < m.row_count; ++r) {
    const uint32_t* row = m.rows[r] + x;
    for (int dx = 0; dx < m.span; ++dx) {
      const Keys key = load(row + dx);
      const Keys d = key - pivot;
      p.count -= key < pivot;  // a true comparison is -1
      p.up = d < p.up ? d : p.up;
      p.down = d > p.down ? d : p.down;
      if (kFirst) {
        p.least = key < p.least ? key : p.least;
        p.most = key > p.most ? key : p.most;
      }
    }
  }
  return p;
}

/// The next pivots inside (lo, hi] (see next_pivot in median_select.h).
inline Keys next_pivot(Keys lo, Keys hi, Ints below, Ints below_or_at, int rank, Ints bisect) {
  const Keys middle = lo + ((hi - lo) >> 1) + 1;
  const Ints finite = (lo > 0x007fffffu) & (hi < 0xff800000u);  // -Inf < lo, hi < +Inf
  const Floats a = to_values(lo), b = to_values(hi);
  const Floats f = (__builtin_convertvector(rank - below, Floats) + 0.5f) /
                   __builtin_convertvector(below_or_at - below, Floats);
  Keys p = to_keys(a + f * (b - a));
  p = p <= lo ? lo + 1 : p;
  p = p > hi ? hi : p;
  return (bisect | ~finite) != 0 ? middle : p;
}

/// The medians (as keys) of kLanes outputs starting at x.
inline Keys select(const MedianRow& m, int64_t x, int window) {
  const int rank = window / 2;
  Keys pivot = load(m.rows[m.centre_row] + x + m.span / 2);  // first: the output's own key
  Pass p = count_pass<true>(m, x, pivot);
  Keys lo = p.least, hi = p.most;
  Ints below = Ints{}, below_or_at = Ints{} + window, bisect = Ints{};
  for (;;) {
    const Ints open = lo != hi;
    if (!any(open))
      break;
    const Ints candidates = below_or_at - below;
    const Ints above = p.count > rank;  // the median is below the pivot
    const Ints lower_hi = open & above, raise_lo = open & ~above;
    hi = lower_hi != 0 ? pivot + p.down : hi;
    below_or_at = lower_hi != 0 ? p.count : below_or_at;
    lo = raise_lo != 0 ? pivot + p.up : lo;
    below = raise_lo != 0 ? p.count : below;
    const Ints still = lo != hi;
    if (!any(still))
      break;
    // Interpolate, unless the last interpolation left more than half of the candidates.
    bisect = still != 0 ? ~bisect & (2 * (below_or_at - below) > candidates) : bisect;
    pivot = still != 0 ? next_pivot(lo, hi, below, below_or_at, rank, bisect) : pivot;
    p = count_pass<false>(m, x, pivot);
  }
  return lo;
}

inline void median_row(const MedianRow& m) {
  const int window = static_cast<int>(m.row_count) * m.span;
  for (int64_t x = 0; x < m.nx; x += kLanes) {
    const Floats v = to_values(select(m, x, window));
    const int64_t n = m.nx - x < kLanes ? m.nx - x : kLanes;
    if (m.out_stride == 1 && n == kLanes) {
      std::memcpy(m.out + x, &v, sizeof v);
      continue;
    }
    for (int64_t i = 0; i < n; ++i)
      m.out[(x + i) * m.out_stride] = v[i];
  }
}

inline void keys(const float* in, int64_t n, uint32_t* out) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Floats v;
    std::memcpy(&v, in + i, sizeof v);
    const Keys k = to_keys(v);
    std::memcpy(out + i, &k, sizeof k);
  }
  for (; i < n; ++i) {
    Floats v{};
    v[0] = in[i];
    out[i] = to_keys(v)[0];
  }
}

inline MedianKernelSet make_median_kernel_set(const char* isa) {
  MedianKernelSet set;
  set.isa = isa;
  set.lanes = kLanes;
  set.row = median_row;
  set.keys = keys;
  return set;
}

}  // namespace ndconv::cpu::NDCONV_CPU_ISA::median
