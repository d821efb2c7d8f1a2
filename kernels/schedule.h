// Launch shapes of the kernels (the schedule's run-time half; KO is the compile-time half). Pure
// host code shared by the CUDA launcher and the host-emulation tests, so both walk the same grid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "kernels/blocked_thread.h"
#include "kernels/column_thread.h"
#include "kernels/geometry.h"
#include "kernels/row_tile.h"
#include "kernels/tiled_thread.h"

namespace ndconv::kernels {

/// Threads per block of the blocked kernel (the occupancy queries use this figure).
inline constexpr int kBlockedThreads = 128;
/// Threads per block (outputs per tile) of the x-row kernel.
inline constexpr int kRowThreads = 256;
/// The hardware's limit on grid y and z; larger extents are covered by grid-stride loops.
inline constexpr int64_t kMaxGridYZ = 65535;
/// The hardware's limit on grid x.
inline constexpr int64_t kMaxGridX = 2147483647;

struct LaunchShape {
  int block[3] = {1, 1, 1};
  int64_t grid[3] = {1, 1, 1};
  int shared_bytes = 0;
};

/// Blocked kernel: a warp-multiple run of threads along x (the largest power of two up to the
/// whole block that x fills; axis 1 takes the rest), KO outputs per thread along axis 3.
inline LaunchShape blocked_shape(const Geometry& g, int ko) {
  LaunchShape s;
  int bx = kWarp;
  while (bx * 2 <= kBlockedThreads && bx * 2 <= g.out_extent[0])
    bx *= 2;
  s.block[0] = bx;
  s.block[1] = kBlockedThreads / bx;
  s.grid[0] = (g.out_extent[0] + bx - 1) / bx;
  s.grid[1] = std::min<int64_t>(kMaxGridYZ, (g.out_extent[1] + s.block[1] - 1) / s.block[1]);
  s.grid[2] = std::min<int64_t>(kMaxGridYZ, g.out_extent[2] * blocked_chunks(g, ko));
  return s;
}

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

/// A grid of `counts` block tiles (x tiles, axis-1 tiles, axis-2 x axis-3 tiles) of `threads`
/// threads: grid y and z capped at kMaxGridYZ, the rest covered by the kernels' grid-stride loops.
inline LaunchShape grid_of_tiles(const int64_t counts[3], int threads, int shared_floats) {
  LaunchShape s;
  s.block[0] = threads;
  s.grid[0] = counts[0];
  s.grid[1] = std::min<int64_t>(kMaxGridYZ, counts[1]);
  s.grid[2] = std::min<int64_t>(kMaxGridYZ, counts[2]);
  s.shared_bytes = static_cast<int>(sizeof(float)) * shared_floats;
  return s;
}

/// Tiled kernel: one block of S::kThreads threads per tile of S::kTileX x S::BY x S::KO outputs,
/// the tiles in tiled_origin's order on grid x (blocks walk tiles blockIdx.x + k * gridDim.x, so
/// the launcher may shrink the grid to the blocks the device holds: tiled_resident_grid); dynamic
/// shared memory for the taps and two input planes (and a halo, tiled_add_halo).
template <typename S>
LaunchShape tiled_launch_shape(const Geometry& g) {
  LaunchShape s;
  s.block[0] = S::kThreads;
  s.grid[0] = std::min<int64_t>(tiled_tile_count<S>(g), kMaxGridX);
  s.shared_bytes = static_cast<int>(sizeof(float)) * tiled_layout<S>(g).total_floats;
  return s;
}

/// The lead-tap shape's kernels with row code fixed for one filter width (TiledRowsFixed: lead
/// taps, taps in the last block of 8, blocks of 8 per tap row), for the odd widths 3, 5, ..., 15
/// of the same region, whose lead taps are (K0 - 1) / 2 mod 4 (tiled_lead); other widths take the
/// shape's kernel for every width. A width fixed at compile time unrolls the row loop completely
/// (no loop counters, taps at constant offsets), which pays most for short filters.
using TiledLeadShape = TiledShape<8, 4, 4, 32, true>;
using TiledFixedRowsList =
    std::tuple<TiledRowsFixed<3, 6, 1>, TiledRowsFixed<2, 7, 1>, TiledRowsFixed<1, 8, 1>,
               TiledRowsFixed<0, 1, 2>, TiledRowsFixed<3, 6, 2>, TiledRowsFixed<2, 7, 2>,
               TiledRowsFixed<1, 8, 2>>;

/// A tiled launch's grid where `resident_blocks` blocks fit on the device at once: at most that
/// many, each walking several tiles (0: one block per tile, up to the grid's limit).
inline void tiled_resident_grid(LaunchShape& s, int64_t resident_blocks) {
  if (resident_blocks > 0)
    s.grid[0] = std::min(s.grid[0], resident_blocks);
}

/// Column kernel: blocks of S::kWarps warps over tiles of 128 x S::kWarps x S::KO outputs, tiles
/// along x on grid x, axis 1 on grid y, (axis 2, KO chunk) on grid z; dynamic shared memory for
/// the taps and, staged or fused, the tiles and the warps' staging buffers. With
/// `resident_blocks` (the blocks the device holds at once; 0: unknown) grid z and then grid y
/// shrink until the grid is about that many blocks, so that each block walks several tiles
/// (column_next_tile) and loads the next while it filters one.
template <typename S>
LaunchShape column_launch_shape(const Geometry& g, const ColumnLayout& l,
                                int64_t resident_blocks = 0) {
  int64_t counts[3];
  column_block_counts<S>(g, counts);
  LaunchShape s = grid_of_tiles(counts, S::kThreads, l.total_floats);
  if (resident_blocks > 0) {
    const int64_t per_x = std::max<int64_t>(1, resident_blocks / s.grid[0]);
    // The fused form walks each column's tiles in order, to take over the rows they share
    // (ColumnLayout::reuse_rows): one block along z.
    s.grid[2] = l.reuse_rows > 0 ? 1 : std::min(s.grid[2], per_x);
    s.grid[1] = std::min(s.grid[1], std::max<int64_t>(1, per_x / s.grid[2]));
  }
  return s;
}

}  // namespace ndconv::kernels
