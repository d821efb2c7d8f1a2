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

}  // namespace ndconv::kernels
