// The x pass of a separable filter: a coalesced shared-memory row tile. A block of T threads owns
// T consecutive outputs of one row (canonical axes 1..3 fixed); it first loads the T+K-1 input
// values they need (boundary applied) into shared memory, coalesced, then each thread correlates
// its window from shared memory. Register blocking along x would break coalescing, so this pass
// takes its reuse from shared memory instead. Load and compute are separate functions so that the
// host tests walk the same two phases (all threads load, barrier, all threads compute).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/schedule.h"

namespace ndconv::kernels {

/// Shared-memory floats a tile of `threads` outputs needs for a filter of extent k along x.
NDCONV_HD int row_tile_floats(int threads, int k) {
  return threads + k - 1;
}

/// Rows of the x pass: every combination of canonical axes 1..3.
NDCONV_HD int64_t row_count(const Geometry& g) {
  return g.out_extent[1] * g.out_extent[2] * g.out_extent[3];
}

/// Offsets of row `row` in the input and the output.
NDCONV_HD void row_offsets(const Geometry& g, int64_t row, int64_t& in_offset,
                           int64_t& out_offset) {
  const int64_t i1 = row % g.out_extent[1];
  const int64_t rest = row / g.out_extent[1];
  const int64_t i2 = rest % g.out_extent[2];
  const int64_t i3 = rest / g.out_extent[2];
  in_offset = i1 * g.in_stride[1] + i2 * g.in_stride[2] + i3 * g.in_stride[3];
  out_offset = i1 * g.out_stride[1] + i2 * g.out_stride[2] + i3 * g.out_stride[3];
}

/// Load phase: thread `tid` of `threads` fills its share of the tile for outputs x0..x0+threads-1.
NDCONV_HD void row_tile_load(const Geometry& g, const float* in_row, float* tile, int64_t x0,
                             int tid, int threads) {
  const int n = row_tile_floats(threads, g.filter_extent[0]);
  for (int i = tid; i < n; i += threads) {
    const int64_t ix = boundary_index_hd(x0 + g.offset[0] + i, g.in_extent[0], g.boundary);
    tile[i] = ix < 0 ? 0.0f : in_row[ix * g.in_stride[0]];
  }
}

/// Compute phase: thread `tid` writes output x0 + tid of the row, if it exists.
template <typename Taps>
NDCONV_HD void row_tile_compute(const Geometry& g, const float* tile, float* out_row,
                                const Taps& taps, int64_t x0, int tid) {
  const int64_t x = x0 + tid;
  if (x >= g.out_extent[0])
    return;
  float acc = 0.0f;
  const float* window = tile + tid;
  for (int j = 0; j < g.filter_extent[0]; ++j)
    acc = fmaf(taps(g.tap_base + j), window[j], acc);
  out_row[x * g.out_stride[0]] = acc;
}

/// Threads per block (outputs per tile) of the x-row kernel.
inline constexpr int kRowThreads = 256;

/// x-row kernel: one tile of kRowThreads outputs per block, rows along grid y.
inline LaunchShape row_shape(const Geometry& g) {
  LaunchShape s;
  s.block[0] = kRowThreads;
  s.grid[0] = (g.out_extent[0] + kRowThreads - 1) / kRowThreads;
  s.grid[1] = std::min<int64_t>(kMaxGridYZ, row_count(g));
  s.shared_bytes =
      static_cast<int>(sizeof(float)) * row_tile_floats(kRowThreads, g.filter_extent[0]);
  return s;
}

}  // namespace ndconv::kernels
