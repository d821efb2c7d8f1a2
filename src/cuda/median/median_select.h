// The GPU median's per-block code, compiled for the GPU and for the host (NDCONV_HD), so that the
// CI machine runs the very same selection through a host loop over the grid
// (tests/gpu/median_emulation_test.cpp).
//
// Why it is shaped so: a median is a selection, not a multiply-add, and a 7^3 window (343 values)
// does not fit a thread's registers, so a thread never holds its window. A block copies the input
// box its outputs need to shared memory once, as order-preserving 32-bit keys (integer compares,
// NaN above +Inf as the CPU backend orders it). Each thread then selects the medians of
// kOutputs voxels in a row along the last axis by counting: a pass over the windows counts, for
// each output, the keys below its pivot and finds the nearest keys on both sides of the pivot,
// which become the new ends of the interval that holds the median. The windows of neighbouring
// outputs along the last axis overlap, so every key read from shared memory serves up to
// 2 r + 1 of the thread's outputs (the register blocking of the convolution kernels, applied to a
// selection). Pivots interpolate the values at the interval's ends by rank (a bisection of the
// keys when that did not halve the candidates), so a pass usually leaves a few percent of them;
// an interval that holds one distinct value is the answer, so ties end the search at once.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/median_key.h"
#include "kernels/hd.h"

