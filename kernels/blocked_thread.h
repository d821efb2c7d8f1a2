// The register-blocked correlation (Broxvall et al., IEEE TMI 2011): each thread computes KO
// consecutive outputs along canonical axis 3 (the last axis of a dense filter, or the filtered
// axis of a separable pass) and walks the K+KO-1 input rows they share once, using every loaded
// value for all KO accumulators. KO is a template parameter so that acc[KO] is indexed only by
// unrolled compile-time indices and stays in registers whatever the run-time filter extents.
//
// The taps along axis 3 are padded with KO-1 zeros on each side (see Geometry), so input row r
// feeds output q through tap r - q without a range check: the hot loop is branch free, at the cost
// of KO*(KO-1) multiplications by zero per tap row (the KO rule counts them).
//
// Arithmetic (blocked_outputs) is kept apart from the schedule (blocked_block_thread: which
// outputs a thread of a block owns). Blocks whose whole footprint lies inside the input and whose
// outputs all exist take the interior path (no boundary mapping, no output checks); the decision
// is warp-uniform (a warp is 32 consecutive x of one row), so warps never diverge on it, and only
// the warps at the volume's faces take the border path.
#pragma once

#include "kernels/geometry.h"
#include "kernels/hd.h"

namespace ndconv::kernels {

/// Computes outputs (o0, o1, o2, o3 + q), q < KO, and stores those that exist. `taps(i)` returns
/// tap i of the padded layout (constant, global or host memory).
template <int KO, bool kInterior, typename Taps>
NDCONV_HD void blocked_outputs(const Geometry& g, const float* in, float* out, const Taps& taps,
                               int64_t o0, int64_t o1, int64_t o2, int64_t o3) {
  float acc[KO];
  NDCONV_UNROLL
  for (int q = 0; q < KO; ++q)
    acc[q] = 0.0f;

  const int rows = g.filter_extent[3] + KO - 1;
  const int64_t start3 = o3 + g.offset[3];
  int tap_row = g.tap_base + g.tap_pad;  // tap j of the current row sits at tap_row + j
  for (int j2 = 0; j2 < g.filter_extent[2]; ++j2) {
    const int64_t i2 = kInterior
                           ? o2 + g.offset[2] + j2
                           : boundary_index_hd(o2 + g.offset[2] + j2, g.in_extent[2], g.boundary);
    for (int j1 = 0; j1 < g.filter_extent[1]; ++j1) {
      const int64_t i1 = kInterior
                             ? o1 + g.offset[1] + j1
                             : boundary_index_hd(o1 + g.offset[1] + j1, g.in_extent[1], g.boundary);
      for (int j0 = 0; j0 < g.filter_extent[0]; ++j0, tap_row += g.tap_pitch) {
        const int64_t i0 =
            kInterior ? o0 + g.offset[0] + j0
                      : boundary_index_hd(o0 + g.offset[0] + j0, g.in_extent[0], g.boundary);
        if (!kInterior && (i0 < 0 || i1 < 0 || i2 < 0))
          continue;  // a zero-boundary row contributes nothing
        const float* line = in + i0 * g.in_stride[0] + i1 * g.in_stride[1] + i2 * g.in_stride[2];
        if (kInterior) {
          const float* p = line + start3 * g.in_stride[3];
          for (int r = 0; r < rows; ++r, p += g.in_stride[3]) {
            const float v = *p;
            NDCONV_UNROLL
            for (int q = 0; q < KO; ++q)
              acc[q] = fmaf(taps(tap_row + r - q), v, acc[q]);
          }
        } else {
          for (int r = 0; r < rows; ++r) {
            const int64_t i3 = boundary_index_hd(start3 + r, g.in_extent[3], g.boundary);
            const float v = i3 < 0 ? 0.0f : line[i3 * g.in_stride[3]];
            NDCONV_UNROLL
            for (int q = 0; q < KO; ++q)
              acc[q] = fmaf(taps(tap_row + r - q), v, acc[q]);
          }
        }
      }
    }
  }

  float* dst = out + o0 * g.out_stride[0] + o1 * g.out_stride[1] + o2 * g.out_stride[2] +
               o3 * g.out_stride[3];
  NDCONV_UNROLL
  for (int q = 0; q < KO; ++q) {
    if (kInterior || o3 + q < g.out_extent[3])
      dst[q * g.out_stride[3]] = acc[q];
  }
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

}  // namespace ndconv::kernels
