// The register-blocked correlation (Broxvall et al., IEEE TMI 2011): each thread computes KO
// consecutive outputs along canonical axis 3 (the last axis of a dense filter, or the filtered
// axis of a separable pass) and loads the K+KO-1 input rows they share once, using every loaded
// value for all KO accumulators. KO is a template parameter so that the accumulators and the input
// window are indexed only by unrolled compile-time indices and stay in registers whatever the
// run-time filter extents.
//
// Loop order (tap-outer, sliding window): for each tap j of a tap row, one warp-uniform tap read
// feeds KO FMAs, acc[q] += t[j] * in[q + j]. The inputs in[q + j] come from a window of 2*KO
// registers that advances KO taps at a time (KO new loads per KO taps), so the compile-time
// indices q + jj cover it without any run-time register indexing. Per tap row and thread: K tap
// reads, K+KO-1 input loads and exactly K*KO FMAs: no multiplication by padding, so an Inf or NaN
// in the input only reaches the outputs whose footprint holds it. Only the last block of a tap
// row, when K is not a multiple of KO, checks (warp-uniformly) which taps exist.
//
// Arithmetic (blocked_outputs) is kept apart from the schedule (blocked_block_thread: which
// outputs a thread of a block owns). Warps whose whole footprint lies inside the input and whose
// outputs all exist take the interior path (no boundary mapping, no output checks); the decision
// is warp-uniform (a warp is 32 consecutive x of one row), so warps never diverge on it, and only
// the warps at the volume's faces take the border path.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/blocked_rows.h"
#include "kernels/geometry.h"
#include "kernels/hd.h"
#include "kernels/schedule.h"

namespace ndconv::kernels {

/// Computes outputs (o0, o1, o2, o3 + q), q < KO, and stores those that exist.
template <int KO, bool kInterior, typename Taps>
NDCONV_HD void blocked_outputs(const Geometry& g, const float* in, float* out, const Taps& taps,
                               int64_t o0, int64_t o1, int64_t o2, int64_t o3) {
  float acc[KO];
  blocked_accumulate<KO, kInterior>(g, in, taps, o0, o1, o2, o3, acc);
  blocked_store<KO, kInterior>(g, out, o0, o1, o2, o3, acc);
}

/// Threads of a warp; the blocked kernel's block_dim[0] is a multiple of it.
inline constexpr int kWarp = 32;

/// Whether every output of a group of threads exists and its whole input footprint lies inside
/// the input. `first` and `count` give the group's outputs along each canonical axis.
NDCONV_HD bool block_is_interior(const Geometry& g, const int64_t first[kAxes],
                                 const int64_t count[kAxes]) {
  NDCONV_UNROLL
  for (int a = 0; a < kAxes; ++a) {
    if (first[a] + count[a] > g.out_extent[a])
      return false;
    const int64_t lo = first[a] + g.offset[a];
    const int64_t hi = first[a] + count[a] - 1 + g.offset[a] + g.filter_extent[a] - 1;
    if (lo < 0 || hi >= g.in_extent[a])
      return false;
  }
  return true;
}

/// Launch coordinates of one thread, as plain integers (blockIdx, blockDim, threadIdx, gridDim).
struct ThreadCoord {
  int64_t block[3];
  int64_t block_dim[3];
  int64_t thread[3];
  int64_t grid_dim[3];
};

/// Chunks of KO outputs along axis 3.
NDCONV_HD int64_t blocked_chunks(const Geometry& g, int ko) {
  return (g.out_extent[3] + ko - 1) / ko;
}

/// The schedule: thread (tx, ty) of block (bx, by, bz) owns x = bx*bdx + tx, axis-1 index
/// by*bdy + ty, and the chunk bz of (axis 2 index, KO outputs along axis 3). Grid y and z are
/// capped by the hardware, so the thread loops over them with the grid's stride.
template <int KO, typename Taps>
NDCONV_HD void blocked_block_thread(const Geometry& g, const float* in, float* out,
                                    const Taps& taps, const ThreadCoord& c) {
  const int64_t chunks3 = blocked_chunks(g, KO);
  const int64_t y_blocks = (g.out_extent[1] + c.block_dim[1] - 1) / c.block_dim[1];
  const int64_t z_blocks = g.out_extent[2] * chunks3;
  const int64_t o0 = c.block[0] * c.block_dim[0] + c.thread[0];
  for (int64_t by = c.block[1]; by < y_blocks; by += c.grid_dim[1]) {
    const int64_t o1 = by * c.block_dim[1] + c.thread[1];
    for (int64_t bz = c.block[2]; bz < z_blocks; bz += c.grid_dim[2]) {
      const int64_t o2 = bz / chunks3;
      const int64_t o3 = (bz % chunks3) * KO;
      // The warp's outputs: 32 consecutive x (block_dim[0] is a multiple of 32), one of axis 1.
      const int64_t first[kAxes] = {o0 - c.thread[0] % kWarp, o1, o2, o3};
      const int64_t count[kAxes] = {kWarp, 1, 1, KO};
      if (block_is_interior(g, first, count)) {
        blocked_outputs<KO, true>(g, in, out, taps, o0, o1, o2, o3);
      } else if (o0 < g.out_extent[0] && o1 < g.out_extent[1]) {
        blocked_outputs<KO, false>(g, in, out, taps, o0, o1, o2, o3);
      }
    }
  }
}

/// Threads per block of the blocked kernel (the occupancy queries use this figure).
inline constexpr int kBlockedThreads = 128;

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

}  // namespace ndconv::kernels
