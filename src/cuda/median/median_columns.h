// The 3 x 3 x 3 median's block: sorted y-columns in shared memory, then sorted planes
// (median_merge.h) per thread; for the GPU and the host (NDCONV_HD), so that the CI machine runs
// the very same copy and selection (tests/gpu/median_emulation_test.cpp).
//
// Why: each plane of a window is three columns of 3 keys along y, and the thread at x shares the
// column at x with the threads at x - 1 and x + 1. So the block keeps no raw input box: its
// threads read strips of voxels along y from global memory, convert each voxel to a key once and
// store the strip's columns sorted (5 min/max a column, sharing sorted pairs); a thread then sorts
// a plane from its three sorted columns with the 16 comparators that the 9-key network needs after
// sorting its triples, not 25. One shared buffer, one barrier, and every lane of the copy busy
// (the strips are one flat range, not rows of the box's width).
#pragma once

#include <cstdint>

#include "cuda/median/median_merge.h"
#include "cuda/median/median_select.h"
#include "kernels/hd.h"

namespace ndconv::cuda_median {

/// A column block's shape: kX x kY threads, each kOutputs outputs along z (the last axis).
/// Column (x, y, z), x < kWidth, y < kY, z < kPlanes, holds the input keys at (x, y .. y + 2, z)
/// of the block's input box (its output box + 1 on every side), sorted, at
/// 3 * ((z * kY + y) * kWidth + x).
template <int kX_, int kY_, int kOutputs_>
struct ColumnShape {
  static constexpr int kX = kX_, kY = kY_, kOutputs = kOutputs_;
  static constexpr int kThreads = kX * kY;
  static constexpr int kWidth = kX + 2;
  static constexpr int kPlanes = kOutputs + 2;
  static constexpr int kColumns = kWidth * kY * kPlanes;
  static constexpr int kKeys = 3 * kColumns;
};

/// The grid of a column launch (3D, radius 1 on every axis): the thread shape and the outputs
/// along z of Shape.
template <typename Shape>
MedianGrid column_grid(const int64_t* extent, int boundary, float outside) {
  const int64_t radius[3] = {1, 1, 1};
  return median_grid(3, extent, radius, boundary, outside, Shape::kX, Shape::kY, Shape::kOutputs);
}

/// Whether the column kernel's 32-bit offsets inside a block's input box hold for `extent`.
template <typename Shape>
bool column_offsets_fit(const int64_t* extent) {
  return int64_t{Shape::kPlanes} * extent[0] * extent[1] <= int64_t{0x7fffffff};
}

/// Stores the sorted column of a and the sorted pair lo <= hi (4 min/max) at `to`.
NDCONV_HD void insert_into_pair(uint32_t a, uint32_t lo, uint32_t hi, uint32_t* to) {
  const uint32_t above = a > lo ? a : lo;
  const uint32_t least = a < lo ? a : lo, middle = above < hi ? above : hi,
                 most = above > hi ? above : hi;
  to[0] = least;
  to[1] = middle;
  to[2] = most;
}

/// Thread `thread` (of Shape::kThreads) of the block at `origin`: its share of the sorted columns,
/// a strip of kY + 2 voxels along y at a time (the kY columns at one x and z: keys j .. j + 2 of
/// the strip make column j, so columns j and j + 1 share the sorted pair of keys j + 1, j + 2 and
/// each voxel is read and converted once per strip). A box inside the volume (most blocks) is read
/// at 32-bit offsets from its first voxel without mapping indices; the others map every coordinate
/// by the boundary rule (outside_key where it gives none). load(i) reads input voxel i.
template <typename Shape, typename Load>
NDCONV_HD void load_columns(const MedianGrid& g, const int64_t* origin, uint32_t* columns,
                            int thread, Load load) {
  static_assert(Shape::kY % 2 == 0, "columns in pairs that share a sorted pair");
  constexpr int kStrips = Shape::kWidth * Shape::kPlanes, kKeys = Shape::kY + 2;
  const int64_t low[3] = {origin[0] - 1, origin[1] - 1, origin[2] - 1};
  const bool interior = low[0] >= 0 && low[0] + Shape::kWidth <= g.extent[0] && low[1] >= 0 &&
                        low[1] + kKeys <= g.extent[1] && low[2] >= 0 &&
                        low[2] + Shape::kPlanes <= g.extent[2];
  const int row = static_cast<int>(g.extent[0]), rows = static_cast<int>(g.extent[1]);
  const int plane = static_cast<int>(g.extent[0] * g.extent[1]);
  const int64_t first = interior ? (low[2] * g.extent[1] + low[1]) * g.extent[0] + low[0] : 0;
  int iy[kKeys];  // the strip's rows by the boundary rule (every strip of the block has them)
  NDCONV_UNROLL
  for (int d = 0; d < kKeys; ++d)
    iy[d] = kernels::boundary_index_t<int>(static_cast<int>(low[1]) + d, rows, g.boundary);
  for (int s = thread; s < kStrips; s += Shape::kThreads) {
    const int x = s % Shape::kWidth, z = s / Shape::kWidth;
    uint32_t k[kKeys];
    if (interior) {
      const int64_t i = first + (z * plane + x);
      NDCONV_UNROLL
      for (int d = 0; d < kKeys; ++d)
        k[d] = median_key(load(i + d * row));
    } else {
      const int ix = kernels::boundary_index_t<int>(static_cast<int>(low[0]) + x, row, g.boundary);
      const int iz = kernels::boundary_index_t<int>(static_cast<int>(low[2]) + z,
                                                    static_cast<int>(g.extent[2]), g.boundary);
      NDCONV_UNROLL
      for (int d = 0; d < kKeys; ++d)
        k[d] = ix < 0 || iy[d] < 0 || iz < 0
                   ? g.outside_key
                   : median_key(load((int64_t{iz} * rows + iy[d]) * row + ix));
    }
    uint32_t* column = columns + 3 * (z * Shape::kY * Shape::kWidth + x);
    NDCONV_UNROLL
    for (int j = 0; j < Shape::kY; j += 2) {
      uint32_t lo = k[j + 1], hi = k[j + 2];
      order(lo, hi);
      insert_into_pair(k[j], lo, hi, column + 3 * j * Shape::kWidth);
      insert_into_pair(k[j + 3], lo, hi, column + 3 * (j + 1) * Shape::kWidth);
    }
  }
}

/// Thread (x, y) of the block at `origin`: the medians of its Shape::kOutputs windows along z from
/// the block's sorted columns, stored through store(index, value) where inside the volume.
template <typename Shape, typename Store>
NDCONV_HD void store_column_medians(const MedianGrid& g, const int64_t* origin,
                                    const uint32_t* columns, int x, int y, Store store) {
  const int64_t ox = origin[0] + x, oy = origin[1] + y, oz = origin[2];
  if (ox >= g.extent[0] || oy >= g.extent[1])
    return;
  const int64_t index = (oz * g.extent[1] + oy) * g.extent[0] + ox;
  const uint32_t* first = columns + 3 * (y * Shape::kWidth + x);
  auto sorted_plane = [&](int p, uint32_t(&v)[9]) {
    // Columns x, x + 1, x + 2 of plane p: 9 consecutive keys.
    NDCONV_UNROLL
    for (int i = 0; i < 9; ++i)
      v[i] = first[3 * p * Shape::kWidth * Shape::kY + i];
    sort_nine_from_triples(v);
  };
  planes_medians<Shape::kOutputs>(sorted_plane, [&](int k, uint32_t key) {
    if (oz + k < g.extent[2])
      store(index + k * g.out_step, median_value(key));
  });
}

}  // namespace ndconv::cuda_median
