// Host emulation of the fused separable kernel (kernels/separable_fused.h): walks its grid block
// by block and calls the same per-thread phases as kernels/separable_fused.cuh in the order its
// barriers impose: per block the taps; per block tile the first kStages - 1 planes; per plane p,
// every thread's load of plane p + kStages - 1, every thread's x pass of plane p, every thread's
// y/z step of plane p. Shared memory is one host buffer per block, poisoned with NaN, so a float
// read before any phase wrote it shows in the result; loading a plane into a buffer still in use
// would show too, since the next plane's load runs before the current plane's x pass.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/geometry.h"
#include "kernels/separable_fused.h"

namespace ndconv::test {

/// Runs the fused kernel with shape S, a z chunk sized for `slots` resident blocks (as the
/// launcher does with the device's SMs x blocks per SM), and grid y and z shrunk when
/// `small_grid` (for the grid-stride loops).
template <typename S>
void emulate_fused(const kernels::Geometry& g, const float* in, float* out, const float* taps,
                   int64_t slots, bool small_grid = false) {
  const kernels::FusedLayout l = kernels::fused_layout<S>(g, kernels::fused_chunk<S>(g, slots));
  int64_t counts[3];
  kernels::fused_block_counts<S>(g, l, counts);
  int64_t grid[3] = {counts[0], counts[1], counts[2]};
  if (small_grid) {
    grid[1] = (grid[1] + 1) / 2;
    grid[2] = (grid[2] + 2) / 3;
  }
  std::vector<float> shared(static_cast<size_t>(l.total_floats));
  for (int64_t bx = 0; bx < grid[0]; ++bx) {
    for (int64_t gy = 0; gy < grid[1]; ++gy) {
      for (int64_t gz = 0; gz < grid[2]; ++gz) {
        std::fill(shared.begin(), shared.end(), std::numeric_limits<float>::quiet_NaN());
        for (int tid = 0; tid < S::kThreads; ++tid)
          kernels::fused_load_taps<S>(g, l, taps, shared.data(), tid);
        for (int64_t by = gy; by < counts[1]; by += grid[1]) {
          for (int64_t bz = gz; bz < counts[2]; bz += grid[2]) {
            const kernels::TileOrigin t = kernels::fused_origin<S>(g, l, bx, by, bz);
            const int planes = kernels::fused_planes(g, l, t);
            auto load = [&](int p) {
              if (p < planes) {
                for (int tid = 0; tid < S::kThreads; ++tid)
                  kernels::fused_load_plane<S>(g, l, in, shared.data(), t, p, tid);
              }
            };
            for (int p = 0; p + 1 < S::kStages; ++p)
              load(p);
            for (int p = 0; p < planes; ++p) {
              load(p + S::kStages - 1);
              for (int tid = 0; tid < S::kThreads; ++tid)
                kernels::fused_x_pass<S>(g, l, shared.data(), p, tid);
              for (int tid = 0; tid < S::kThreads; ++tid)
                kernels::fused_yz_step<S>(g, l, shared.data(), out, t, p, tid);
            }
          }
        }
      }
    }
  }
}

}  // namespace ndconv::test