namespace ndconv::cuda_median {

/// Outputs a thread selects, in a row along the last axis.
inline constexpr int kOutputs = 8;
/// Largest radius along the last axis the kernels are compiled for (the public limit).
inline constexpr int kMaxLastRadius = 7;

using detail::median_key;
using detail::median_value;

/// A launch's geometry: the volume (4 canonical axes, x fastest, contiguous), the window and the
/// blocks. A block computes the output box `box` (threads_x along x; threads_y along y, or, in
/// 2D, threads_y rows of kOutputs along y) and stages the input box `tile` = box + 2 radius.
struct MedianGrid {
  int64_t extent[4];
  int radius[4];
  int boundary;          ///< ndconv::Boundary as int (kernels::BoundaryCode)
  uint32_t outside_key;  ///< the key of voxels outside the volume that the boundary maps to none
  int last;              ///< the axis the thread's outputs run along (dims - 1)
  int threads_x, threads_y;
  int box[4];
  int tile[4];
  int tile_stride[4];  ///< keys between neighbours in the tile along each axis
  int64_t blocks[4];   ///< blocks along each axis
  int64_t out_step;    ///< voxels between neighbours along the last axis
  int window;          ///< keys per window
  int tile_keys() const { return tile[0] * tile[1] * tile[2] * tile[3]; }
  int64_t block_count() const { return blocks[0] * blocks[1] * blocks[2] * blocks[3]; }
};

/// The grid for a volume of `dims` axes with threads_x × threads_y threads per block, each
/// selecting `outputs` voxels along the last axis; `outside`: the value of voxels outside the
/// volume where the boundary rule reads none (Zero: 0).
inline MedianGrid median_grid(int dims, const int64_t* extent, const int64_t* radius, int boundary,
                              float outside, int threads_x, int threads_y, int outputs = kOutputs) {
  MedianGrid g{};
  g.last = dims - 1;
  g.boundary = boundary;
  g.outside_key = median_key(outside);
  g.threads_x = threads_x;
  g.threads_y = threads_y;
  g.window = 1;
  for (int a = 0; a < 4; ++a) {
    g.extent[a] = a < dims ? extent[a] : 1;
    g.radius[a] = a < dims ? static_cast<int>(radius[a]) : 0;
    g.box[a] = 1;
    g.window *= 2 * g.radius[a] + 1;
  }
  g.box[0] = threads_x;
  if (g.last == 1) {
    g.box[1] = threads_y * outputs;
  } else {
    g.box[1] = threads_y;
    g.box[g.last] = outputs;
  }
  g.out_step = 1;
  for (int a = 0; a < 4; ++a) {
    g.tile[a] = g.box[a] + 2 * g.radius[a];
    g.tile_stride[a] = a == 0 ? 1 : g.tile_stride[a - 1] * g.tile[a - 1];
    g.blocks[a] = (g.extent[a] + g.box[a] - 1) / g.box[a];
    if (a < g.last)
      g.out_step *= g.extent[a];
  }
  return g;
}

/// The output box's origin of block `block` (x fastest over grid.blocks). The launchers keep the
/// block count below 2^31, so 32-bit divisions do (a 64-bit one is a subroutine on the GPU).
NDCONV_HD void block_origin(const MedianGrid& g, int64_t block, int64_t* origin) {
  auto b = static_cast<uint32_t>(block);
  NDCONV_UNROLL
  for (int a = 0; a < 4; ++a) {
    const auto blocks = static_cast<uint32_t>(g.blocks[a]);
    origin[a] = int64_t{b % blocks} * g.box[a];
    b /= blocks;
  }
}

/// Copies the block's input box into `tile` as keys, rows spread over `row_threads` threads
/// (this one `row_thread`), x over `x_threads` (this one `x_thread`); the boundary rule maps
/// the box's parts outside the volume. The row coordinates advance by counting (a division per
/// row cost more than the row's loads), and a box inside the volume (most blocks) is read at
/// fixed steps without mapping any index.
template <typename Load>
NDCONV_HD void load_tile(const MedianGrid& g, const int64_t* origin, uint32_t* tile, int x_thread,
                         int x_threads, int row_thread, int row_threads, Load load) {
  int64_t low[4];
  bool interior = true;
  NDCONV_UNROLL
  for (int a = 0; a < 4; ++a) {
    low[a] = origin[a] - g.radius[a];
    interior = interior && low[a] >= 0 && low[a] + g.tile[a] <= g.extent[a];
  }
  const int rows = g.tile[1] * g.tile[2] * g.tile[3];
  // Row `row` of the box is (ty, tz, tt); the first is this thread's.
  int ty = row_thread % g.tile[1], tz = row_thread / g.tile[1] % g.tile[2],
      tt = row_thread / (g.tile[1] * g.tile[2]);
  for (int row = row_thread; row < rows; row += row_threads) {
    uint32_t* to = tile + static_cast<int64_t>(row) * g.tile[0];
    if (interior) {
      const int64_t first =
          (((low[3] + tt) * g.extent[2] + low[2] + tz) * g.extent[1] + low[1] + ty) * g.extent[0] +
          low[0];
      for (int x = x_thread; x < g.tile[0]; x += x_threads)
        to[x] = median_key(load(first + x));
    } else {
      const int64_t iy = kernels::boundary_index_hd(low[1] + ty, g.extent[1], g.boundary);
      const int64_t iz = kernels::boundary_index_hd(low[2] + tz, g.extent[2], g.boundary);
      const int64_t it = kernels::boundary_index_hd(low[3] + tt, g.extent[3], g.boundary);
      const bool inside = iy >= 0 && iz >= 0 && it >= 0;
      const int64_t first = ((it * g.extent[2] + iz) * g.extent[1] + iy) * g.extent[0];
      for (int x = x_thread; x < g.tile[0]; x += x_threads) {
        const int64_t ix = kernels::boundary_index_hd(low[0] + x, g.extent[0], g.boundary);
        to[x] = inside && ix >= 0 ? median_key(load(first + ix)) : g.outside_key;
      }
    }
    ty += row_threads;
    while (ty >= g.tile[1]) {
      ty -= g.tile[1];
      if (++tz == g.tile[2]) {
        tz = 0;
        ++tt;
      }
    }
  }
}

/// The next pivot inside (lo, hi] for an interval that holds ranks [below, below_or_at) of the
/// window and the wanted rank `rank`: the values at the ends interpolated by rank, or the keys'
/// midpoint when `bisect` (or when an end is not a finite number).
NDCONV_HD uint32_t next_pivot(uint32_t lo, uint32_t hi, int below, int below_or_at, int rank,
                              bool bisect) {
  const uint32_t middle = lo + ((hi - lo) >> 1) + 1;
  if (bisect)
    return middle;
  const float a = median_value(lo), b = median_value(hi);
  if (!(std::isfinite(a) && std::isfinite(b)))
    return middle;
  const float f =
      (static_cast<float>(rank - below) + 0.5f) / static_cast<float>(below_or_at - below);
  const uint32_t p = median_key(a + f * (b - a));
  return p <= lo ? lo + 1 : p > hi ? hi : p;
}

/// One counting pass over the kOutputs windows that start at tile index `corner`: for each
/// output the keys below its pivot (`count`) and the differences key - pivot (mod 2^32), whose
/// minimum (`up`) leads to the nearest key at or above the pivot and whose maximum (`down`) to the
/// nearest key below it (keys below the pivot wrap above every other difference). The first pass
/// also finds each window's smallest and largest key.
template <int kLastRadius, bool kFirst>
NDCONV_HD void count_pass(const uint32_t* tile, int corner, const int (&span)[3],
                          const int (&pitch)[3], int step, const uint32_t (&pivot)[kOutputs],
                          int (&count)[kOutputs], uint32_t (&up)[kOutputs],
                          uint32_t (&down)[kOutputs], uint32_t (&least)[kOutputs],
                          uint32_t (&most)[kOutputs]) {
  constexpr int kColumn = kOutputs + 2 * kLastRadius;
  NDCONV_UNROLL
  for (int k = 0; k < kOutputs; ++k) {
    count[k] = 0;
    up[k] = 0xffffffffu;
    down[k] = 0;
    least[k] = 0xffffffffu;
    most[k] = 0;
  }
  for (int i2 = 0; i2 < span[2]; ++i2)
    for (int i1 = 0; i1 < span[1]; ++i1)
      for (int i0 = 0; i0 < span[0]; ++i0) {
        const uint32_t* column = tile + corner + i0 * pitch[0] + i1 * pitch[1] + i2 * pitch[2];
        NDCONV_UNROLL
        for (int j = 0; j < kColumn; ++j) {
          const uint32_t key = column[j * step];
          NDCONV_UNROLL
          for (int k = 0; k < kOutputs; ++k) {
            if (j - k < 0 || j - k > 2 * kLastRadius)
              continue;
            const uint32_t d = key - pivot[k];
            count[k] += key < pivot[k];
            up[k] = d < up[k] ? d : up[k];
            down[k] = d > down[k] ? d : down[k];
            if (kFirst) {
              least[k] = key < least[k] ? key : least[k];
              most[k] = key > most[k] ? key : most[k];
            }
          }
        }
      }
}

/// The medians (as keys) of the kOutputs windows that start at tile index `corner` and follow one
/// another along the last axis: counting passes until every output's interval holds one distinct
/// key. kLastRadius is the window's radius along the last axis (compiled per radius, so that the
/// outputs a key belongs to are known at compile time).
template <int kLastRadius>
NDCONV_HD void select_medians(const MedianGrid& g, const uint32_t* tile, int corner,
                              uint32_t (&median)[kOutputs]) {
  const int step = g.tile_stride[g.last];
  // The window's axes before the last one (up to three), as loop extents and strides.
  int span[3], pitch[3];
  int centre = corner + kLastRadius * step;
  NDCONV_UNROLL
  for (int a = 0; a < 3; ++a) {
    const bool before_last = a < g.last;
    span[a] = before_last ? 2 * g.radius[a] + 1 : 1;
    pitch[a] = before_last ? g.tile_stride[a] : 0;
    centre += before_last ? g.radius[a] * g.tile_stride[a] : 0;
  }
  const int rank = g.window / 2;

  // Per output: the interval [lo, hi] of keys that holds the median, the window's keys below lo
  // and at or below hi, and the next pivot (the first one: the output voxel's own key).
  uint32_t lo[kOutputs], hi[kOutputs], pivot[kOutputs];
  int below[kOutputs], below_or_at[kOutputs];
  bool bisect[kOutputs];
  int count[kOutputs];
  uint32_t up[kOutputs], down[kOutputs], least[kOutputs], most[kOutputs];
  NDCONV_UNROLL
  for (int k = 0; k < kOutputs; ++k) {
    pivot[k] = tile[centre + k * step];
    below[k] = 0;
    below_or_at[k] = g.window;
    bisect[k] = false;
  }
  count_pass<kLastRadius, true>(tile, corner, span, pitch, step, pivot, count, up, down, least,
                                most);
  NDCONV_UNROLL
  for (int k = 0; k < kOutputs; ++k) {
    lo[k] = least[k];
    hi[k] = most[k];
  }
  for (;;) {
    bool open = false;
    NDCONV_UNROLL
    for (int k = 0; k < kOutputs; ++k) {
      if (lo[k] == hi[k])
        continue;
      const int candidates = below_or_at[k] - below[k];
      if (count[k] > rank) {  // the median is below the pivot: at most the nearest key below
        hi[k] = pivot[k] + down[k];
        below_or_at[k] = count[k];
      } else {  // at or above it: at least the nearest key at or above
        lo[k] = pivot[k] + up[k];
        below[k] = count[k];
      }
      if (lo[k] != hi[k]) {
        // Interpolate, unless the last interpolation left more than half of the candidates.
        bisect[k] = !bisect[k] && 2 * (below_or_at[k] - below[k]) > candidates;
        pivot[k] = next_pivot(lo[k], hi[k], below[k], below_or_at[k], rank, bisect[k]);
        open = true;
      }
    }
    if (!open)
      break;
    count_pass<kLastRadius, false>(tile, corner, span, pitch, step, pivot, count, up, down, least,
                                   most);
  }
  NDCONV_UNROLL
  for (int k = 0; k < kOutputs; ++k)
    median[k] = lo[k];
}

/// Orders a pair: a <= b afterwards.
NDCONV_HD void order(uint32_t& a, uint32_t& b) {
  const uint32_t low = a < b ? a : b;
  b = a < b ? b : a;
  a = low;
}

/// Moves the smallest of v[0, S) to v[0] and the largest to v[1] (the others stay in v[2, S)):
/// about 1.5 S pair orderings.
template <int S>
NDCONV_HD void extremes_first(uint32_t* v) {
  NDCONV_UNROLL
  for (int i = 0; i + 1 < S; i += 2)
    order(v[i], v[i + 1]);
  NDCONV_UNROLL
  for (int i = 2; i + 1 < S; i += 2)
    order(v[0], v[i]);
  NDCONV_UNROLL
  for (int i = 3; i < S; i += 2)
    order(v[i], v[1]);
  if (S % 2 == 1) {
    order(v[0], v[S - 1]);
    order(v[S - 1], v[1]);
  }
}

/// Forgetful selection's rounds: the set v[J, R) loses its smallest and largest key and gains
/// key(R + J), until the window's N keys are all in.
template <int N, int R, int J, typename Key>
NDCONV_HD void forget_rounds(uint32_t* v, Key& key) {
  if constexpr (J < N - R) {
    extremes_first<R - J>(v + J);
    v[J + 1] = key(R + J);
    forget_rounds<N, R, J + 1>(v, key);
  }
}

/// The median of the N keys key(0) .. key(N - 1) (N odd) by forgetful selection in registers:
/// of N / 2 + 2 keys held, the smallest and the largest cannot be the median once the next key
/// replaces them, so the set shrinks by one per key read and the last three hold it.
template <int N, typename Key>
NDCONV_HD uint32_t forgetful_median(Key key) {
  static_assert(N % 2 == 1 && N >= 3, "an odd window");
  constexpr int R = N / 2 + 2;
  uint32_t v[R];
  NDCONV_UNROLL
  for (int i = 0; i < R; ++i)
    v[i] = key(i);
  forget_rounds<N, R, 0>(v, key);
  uint32_t a = v[R - 3], b = v[R - 2];
  const uint32_t c = v[R - 1];
  order(a, b);
  b = b < c ? b : c;
  return a > b ? a : b;
}

/// The medians of the kOutputs windows at tile index `corner` (see select_medians) by counting
/// passes: any window the kernel takes; kLastRadius is its radius along the last axis.
template <int kLastRadius>
struct CountingSelect {
  NDCONV_HD void operator()(const MedianGrid& g, const uint32_t* tile, int corner,
                            uint32_t (&median)[kOutputs]) const {
    select_medians<kLastRadius>(g, tile, corner, median);
  }
};

/// The same by forgetful selection, output by output: for the small isotropic windows (radius
/// kRadius on each of kDims axes, at most 7 x 7 keys), where the window fits a thread's
/// registers and a few hundred min/max instructions beat several counting passes.
template <int kDims, int kRadius>
struct ForgetfulSelect {
  static constexpr int kSpan = 2 * kRadius + 1;
  static constexpr int kWindow = kDims == 2 ? kSpan * kSpan : kSpan * kSpan * kSpan;
  NDCONV_HD void operator()(const MedianGrid& g, const uint32_t* tile, int corner,
                            uint32_t (&median)[kOutputs]) const {
    const int row = g.tile[0], plane = g.tile[0] * g.tile[1];
    const int step = kDims == 2 ? row : plane;
    NDCONV_UNROLL
    for (int k = 0; k < kOutputs; ++k) {
      const uint32_t* first = tile + corner + k * step;
      auto key = [&](int i) {
        const int i0 = i % kSpan, i1 = i / kSpan % kSpan, i2 = i / (kSpan * kSpan);
        return first[i0 + i1 * row + i2 * plane];
      };
      median[k] = forgetful_median<kWindow>(key);
    }
  }
};

/// The radius of the window when a selection in registers takes it (2D radius 1-3: ForgetfulSelect;
/// 3D radius 1: the sorted columns, median_columns.h; the same on every axis), else 0
/// (CountingSelect takes it).
inline int forgetful_radius(const MedianGrid& g) {
  const int dims = g.last + 1, r = g.radius[0];
  for (int a = 1; a < dims; ++a)
    if (g.radius[a] != r)
      return 0;
  return (dims == 2 && r <= 3) || (dims == 3 && r == 1) ? r : 0;
}

/// Thread (x, y) of block `block`: selects its outputs from the staged tile (Select: one of the
/// selections above) and stores those inside the volume through store(index, value).
template <typename Select, typename Store>
NDCONV_HD void store_thread_medians(const MedianGrid& g, const int64_t* origin,
                                    const uint32_t* tile, int x, int y, Store store) {
  // The thread's first output: x along axis 0, and y along axis 1 (in 2D, y rows of outputs).
  const int64_t y_local = g.last == 1 ? int64_t{y} * kOutputs : y;
  const int64_t first[4] = {origin[0] + x, origin[1] + y_local, origin[2], origin[3]};
  NDCONV_UNROLL
  for (int a = 0; a < 4; ++a)
    if (first[a] >= g.extent[a])
      return;
  const int64_t first_last = g.last == 1 ? first[1] : g.last == 2 ? first[2] : first[3];
  const int64_t index =
      ((first[3] * g.extent[2] + first[2]) * g.extent[1] + first[1]) * g.extent[0] + first[0];
  uint32_t median[kOutputs];
  Select()(g, tile, static_cast<int>(x + y_local * g.tile[0]), median);
  const int64_t along = g.extent[g.last];
  NDCONV_UNROLL
  for (int k = 0; k < kOutputs; ++k)
    if (first_last + k < along)
      store(index + k * g.out_step, median_value(median[k]));
}

}  // namespace ndconv::cuda_median
