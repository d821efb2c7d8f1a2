// Launch shapes of the kernels (the schedule's run-time half; KO is the compile-time half): the
// shape type and the hardware's grid limits shared by every family; each family's shapes are in its
// folder. Pure host code shared by the CUDA launchers and the host-emulation tests, so both walk
// the same grid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "kernels/geometry.h"

namespace ndconv::kernels {

/// The hardware's limit on grid y and z; larger extents are covered by grid-stride loops.
inline constexpr int64_t kMaxGridYZ = 65535;
/// The hardware's limit on grid x.
inline constexpr int64_t kMaxGridX = 2147483647;

struct LaunchShape {
  int block[3] = {1, 1, 1};
  int64_t grid[3] = {1, 1, 1};
  int shared_bytes = 0;
};

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

/// The x and y tile counts of a one-pass 3D kernel whose blocks own TileX x TileY outputs of
/// every plane.
template <int TileX, int TileY>
inline void plane_tiles(const Geometry& g, int64_t tiles[2]) {
  tiles[0] = (g.out_extent[0] + TileX - 1) / TileX;
  tiles[1] = (g.out_extent[1] + TileY - 1) / TileY;
}

/// The launch of a one-pass 3D kernel whose blocks march through a chunk of output planes of one
/// x-y tile: with `resident_blocks` (the blocks the device holds at once; 0: unknown) the planes
/// are cut into as many chunks as fill the device once, each at least `min_chunk` planes (a chunk
/// reads K - 1 planes more than it emits), and into at least `least_chunks`. Sets `chunk`, the
/// output planes of a chunk.
template <int TileX, int TileY>
inline LaunchShape plane_march_launch(const Geometry& g, int threads, int shared_floats,
                                      int64_t resident_blocks, int min_chunk, int64_t least_chunks,
                                      int& chunk) {
  int64_t tiles[2];
  plane_tiles<TileX, TileY>(g, tiles);
  const int64_t nz = g.out_extent[3];
  int64_t chunks = least_chunks;
  if (resident_blocks > 0) {
    const int64_t most = std::max<int64_t>(1, nz / std::max(1, min_chunk));
    chunks = std::max(least_chunks,
                      std::clamp<int64_t>(resident_blocks / (tiles[0] * tiles[1]), 1, most));
  }
  chunk = static_cast<int>((nz + chunks - 1) / chunks);
  const int64_t counts[3] = {tiles[0], tiles[1], (nz + chunk - 1) / chunk};
  return grid_of_tiles(counts, threads, shared_floats);
}

}  // namespace ndconv::kernels
